"""The soak (issue 9): the whole platform as `make run` starts it, under a steady mixed
load for ``--minutes`` (30), to tell a leak from growth by design.

Eight clients (``--clients``), each its own user of one agent with Memory bound,
each making the six calls in turn, through the gateway:

- ``append``: AppendMessages, a user and an assistant message; after 40 messages
  the conversation is over and the client's next one starts in a new thread (so
  threads, messages and the search corpus keep growing, as in production);
- ``build``: BuildContext of the client's thread;
- ``store``: the ``memory_store`` tool, 100 keys per user; from the 101st store on,
  a key is stored again with a new fact (memories level off, versions grow);
- ``recall``: the ``memory_recall`` tool, a fact-like query;
- ``retrieve``: RetrieveContext for the thread (one run id per thread);
- ``search``: the ``journal_message_search`` tool (hybrid, summaries), all threads.

Each minute it prints one JSON line: calls/s and p50/p99 per kind and over all,
failed calls, each process's RSS and RssAnon in MiB (PostgreSQL: the Pss of all
its processes), its CPU milliseconds per call over the minute (the 2 shared
cores make wall-clock rates noisy; CPU per call is the steadier figure), the
search projection's lags, and with ``--heap DIR`` each service's Python heap as
tracemalloc counts it (``libs/heap_snapshots.py``; tracemalloc slows the
services, so figures of such a run are not comparable with a plain one). At the
end: tables of the minutes, PostgreSQL's tables (rows, sequential scans and the
rows they read during the load: a growing table read without an index), the
ClickHouse parts of the search tables (opened once the platform has stopped),
and with ``--heap`` the lines whose allocations grew most from the second
snapshot to the last, per service. ``--profile DIR`` records each service with
py-spy through the second minute and the last (collapsed stacks in DIR) and
prints, per service, the functions whose share of its samples changed most.

    python -m bench.soak [--minutes 30] [--short] [--clients 8] [--heap DIR]
        [--profile DIR]

``--short`` is a try-out: three minutes of 20 seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import subprocess
import sys
import time
import tracemalloc
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import grpc
import uvloop
from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from agentmemory.gateway.v1 import retrieval_service_pb2 as retrieval_pb
from agentmemory.gateway.v1 import retrieval_service_pb2_grpc as retrieval_grpc
from agentmemory.search.v1 import search_service_pb2 as search_pb
from agentmemory.search.v1 import search_service_pb2_grpc as search_grpc
from google.protobuf import struct_pb2

from bench import platform
from bench.everyday_memories import statements
from bench.gateway_bench import cpu_seconds, percentile
from bench.platform import SERVICES
from bench.search_bench import sentence
from libs import clients
from libs.memory_names import CATEGORIES
from testkit.platform import bind_memory

AGENT = "soak-agent"
KINDS = ("append", "build", "store", "recall", "retrieve", "search")
MESSAGES_PER_THREAD = 40
KEYS_PER_USER = 100
FACTS = [text for _, text in statements()]


def caller(n: int) -> pb.Caller:
    return pb.Caller(agent_id=AGENT, user_id=f"user{n}", surface=principal_pb2.SURFACE_AGENT)


def arguments(values: dict) -> struct_pb2.Struct:
    packed = struct_pb2.Struct()
    packed.update(values)
    return packed


@dataclass
class Client:
    """One simulated agent user: its conversation so far and its calls."""

    n: int
    gateway: pb_grpc.GatewayServiceStub
    retrieval: retrieval_grpc.RetrievalServiceStub
    metadata: tuple
    rng: random.Random
    messages: int = 0
    stores: int = 0
    thread: str = ""  # the thread of the latest append (the other calls' thread)

    def call(self, kind: str):
        return getattr(self, kind)()

    def append(self):
        first = self.messages
        self.thread = f"c{self.n}-t{first // MESSAGES_PER_THREAD}"
        self.messages += 2
        return self.gateway.AppendMessages(pb.AppendMessagesRequest(
            caller=caller(self.n), thread_id=self.thread, messages=[
                message_pb2.Message(id=f"m{first}", role=message_pb2.ROLE_USER,
                                    content=sentence(self.rng)),
                message_pb2.Message(id=f"m{first + 1}", role=message_pb2.ROLE_ASSISTANT,
                                    content=self.rng.choice(FACTS))]),
            metadata=self.metadata)

    def build(self):
        return self.gateway.BuildContext(pb.BuildContextRequest(
            caller=caller(self.n), thread_id=self.thread), metadata=self.metadata)

    def _tool(self, name: str, values: dict):
        return self.gateway.CallTool(pb.CallToolRequest(
            caller=caller(self.n), thread_id=self.thread, tool_name=name,
            arguments=arguments(values)), metadata=self.metadata)

    def store(self):
        self.stores += 1
        return self._tool("memory_store", {
            "key": f"fact_{self.stores % KEYS_PER_USER}", "content": self.rng.choice(FACTS),
            "category": self.rng.choice(list(CATEGORIES)), "importance": 0.5})

    def recall(self):
        return self._tool("memory_recall", {"query": self.rng.choice(FACTS)})

    def retrieve(self):
        return self.retrieval.RetrieveContext(retrieval_pb.RetrieveContextRequest(
            caller=caller(self.n), run_id=f"run-{self.thread}", thread_id=self.thread,
            semantic_query=self.rng.choice(FACTS)), metadata=self.metadata)

    def search(self):
        return self._tool("journal_message_search", {"query": sentence(self.rng)[19:60]})


@dataclass
class Minute:
    """What the clients saw during one interval."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    failures: dict[str, int] = field(default_factory=lambda: defaultdict(int))


