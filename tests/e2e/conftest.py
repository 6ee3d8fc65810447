"""The whole platform as `make run` starts it: five service processes on the embedded stack."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from tests.support.ports import free_port
from tools import launch

SERVICES = ("journal", "agent_memory", "thread_memory", "search", "gateway")


@dataclass
class Platform:
    gateway: str
    env: dict[str, str]
    keys: dict[str, str]
    #: service name -> gRPC address, and -> port of its /metrics endpoint
    addresses: dict[str, str] = field(default_factory=dict)
    metrics_ports: dict[str, int] = field(default_factory=dict)

    def create_key(self, account: str) -> str:
        done = subprocess.run([sys.executable, "-m", "services.gateway.admin", "create-key",
                               "--account", account], cwd=launch.ROOT, env=self.env,
                              capture_output=True, text=True, check=True)
        return done.stdout.strip()


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("platform")
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
        platform = Platform(gateway.address, gateway.env, {},
                            {c.name: c.address for c in components if c.name in SERVICES},
                            {name: int(ports[f"{name.upper()}_METRICS_PORT"])
                             for name in SERVICES})
        platform.keys = {account: platform.create_key(account) for account in ("acme", "globex")}
        yield platform
    finally:
        for component in reversed(started):
            component.stop()
