"""Every surface (gRPC, REST, MCP, the generated clients) against the shared platform
(tests/conftest.py), with Memory bound to the agents these tests call."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
AGENTS = ("concierge", "rest-agent", "tenant-check", "deleter", "rest-deleter", "forgetful",
          "shared-name", "no-user-agent", "with-user", "same", "node-mcp", "example-node",
          "example-ruby", "searcher")


@pytest.fixture(scope="session", autouse=True)
def memory_bound(platform):
    for account in ("acme", "globex"):
        for agent in AGENTS:
            platform.bind_memory(account, agent)


@pytest.fixture(scope="session")
def client_toolchains() -> None:
    """Ruby's gRPC from Debian and clients/node/node_modules (`npm ci`), installed if missing."""
    done = subprocess.run([str(ROOT / "tools" / "ensure_client_toolchains.sh")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
