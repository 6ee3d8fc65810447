"""``make run``: the whole platform on the embedded defaults, in the foreground, supervised.

Starts the embedded backends (PostgreSQL and Valkey from their wheels), then every
service as its own process, each once the one before it is ready (a backend answers,
a service reports SERVING on the standard health service), and prints the addresses.

Then it supervises. A component that exits, backend or service, is restarted after
a backoff (1 s, then 2, 4, 8 ... at most 30 s), with a line saying what died, how,
which restart this is and when it comes; another line says when it is back. Restarts
count while a component has not yet stayed up for a minute; the one that would
exceed ``AGENTMEMORY_RESTART_LIMIT`` (5) instead makes the launcher give up: it says
so, stops everything and exits with status 1. Ctrl-C or SIGTERM stops everything in
reverse order, each service with SIGTERM and its own graceful shutdown.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from libs.healthcheck import is_serving
from services.agent_memory.settings import AgentMemoryConfig
from services.gateway.settings import GatewayConfig
from services.journal.settings import JournalConfig
from services.search.settings import SearchConfig
from services.thread_memory.settings import ThreadMemoryConfig
from tools.backends.postgres import EmbeddedPostgres
from tools.backends.redis import EmbeddedRedis

ROOT = Path(__file__).resolve().parent.parent
READY_TIMEOUT_SECONDS = 90.0
STOP_TIMEOUT_SECONDS = 20.0
FIRST_RESTART_DELAY_SECONDS = 1.0
MAX_RESTART_DELAY_SECONDS = 30.0
STABLE_AFTER_SECONDS = 60.0  # up this long, a component's restart count starts again
POLL_SECONDS = 0.3


def say(message: str) -> None:
    print(f"launch: {message}", file=sys.stderr, flush=True)


def describe_exit(status: int) -> str:
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exited with status {status}"


class StartupFailed(RuntimeError):
    """A component did not come up the first time (a setup problem, not a crash)."""


def wait_until_ready(component: Component, abort: Callable[[], bool] = lambda: False) -> None:
    """Wait until ``component`` is ready, or ``abort()`` says to stop waiting."""
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while not abort() and not component.ready():
        status = component.exit_status()
        if status is not None:
            raise StartupFailed(f"{component.name} {describe_exit(status)}")
        if time.monotonic() > deadline:
            raise StartupFailed(f"{component.name} not ready after {READY_TIMEOUT_SECONDS:.0f} s")
        time.sleep(0.2)


@dataclass
class Service:
    name: str
    address: str
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def start(self) -> None:
        self.spawn()
        wait_until_ready(self)

    def spawn(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", f"services.{self.name}"], cwd=ROOT, env=self.env,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )

    def ready(self) -> bool:
        return is_serving(self.address)

    def exit_status(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            say(f"{self.name} did not stop in {STOP_TIMEOUT_SECONDS:.0f} s; killing it")
            self.process.kill()
            self.process.wait()


@dataclass
class Backend:
    name: str
    server: EmbeddedPostgres | EmbeddedRedis

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    @property
    def pid(self) -> int | None:
        return self.server.process.pid if self.server.process else None

    def start(self) -> None:
        self.spawn()
        wait_until_ready(self)

    def spawn(self) -> None:
        self.server.spawn()

    def ready(self) -> bool:
        return self.server.ready()

    def exit_status(self) -> int | None:
        return self.server.exit_status()

    def stop(self) -> None:
        self.server.stop()


Component = Service | Backend


class GaveUp(Exception):
    """A component kept dying; the launcher stops everything."""


@dataclass
class Supervised:
    """One component and where it stands: running, waiting to restart, or restarting."""

    component: Component
    restarts: int = 0
    up_since: float = 0.0
    restart_at: float | None = None  # waiting for the backoff to pass
    ready_by: float | None = None  # restarted, not ready yet


@dataclass
class Supervisor:
    restart_limit: int
    members: list[Supervised] = field(default_factory=list)
    stopping: bool = False

    def start(self, component: Component) -> None:
        """Start ``component`` and wait until it is ready (or stopping was asked)."""
        member = Supervised(component)
        self.members.append(member)
        component.spawn()
        wait_until_ready(component, abort=lambda: self.stopping)
        member.up_since = time.monotonic()

    def watch(self) -> None:
        """Keep every component running until stopping is asked; raises GaveUp."""
        while not self.stopping:
            for member in self.members:
                self._check(member, time.monotonic())
            time.sleep(POLL_SECONDS)

    def stop(self) -> None:
        for member in reversed(self.members):
            member.component.stop()

    def _check(self, member: Supervised, now: float) -> None:
        component = member.component
        if member.restart_at is not None:
            if now >= member.restart_at:
                member.restart_at = None
                try:
                    component.spawn()
                except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
                    self._failed(member, f"could not be started ({exc})", now)
                    return
                member.ready_by = now + READY_TIMEOUT_SECONDS
            return
        status = component.exit_status()
        if status is not None:
            self._failed(member, f"(pid {component.pid}) died: {describe_exit(status)}", now)
        elif member.ready_by is not None:
            if component.ready():
                member.ready_by, member.up_since = None, now
                say(f"{component.name} is back on {component.address} "
                    f"(pid {component.pid}, restart {member.restarts})")
            elif now > member.ready_by:
                component.stop()
                self._failed(member, f"was not ready within {READY_TIMEOUT_SECONDS:.0f} s", now)
        elif member.restarts and now - member.up_since >= STABLE_AFTER_SECONDS:
            member.restarts = 0

    def _failed(self, member: Supervised, what: str, now: float) -> None:
        name = member.component.name
        if member.restarts >= self.restart_limit:
            raise GaveUp(f"{name} {what}; giving up after {member.restarts} restarts in a row, "
                         "stopping everything")
        member.restarts += 1
        delay = min(FIRST_RESTART_DELAY_SECONDS * 2 ** (member.restarts - 1), MAX_RESTART_DELAY_SECONDS)
        member.restart_at = now + delay
        say(f"{name} {what}; restart {member.restarts} of {self.restart_limit} in {delay:.0f} s")


def _client_host(host: str) -> str:
    return "localhost" if host in ("0.0.0.0", "::", "[::]", "") else host


def components(data_dir: Path) -> list[Component]:
    postgres = EmbeddedPostgres(data_dir / "postgres",
                                int(os.environ.get("AGENTMEMORY_POSTGRES_PORT", "55432")))
    redis = EmbeddedRedis(data_dir / "redis", int(os.environ.get("AGENTMEMORY_REDIS_PORT", "56379")))
    env = {
        "JOURNAL_LOCAL_PATH": str(data_dir / "journal"),
        "AGENT_MEMORY_POSTGRES_DSN": postgres.dsn,
        "AGENT_MEMORY_INDEX_PATH": str(data_dir / "qdrant"),
        "THREAD_MEMORY_REDIS_URL": redis.url,
        "THREAD_MEMORY_LOCAL_PATH": str(data_dir / "summaries"),
        "SEARCH_CHDB_PATH": str(data_dir / "clickhouse"),
        **os.environ,
    }
    journal = JournalConfig.from_env(env).server
    agent_memory = AgentMemoryConfig.from_env(env).server
    thread_memory = ThreadMemoryConfig.from_env(env).server
    search = SearchConfig.from_env(env).server
    gateway = GatewayConfig.from_env(env).server
    addresses = {name: f"{_client_host(s.host)}:{s.port}" for name, s in (
        ("journal", journal), ("agent_memory", agent_memory), ("thread_memory", thread_memory),
        ("search", search), ("gateway", gateway))}
    env.setdefault("GATEWAY_POSTGRES_DSN", postgres.dsn)
    for name in ("journal", "agent_memory", "thread_memory", "search"):
        env.setdefault(f"GATEWAY_{name.upper()}_ADDRESS", addresses[name])
    env.setdefault("THREAD_MEMORY_JOURNAL_ADDRESS", addresses["journal"])
    env.setdefault("SEARCH_JOURNAL_ADDRESS", addresses["journal"])
    env.setdefault("THREAD_MEMORY_AGENT_MEMORY_ADDRESS", addresses["agent_memory"])
    env.setdefault("AGENT_MEMORY_JOURNAL_ADDRESS", addresses["journal"])
    return [
        Backend("postgres", postgres),
        Backend("redis", redis),
        *(Service(name, addresses[name], env) for name in (
            "journal", "agent_memory", "thread_memory", "search", "gateway")),
    ]


def ensure_demo_key(data_dir: Path, env: dict[str, str]) -> Path:
    """Create an API key for the account "demo" on first start; keep it in a file."""
    path = data_dir / "demo-api-key"
    if not path.exists():
        created = subprocess.run(
            [sys.executable, "-m", "services.gateway.admin", "create-key", "--account", "demo",
             "--name", "make-run", "--role", "admin", "--act-for-users"], cwd=ROOT, env=env,
            capture_output=True, text=True, check=True)
        path.write_text(created.stdout.strip() + "\n")
        path.chmod(0o600)
    return path


def announce(data_dir: Path, running: list[Component], restart_limit: int) -> None:
    gateway = running[-1]
    key_file = ensure_demo_key(data_dir, gateway.env)
    print(f"\nagent memory platform is up (data in {data_dir}):")
    for component in running:
        print(f"  {component.name:<14} {component.address:<21} pid {component.pid}")
    config = GatewayConfig.from_env(gateway.env)
    base = f"http://{_client_host(config.server.host)}:{config.http.port}"
    print(f"  {'gateway http':<14} {base} (MCP {base}/mcp, REST {base}/v1, {base}/openapi.json)")
    print(f"\nAPI key of the account \"demo\": in {key_file}")
    print(f"A component that exits is restarted (at most {restart_limit} times in a row).")
    print(f"try: grpcurl -plaintext {gateway.address} list\nCtrl-C stops everything.\n",
          flush=True)


def main() -> int:
    data_dir = Path(os.environ.get("AGENTMEMORY_DATA_DIR", ROOT / "data")).resolve()
    supervisor = Supervisor(restart_limit=int(os.environ.get("AGENTMEMORY_RESTART_LIMIT", "5")))

    def request_stop(signum, frame):
        supervisor.stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    status = 0
    try:
        everything = components(data_dir)
        for component in everything:
            if supervisor.stopping:
                break
            supervisor.start(component)
        if not supervisor.stopping:
            announce(data_dir, everything, supervisor.restart_limit)
        supervisor.watch()
    except GaveUp as exc:
        say(str(exc))
        status = 1
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        say(f"start-up failed: {exc}")
        status = 1
    finally:
        supervisor.stop()
        print("stopped.", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
