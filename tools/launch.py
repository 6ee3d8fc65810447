"""``make run``: the whole platform on the embedded defaults, in the foreground.

Starts the embedded backends (PostgreSQL and Valkey from their wheels), then every service
as its own process, waits until each reports SERVING on the standard health
service, prints the addresses, and on Ctrl-C (or SIGTERM) stops everything in
reverse order, each service with SIGTERM and its own graceful shutdown. If any
service dies, the rest are stopped and the exit status is 1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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


@dataclass
class Service:
    name: str
    address: str
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", f"services.{self.name}"], cwd=ROOT, env=self.env,
            start_new_session=True,
        )
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.process.returncode}")
            if is_serving(self.address):
                return
            time.sleep(0.2)
        raise RuntimeError(f"{self.name} not serving after {READY_TIMEOUT_SECONDS:.0f}s")

    def died(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            print(f"{self.name} did not stop in time; killing it", file=sys.stderr)
            self.process.kill()
            self.process.wait()


@dataclass
class Backend:
    name: str
    server: EmbeddedPostgres | EmbeddedRedis

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    def start(self) -> None:
        self.server.start()

    def died(self) -> bool:
        return False

    def stop(self) -> None:
        self.server.stop()


def _client_host(host: str) -> str:
    return "localhost" if host in ("0.0.0.0", "::", "[::]", "") else host


def components(data_dir: Path) -> list[Service | Backend]:
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
             "--name", "make-run", "--role", "admin"], cwd=ROOT, env=env, capture_output=True,
            text=True, check=True)
        path.write_text(created.stdout.strip() + "\n")
        path.chmod(0o600)
    return path


def announce(data_dir: Path, running: list[Service | Backend]) -> None:
    gateway = running[-1]
    key_file = ensure_demo_key(data_dir, gateway.env)
    print(f"\nagent memory platform is up (data in {data_dir}):")
    for component in running:
        print(f"  {component.name:<14} {component.address}")
    print(f"\nAPI key of the account \"demo\": in {key_file}")
    print(f"try: grpcurl -plaintext {gateway.address} list\nCtrl-C stops everything.\n",
          flush=True)


def main() -> int:
    data_dir = Path(os.environ.get("AGENTMEMORY_DATA_DIR", ROOT / "data")).resolve()
    running: list[Service | Backend] = []
    stopping = False

    def request_stop(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    status = 0
    try:
        for component in components(data_dir):
            if stopping:
                break
            running.append(component)
            component.start()
        if not stopping:
            announce(data_dir, running)
        while not stopping:
            dead = [c for c in running if c.died()]
            if dead:
                print(f"{dead[0].name} exited unexpectedly; stopping", file=sys.stderr)
                status = 1
                break
            time.sleep(0.3)
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        print(f"start-up failed: {exc}", file=sys.stderr)
        status = 1
    finally:
        for component in reversed(running):
            component.stop()
        print("stopped.", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