@dataclass
class Load:
    clients: list[Client]
    minute: Minute = field(default_factory=Minute)
    first_failure: dict[str, str] = field(default_factory=dict)
    stopping: bool = False

    async def run(self, client: Client) -> None:
        for kind in itertools.cycle(KINDS):
            if self.stopping:
                return
            started = time.perf_counter()
            try:
                await client.call(kind)
            except grpc.aio.AioRpcError as error:
                self.minute.failures[kind] += 1
                self.first_failure.setdefault(kind, f"{error.code().name}: {error.details()}")
                continue
            self.minute.latencies[kind].append(time.perf_counter() - started)

    def take(self) -> Minute:
        done, self.minute = self.minute, Minute()
        return done


# -- what each process holds --------------------------------------------------

def _status_kib(pid: int, name: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1])
    return 0


def _tree(root: int) -> list[int]:
    children = Path(f"/proc/{root}/task/{root}/children")
    kids = [int(p) for p in children.read_text().split()] if children.exists() else []
    return [root] + [p for kid in kids for p in _tree(kid)]


def _pss_kib(pid: int) -> tuple[int, int]:
    values = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, _, rest = line.partition(":")
        values[key] = int(rest.split()[0])
    return values.get("Pss", 0), values.get("Pss_Anon", 0)


def memory_mib(roots: dict[str, int]) -> dict[str, tuple[float, float]]:
    """(RSS, RssAnon) MiB of each process; PostgreSQL's as the Pss of its processes
    (shared buffers counted once)."""
    held = {}
    for name, pid in roots.items():
        try:
            if name == "postgres":
                pss = [_pss_kib(p) for p in _tree(pid)]
                held[name] = (sum(p for p, _ in pss) / 1024, sum(a for _, a in pss) / 1024)
            else:
                held[name] = (_status_kib(pid, "VmRSS") / 1024, _status_kib(pid, "RssAnon") / 1024)
        except (OSError, ValueError):
            held[name] = (0.0, 0.0)
    return held


def python_heap_mib(heap_dir: Path | None, pids: dict[str, int]) -> dict[str, float]:
    """Each service's Python heap at its latest snapshot (tracemalloc), MiB."""
    if heap_dir is None:
        return {}
    heap = {}
    for name in SERVICES:
        latest = sorted(heap_dir.glob(f"{name}-{pids[name]}-*.json"))
        if latest:
            heap[name] = round(json.loads(latest[-1].read_text())["traced_bytes"] / 2**20, 1)
    return heap


