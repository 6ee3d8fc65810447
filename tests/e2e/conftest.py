"""The whole platform as `make run` starts it: five service processes on the embedded stack."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

import grpc
import pytest
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.gateway.v1 import gateway_service_pb2 as gateway_pb
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from agentmemory.gateway.v1 import memory_library_service_pb2_grpc as library_grpc
from google.protobuf import field_mask_pb2

from tests.support.ports import free_port
from tools import launch

BOUND_AGENT = "concierge"  # Memory is bound to it (an agent setting); to no other agent


@dataclass
class Platform:
    gateway: str
    env: dict[str, str]
    keys: dict[str, str]

    def create_key(self, account: str, role: str = "admin") -> str:
        done = subprocess.run([sys.executable, "-m", "services.gateway.admin", "create-key",
                               "--account", account, "--role", role], cwd=launch.ROOT,
                              env=self.env, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    def bind_memory(self, account: str, agent: str, bound: bool = True) -> None:
        """The authorized settings call (admin key) that binds Memory to an agent."""
        with grpc.insecure_channel(self.gateway) as channel:
            library_grpc.MemoryLibraryServiceStub(channel).UpdateAgentSettings(
                library_pb.UpdateAgentSettingsRequest(
                    caller=gateway_pb.Caller(agent_id=agent),
                    settings=memory_pb.AgentSettings(memory_bound=bound),
                    update_mask=field_mask_pb2.FieldMask(paths=["memory_bound"])),
                metadata=(("authorization", f"Bearer {self.keys[account]}"),), timeout=30)


@pytest.fixture(scope="session")
def platform(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("platform")
    ports = {name: str(free_port()) for name in
             ("JOURNAL_PORT", "AGENT_MEMORY_PORT", "THREAD_MEMORY_PORT", "SEARCH_PORT",
              "GATEWAY_PORT", "AGENTMEMORY_POSTGRES_PORT", "AGENTMEMORY_REDIS_PORT")}
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
        platform = Platform(gateway.address, gateway.env, {})
        platform.keys = {account: platform.create_key(account) for account in ("acme", "globex")}
        for account in ("acme", "globex"):
            platform.bind_memory(account, BOUND_AGENT)
        yield platform
    finally:
        for component in reversed(started):
            component.stop()
