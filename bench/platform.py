"""The whole platform as `make run` starts it, for a benchmark: every port a free one, the
data in a scratch directory (removed when the benchmark's process exits), the components
started in order and stopped in reverse, and API keys of the account "demo"."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.scratch import scratch_dir
from testkit.ports import free_port
from tools import launch

SERVICES = ("gateway", "agent_memory", "thread_memory", "journal", "search")
PORTS = ("JOURNAL_PORT", "AGENT_MEMORY_PORT", "THREAD_MEMORY_PORT", "SEARCH_PORT",
         "GATEWAY_PORT", "GATEWAY_HTTP_PORT", "AGENTMEMORY_POSTGRES_PORT",
         "AGENTMEMORY_REDIS_PORT")


@dataclass
class Platform:
    data_dir: Path
    ports: dict[str, str]
    components: list[launch.Component]

    @property
    def env(self) -> dict[str, str]:
        """What the services run with (the gateway's environment names every address)."""
        return self.components[-1].env

    @property
    def addresses(self) -> dict[str, str]:
        return {c.name: c.address for c in self.components}

    @property
    def pids(self) -> dict[str, int]:
        return {c.name: c.pid for c in self.components}

    def admin_key(self) -> str:
        return launch.ensure_demo_key(self.data_dir, self.env).read_text().strip()

    def create_key(self, role: str) -> str:
        """A key of the account "demo" that may act for users (the benchmarks state them)."""
        created = subprocess.run(
            [sys.executable, "-m", "services.gateway.admin", "create-key", "--account", "demo",
             "--name", f"bench-{role}", "--role", role, "--act-for-users"], cwd=launch.ROOT,
            env=self.env, capture_output=True, text=True, check=True)
        return created.stdout.strip()


@contextlib.contextmanager
def running(prefix: str, *, metrics: bool = False,
            before_start: Callable[[launch.Component], None] | None = None
            ) -> Iterator[Platform]:
    """The platform, its data under a scratch directory named ``prefix``...; with
    ``metrics``, each service's /metrics on a free port too (else none);
    ``before_start`` is called with each component before it starts (data to load
    before a service opens its store)."""
    data_dir = scratch_dir(prefix)
    ports = {name: str(free_port()) for name in PORTS}
    metrics_ports = {f"{name.upper()}_METRICS_PORT": str(free_port()) if metrics else "0"
                     for name in SERVICES}
    os.environ.update(ports | metrics_ports | {"LOG_LEVEL": "WARNING"})
    components = launch.components(data_dir)
    started = []
    try:
        for component in components:
            if before_start is not None:
                before_start(component)
            started.append(component)
            component.start()
        yield Platform(data_dir, ports | metrics_ports, components)
    finally:
        for component in reversed(started):
            component.stop()