# -- the platform's stores ------------------------------------------------------

TABLE_STATS = """SELECT schemaname || '.' || relname AS name, n_live_tup,
    n_tup_ins + n_tup_upd + n_tup_del AS written, seq_scan, seq_tup_read,
    COALESCE(idx_scan, 0) AS idx_scan, pg_total_relation_size(relid) AS bytes
    FROM pg_stat_user_tables"""
TABLE_DELTAS = ("written", "seq_scan", "seq_tup_read", "idx_scan")


async def table_stats(dsn: str) -> dict[str, dict]:
    connection = await asyncpg.connect(dsn)
    try:
        return {row["name"]: dict(row) for row in await connection.fetch(TABLE_STATS)}
    finally:
        await connection.close()


def print_table_growth(before: dict[str, dict], after: dict[str, dict]) -> None:
    """The tables the load wrote to or scanned, most rows read sequentially first."""
    print("\nPostgreSQL tables during the load (rows now; rows written, sequential scans, "
          "the rows they read, index scans during the load; size now):")
    print(f"  {'table':<34} {'rows':>8} {'written':>8} {'seq scans':>10} {'seq rows read':>14} "
          f"{'idx scans':>10} {'MiB':>7}")
    rows = []
    for name, now in after.items():
        was = before.get(name, dict.fromkeys(TABLE_DELTAS, 0))
        delta = {k: now[k] - was[k] for k in TABLE_DELTAS}
        if any(delta.values()):
            rows.append((delta["seq_tup_read"], delta["written"], name, now, delta))
    for *_, name, now, delta in sorted(rows, reverse=True, key=lambda r: r[:2]):
        print(f"  {name:<34} {now['n_live_tup']:>8} {delta['written']:>8} {delta['seq_scan']:>10} "
              f"{delta['seq_tup_read']:>14} {delta['idx_scan']:>10} {now['bytes'] / 2**20:>7.1f}")


def print_clickhouse_parts(path: Path) -> None:
    """Active parts per table of the search service's chDB, once the service has stopped."""
    from chdb import session

    chdb = session.Session(str(path))
    try:
        found = chdb.query(
            "SELECT database || '.' || table AS t, count() AS parts, sum(rows) AS rows"
            " FROM system.parts WHERE active AND database NOT IN ('system')"
            " GROUP BY t ORDER BY parts DESC", "JSON")
        print("\nClickHouse (search) active parts at the end:")
        for row in json.loads(str(found))["data"]:
            print(f"  {row['t']:<42} {row['parts']:>6} parts {int(row['rows']):>9} rows")
    finally:
        chdb.close()


def print_heap_growth(heap_dir: Path, pids: dict[str, int], top: int = 12) -> None:
    """Per service: the source lines whose live allocations grew most, second snapshot to
    last (the first is taken before the service has loaded everything)."""
    for name in SERVICES:
        snapshots = sorted(heap_dir.glob(f"{name}-{pids[name]}-*.snapshot"))
        if len(snapshots) < 3:
            continue
        first, last = (tracemalloc.Snapshot.load(str(p)) for p in (snapshots[1], snapshots[-1]))
        print(f"\n{name}: Python heap growth, {snapshots[1].stem} -> {snapshots[-1].stem}")
        for stat in last.compare_to(first, "lineno")[:top]:
            frame = stat.traceback[0]
            print(f"  {stat.size_diff / 2**20:+8.2f} MiB {stat.count_diff:+9d} blocks  "
                  f"{stat.size / 2**20:7.2f} MiB now  {frame.filename}:{frame.lineno}")


# -- where the services' time goes ------------------------------------------------

