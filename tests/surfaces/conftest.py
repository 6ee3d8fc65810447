"""The whole platform as `make run` starts it, with the gateway's HTTP listener, for
every test of the surfaces (gRPC, REST, MCP, the generated clients)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.ports import free_port
from tools import launch

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Platform:
    grpc: str  # host:port
    http: str  # base URL
    env: dict[str, str]
    keys: dict[str, str]

    def create_key(self, account: str) -> str:
        done = subprocess.run([sys.executable, "-m", "services.gateway.admin", "create-key",
                               "--account", account], cwd=launch.ROOT, env=self.env,
                              capture_output=True, text=True, check=True)
        return done.stdout.strip()


@pytest.fixture(scope="package")
def platform(tmp_path_factory) -> Iterator[Platform]:
    data_dir = tmp_path_factory.mktemp("surfaces")
    ports = {name: str(free_port()) for name in
             ("JOURNAL_PORT", "AGENT_MEMORY_PORT", "THREAD_MEMORY_PORT", "SEARCH_PORT",
              "GATEWAY_PORT", "GATEWAY_HTTP_PORT", "AGENTMEMORY_POSTGRES_PORT",
              "AGENTMEMORY_REDIS_PORT")}
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
        platform = Platform(gateway.address, f"http://127.0.0.1:{ports['GATEWAY_HTTP_PORT']}",
                            gateway.env, {})
        platform.keys = {account: platform.create_key(account) for account in ("acme", "globex")}
        yield platform
    finally:
        for component in reversed(started):
            component.stop()


@pytest.fixture(scope="session")
def client_toolchains() -> None:
    """Ruby's gRPC from Debian and clients/node/node_modules (`npm ci`), installed if missing."""
    done = subprocess.run([str(ROOT / "tools" / "ensure_client_toolchains.sh")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
