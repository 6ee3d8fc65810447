"""The whole platform as `make run` starts it (five service processes on the embedded
stack, the gateway's HTTP listener included), for the tests that go through the gateway."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.gateway.v1 import gateway_service_pb2 as gateway_pb
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from agentmemory.gateway.v1 import memory_library_service_pb2_grpc as library_grpc
from google.protobuf import field_mask_pb2

from testkit.ports import free_port
from tools import launch

SERVICES = ("journal", "agent_memory", "thread_memory", "search", "gateway")
ACCOUNTS = ("acme", "globex")


@dataclass
class Platform:
    gateway: str  # the gateway's gRPC host:port
    http: str  # the base URL of its HTTP listener
    env: dict[str, str]
    keys: dict[str, str] = field(default_factory=dict)  # account -> an admin API key
    #: service name -> gRPC address, and -> port of its /metrics endpoint
    addresses: dict[str, str] = field(default_factory=dict)
    metrics_ports: dict[str, int] = field(default_factory=dict)
    #: service name -> its process (tests that stop and start one, or copy its settings)
    services: dict[str, launch.Service] = field(default_factory=dict)

    @property
    def grpc(self) -> str:
        return self.gateway

    def create_key(self, account: str, role: str = "admin", *, act_for_users: bool = True,
                   user: str = "", agents: tuple[str, ...] = ()) -> str:
        """A key made by the operator's command line; by default a service key that may
        act for users (what most tests state callers with)."""
        command = [sys.executable, "-m", "services.gateway.admin", "create-key",
                   "--account", account, "--role", role]
        command += ["--act-for-users"] * act_for_users
        command += ["--user", user] * bool(user)
        for agent in agents:
            command += ["--agent", agent]
        done = subprocess.run(command, cwd=launch.ROOT, env=self.env, capture_output=True,
                              text=True, check=True)
        return done.stdout.strip()

    def key(self, account: str) -> str:
        """An admin key of ``account``, created on first use (a test's own account)."""
        if account not in self.keys:
            self.keys[account] = self.create_key(account)
        return self.keys[account]

    def bind_memory(self, account: str, agent: str, bound: bool = True) -> None:
        bind_memory(self.gateway, self.key(account), agent, bound)


def bind_memory(gateway: str, admin_key: str, agent: str, bound: bool = True) -> None:
    """The authorized settings call (an admin key) that binds Memory to an agent."""
    update_agent_settings(gateway, admin_key, agent, memory_pb.AgentSettings(memory_bound=bound),
                          ["memory_bound"])


def update_agent_settings(gateway: str, admin_key: str, agent: str,
                          settings: memory_pb.AgentSettings, paths: list[str]) -> None:
    with grpc.insecure_channel(gateway) as channel:
        library_grpc.MemoryLibraryServiceStub(channel).UpdateAgentSettings(
            library_pb.UpdateAgentSettingsRequest(
                caller=gateway_pb.Caller(agent_id=agent), settings=settings,
                update_mask=field_mask_pb2.FieldMask(paths=paths)),
            metadata=(("authorization", f"Bearer {admin_key}"),), timeout=30)


@contextlib.contextmanager
def another_gateway(platform: Platform, **env: str) -> Iterator[launch.Service]:
    """A second gateway replica of the running platform, ``env`` over the first's settings."""
    settings = dict(platform.services["gateway"].env)
    port = free_port()
    settings.update(GATEWAY_PORT=str(port), GATEWAY_HTTP_PORT=str(free_port()),
                    GATEWAY_METRICS_PORT="0", **env)
    replica = launch.Service("gateway", f"127.0.0.1:{port}", settings)
    replica.start()
    try:
        yield replica
    finally:
        replica.stop()


@contextlib.contextmanager
def running_platform(data_dir: Path) -> Iterator[Platform]:
    ports = {name: str(free_port()) for name in
             ("JOURNAL_PORT", "AGENT_MEMORY_PORT", "THREAD_MEMORY_PORT", "SEARCH_PORT",
              "GATEWAY_PORT", "GATEWAY_HTTP_PORT", "AGENTMEMORY_POSTGRES_PORT",
              "AGENTMEMORY_REDIS_PORT", *(f"{name.upper()}_METRICS_PORT" for name in SERVICES))}
    saved = dict(os.environ)
    os.environ.update(ports | {"LOG_LEVEL": "WARNING"})
    try:
        components = launch.components(data_dir)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    started = []
    try:
        for component in components:
            started.append(component)
            component.start()
        gateway = components[-1]
        platform = Platform(
            gateway.address, f"http://127.0.0.1:{ports['GATEWAY_HTTP_PORT']}", gateway.env,
            addresses={c.name: c.address for c in components if c.name in SERVICES},
            metrics_ports={name: int(ports[f"{name.upper()}_METRICS_PORT"]) for name in SERVICES},
            services={c.name: c for c in components if c.name in SERVICES})
        for account in ACCOUNTS:
            platform.key(account)
        yield platform
    finally:
        for component in reversed(started):
            component.stop()