def record_profiles(directory: Path, pids: dict[str, int], label: str,
                    seconds: float) -> list[subprocess.Popen]:
    """py-spy on every service for ``seconds`` (it samples from outside: no pause)."""
    directory.mkdir(parents=True, exist_ok=True)
    return [subprocess.Popen(
        [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(pids[name]),
         "--duration", str(int(seconds)), "--rate", "50", "--format", "raw", "--nonblocking",
         "--output", str(directory / f"{label}-{name}.txt")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for name in SERVICES]


def _shares(path: Path) -> dict[str, float]:
    """Each function's share of the samples it is on the stack of (inclusive)."""
    counts: dict[str, int] = defaultdict(int)
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        total += int(count)
        for frame in set(stack.split(";")):
            counts[frame] += int(count)
    return {frame: n / total for frame, n in counts.items()} if total else {}


def print_profile_changes(directory: Path, top: int = 8) -> None:
    for name in SERVICES:
        first, last = directory / f"first-{name}.txt", directory / f"last-{name}.txt"
        if not (first.exists() and last.exists()):
            continue
        before, after = _shares(first), _shares(last)
        changed = sorted(set(before) | set(after),
                         key=lambda f: -abs(after.get(f, 0) - before.get(f, 0)))
        print(f"\n{name}: share of samples, second minute -> last minute")
        for frame in changed[:top]:
            print(f"  {before.get(frame, 0):6.1%} -> {after.get(frame, 0):6.1%}  {frame[:110]}")


# -- the report ---------------------------------------------------------------

def summarize(minute: Minute, seconds: float) -> dict:
    every = [s for samples in minute.latencies.values() for s in samples]
    kinds = {kind: {"per_second": round(len(s) / seconds, 2),
                    "p50_ms": round(percentile(s, 0.5), 1),
                    "p99_ms": round(percentile(s, 0.99), 1)}
             for kind in KINDS if (s := minute.latencies.get(kind))}
    return {"calls": len(every), "per_second": round(len(every) / seconds, 2),
            "p50_ms": round(percentile(every, 0.5), 1) if every else None,
            "p99_ms": round(percentile(every, 0.99), 1) if every else None,
            "kinds": kinds, "failed": dict(minute.failures)}


def print_tables(rows: list[dict]) -> None:
    processes = list(rows[0]["rss_mib"])
    print("\nminute  calls/s   p50 ms   p99 ms  " + "  ".join(f"{k:>8}" for k in KINDS)
          + "   (calls/s per kind)")
    for row in rows:
        kinds = row["kinds"]
        print(f"{row['minute']:>6} {row['per_second']:>8} {row['p50_ms']:>8} {row['p99_ms']:>8}  "
              + "  ".join(f"{kinds.get(k, {}).get('per_second', 0):>8}" for k in KINDS))
    print("\nminute  p99 ms per kind: " + "  ".join(f"{k:>8}" for k in KINDS))
    for row in rows:
        print(f"{row['minute']:>6}                   "
              + "  ".join(f"{row['kinds'].get(k, {}).get('p99_ms', 0):>8}" for k in KINDS))
    for title, key in (("RSS MiB", "rss_mib"), ("RssAnon MiB", "anon_mib"),
                       ("CPU ms per call", "cpu_ms_per_call"),
                       ("Python heap MiB (tracemalloc)", "python_heap_mib")):
        if not rows[-1].get(key):
            continue
        names = [p for p in processes if p in rows[-1][key]]
        print(f"\nminute  {title}: " + " ".join(f"{p[:13]:>13}" for p in names))
        for row in rows:
            print(f"{row['minute']:>6}  " + " " * (len(title) + 2)
                  + " ".join(f"{row[key].get(p, 0):>13}" for p in names))


def minute_row(number: int, minute: Minute, interval: float, roots: dict[str, int],
               cpu: tuple[dict, dict], heap_dir: Path | None,
               projection: search_pb.DescribeProjectionResponse) -> dict:
    """The figures of one minute (``cpu``: each process's CPU seconds before and after)."""
    row = {"minute": number, **summarize(minute, interval)}
    held = memory_mib(roots)
    before, after = cpu
    row["rss_mib"] = {p: round(rss, 1) for p, (rss, _) in held.items()}
    row["anon_mib"] = {p: round(anon, 1) for p, (_, anon) in held.items()}
    row["cpu_ms_per_call"] = {p: round((after[p] - before[p]) * 1000 / max(row["calls"], 1), 2)
                              for p in roots}
    row["python_heap_mib"] = python_heap_mib(heap_dir, {p: roots[p] for p in SERVICES})
    row["projection_lag"], row["embedding_lag"] = projection.lag, projection.embedding_lag
    row["load"] = round(os.getloadavg()[0], 2)
    return row


async def soak(minutes: int, interval: float, client_count: int, heap_dir: Path | None,
               profile_dir: Path | None) -> None:
    if heap_dir is not None:
        os.environ.update({"HEAP_SNAPSHOT_DIR": str(heap_dir),
                           "HEAP_SNAPSHOT_SECONDS": str(interval)})
    rows: list[dict] = []
    with platform.running("soak-") as running:
        bind_memory(running.addresses["gateway"], running.admin_key(), AGENT)
        metadata = (("authorization", f"Bearer {running.create_key('agent')}"),)
        pids = running.pids
        roots = pids | {"bench client": os.getpid()}
        dsn = running.env["GATEWAY_POSTGRES_DSN"]
        async with (clients.channel(running.addresses["gateway"], default_timeout=60) as gateway,
                    clients.channel(running.addresses["search"], default_timeout=30) as search):
            load = Load([Client(n, pb_grpc.GatewayServiceStub(gateway),
                                retrieval_grpc.RetrievalServiceStub(gateway), metadata,
                                random.Random(n)) for n in range(client_count)])
            projection = search_grpc.SearchServiceStub(search)
            tables_before = await table_stats(dsn)
            workers = [asyncio.create_task(load.run(c)) for c in load.clients]
            cpu_before = cpu_seconds(roots)
            profiling: list[subprocess.Popen] = []
            for number in range(1, minutes + 1):
                if profile_dir is not None and number in (2, minutes):
                    profiling += record_profiles(profile_dir, pids,
                                                 "first" if number == 2 else "last", interval)
                await asyncio.sleep(interval)
                minute, cpu_after = load.take(), cpu_seconds(roots)
                lag = await projection.DescribeProjection(search_pb.DescribeProjectionRequest())
                rows.append(minute_row(number, minute, interval, roots, (cpu_before, cpu_after),
                                       heap_dir, lag))
                cpu_before = cpu_after
                print(json.dumps(rows[-1]), flush=True)
            load.stopping = True
            await asyncio.gather(*workers)
            for recorder in profiling:
                recorder.wait()
            tables_after = await table_stats(dsn)
        threads = sum(-(-c.messages // MESSAGES_PER_THREAD) for c in load.clients)
        print(f"\n{client_count} clients, {threads} threads, "
              f"{sum(c.messages for c in load.clients)} messages appended")
        for kind, failure in load.first_failure.items():
            print(f"first failure of {kind}: {failure}")
    print_tables(rows)
    print_table_growth(tables_before, tables_after)
    print_clickhouse_parts(running.data_dir / "clickhouse")
    if heap_dir is not None:
        print_heap_growth(heap_dir, pids)
    if profile_dir is not None:
        print_profile_changes(profile_dir)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=int, default=30)
    parser.add_argument("--short", action="store_true",
                        help="a try-out: three minutes of 20 seconds")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--heap", type=Path,
                        help="trace the services' Python heaps; write their snapshots here")
    parser.add_argument("--profile", type=Path,
                        help="py-spy the services in the second and the last minute, into here")
    options = parser.parse_args()
    minutes, interval = (3, 20.0) if options.short else (options.minutes, 60.0)
    uvloop.run(soak(minutes, interval, options.clients,
                    options.heap and options.heap.resolve(),
                    options.profile and options.profile.resolve()))
