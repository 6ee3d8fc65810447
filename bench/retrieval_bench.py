"""RetrieveContext latency over gRPC, against agent memory running as its own process.

p50/p99 of RetrieveContext (deterministic mode, query embedding included, the
receipt and usage counters written; ``--rerank-pools`` adds assisted mode with the
local cross-encoder reranking each pool size) with 1k, 10k and 100k memories in one
account, all visible to the caller. Embedded stack: PostgreSQL from its
wheel, the in-process Qdrant engine, the local embedding model. Target: p50
<= 40 ms at 100k.

Loading 100k memories through AddMemory would spend most of an hour
embedding on the CPU, so they are written straight into PostgreSQL (with
their entities, as the projector extracts them) and the index: the first
1,000 texts are embedded for real, the rest reuse those vectors with a
little noise. Then VACUUM ANALYZE, the state autovacuum keeps a live database
in. The path measured is the real one.

The calls cycle through eight queries. Agent memory keeps the vectors of
recent queries (EMBEDDINGS_CACHE_SIZE), so after the first round every query
is a cache hit; each size is therefore measured twice: with the cache (what a
repeated query costs) and without it (EMBEDDINGS_CACHE_SIZE=0: every call
embeds its query).

``--baseline DIR`` measures another checkout of the code too (for instance
``git archive <commit> | tar -x -C DIR``) on an identical copy of the data (a
database made from the same template, a copy of the index), interleaving the
two in rounds so that both see the same load from the rest of the machine.
``--data-dir`` keeps the loaded data for the next run. Agent memory builds the
index's HNSW graphs itself (AGENT_MEMORY_INDEX_OPTIMIZE_AFTER_CHANGES): at
start-up it finds the bulk-loaded collections outside their graphs and builds
them in the background; measurements start once its
``agent_memory.index.optimizations_pending`` gauge is back to 0 (the time that
took is printed). A checkout that has no such gauge (``--baseline`` of an
earlier release) is not waited for. ``--hnsw`` builds the graphs in this
process after loading instead.

Per variant and size: p50, p99, CPU per call of the agent-memory process and
of PostgreSQL, and the median stage timings of the calls that ask for
``explain`` (every tenth); the machine's load averages while it ran.

    python -m bench.retrieval_bench [--sizes 1000,10000,100000] [--calls 200]
        [--rounds 4] [--baseline DIR] [--data-dir DIR] [--hnsw] [--rerank-pools 10,20]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import numpy
import uvloop
from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from agentmemory.agent_memory.v1 import retrieval_pb2_grpc as pb_grpc
from agentmemory.common.v1 import principal_pb2

from bench.scratch import scratch_dir
from libs import clients, migrations
from libs.embeddings import LocalEmbedder
from libs.healthcheck import is_serving
from services.agent_memory import index as vector_index
from services.agent_memory.index import sparse
from services.agent_memory.index.edge import EdgeIndex
from services.agent_memory.memories import entities
from testkit.ports import free_port
from tools.backends.postgres import EmbeddedPostgres

ROOT = Path(__file__).resolve().parent.parent
AGENT = "helper"
PEOPLE = [f"{first} {last}" for first in ("Ana", "Bruno", "Chen", "Dara", "Emeka", "Farah",
                                          "Goran", "Hana", "Ines", "Jonas")
          for last in ("Lopes", "Okafor", "Nakamura", "Schmidt", "Haddad")]
PROJECTS = ["Zephyr", "Atlas", "Borealis", "Cobalt", "Dynamo", "Ember", "Fjord", "Granite",
            "Helios", "Iris", "Juniper", "Krypton"]
TOPICS = ["invoice numbering", "deploy windows", "database migrations", "on-call rotation",
          "API rate limits", "backup retention", "feature flags", "release notes",
          "load testing", "cost reports", "access reviews", "the staging cluster",
          "error budgets", "log retention", "SSO login", "the billing export"]
VERBS = ["decided on", "asked about", "documented", "complained about", "reviewed",
         "changed", "prefers a new approach to", "scheduled work on", "fixed a bug in"]
KINDS = ["project_fact", "decision", "preference", "observation", "instruction", "correction"]
QUERIES = ["how are invoice numbers generated", "who changed the deploy windows",
           "what did Ana Lopes decide about backups", "rate limits of the Zephyr API",
           "problems with database migrations in Atlas", "on-call rotation preferences",
           "what happened with SSO login", "cost reports for Borealis last quarter"]
TEMPLATE = "bench_template"


def text(i: int) -> str:
    rng = random.Random(i)
    owner = rng.choice(PEOPLE).split()[0].lower()
    return (f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(TOPICS)} for project "
            f"{rng.choice(PROJECTS)} (note {i}); follow-up owner @{owner}.")


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


async def bulk_load(dsn: str, index: EdgeIndex, embedder: LocalEmbedder, account: str,
                    count: int, base_vectors: list[list[float]], agent: str = AGENT) -> None:
    start = datetime.now(UTC) - timedelta(days=365)
    rng = numpy.random.default_rng(count)
    name = vector_index.collection_name(account, "default", embedder.name)
    await index.ensure_collection(name, embedder.dimensions)
    rows, found, points = [], [], []
    for i in range(count):
        content, memory_id = text(i), uuid.uuid4()
        kind = KINDS[i % len(KINDS)]
        created = start + timedelta(seconds=i * 300)
        rows.append((memory_id, account, "default", "agent", agent, "", f"note-{i}", content,
                     hashlib.sha256(content.encode()).hexdigest(), kind, 0.3 + (i % 7) / 10,
                     "agent", created, created))
        found += [(account, "default", memory_id, e.norm, e.name, e.kind)
                  for e in entities.extract(content)]
        vector = numpy.asarray(base_vectors[i % len(base_vectors)])
        if i >= len(base_vectors):
            vector = vector + rng.normal(0, 0.01, vector.shape)
            vector = vector / numpy.linalg.norm(vector)
        points.append(vector_index.IndexPoint(
            memory_id, vector.tolist(), sparse.document_vector(f"note {i}: {content}"),
            vector_index.payload(scope="agent", agent_id=agent, owner_user_id="", kind=kind,
                                 expires_at=None)))
        if len(points) == 1000:
            await index.upsert(name, points)
            points = []
    if points:
        await index.upsert(name, points)
    connection = await asyncpg.connect(dsn)
    try:
        await connection.copy_records_to_table(
            "memory_entries", records=rows,
            columns=["id", "account_id", "environment", "scope", "agent_id", "owner_user_id",
                     "key", "content", "content_hash", "kind", "importance", "source_kind",
                     "created_at", "updated_at"])
        await connection.copy_records_to_table(
            "memory_entities", records=found,
            columns=["account_id", "environment", "memory_id", "norm", "name", "kind"])
    finally:
        await connection.close()


def dsn_of(postgres: EmbeddedPostgres, database: str) -> str:
    return postgres.dsn.rsplit("/", 1)[0] + f"/{database}"


async def load_template(postgres: EmbeddedPostgres, index_dir: Path, sizes: list[int],
                        migrations_dir: Path, hnsw: bool) -> None:
    """The template database (the memories, migrated to ``migrations_dir``) and the index."""
    admin = await asyncpg.connect(postgres.dsn)
    try:
        await admin.execute(f"CREATE DATABASE {TEMPLATE}")
    finally:
        await admin.close()
    await load_memories(dsn_of(postgres, TEMPLATE), index_dir,
                        {f"bench-{size}": size for size in sizes}, migrations_dir, hnsw=hnsw)


async def load_memories(dsn: str, index_dir: Path, accounts: dict[str, int],
                        migrations_dir: Path, *, hnsw: bool, agent: str = AGENT) -> None:
    """Agent memory's database at ``dsn`` migrated to ``migrations_dir``, and ``agent``'s
    memories in each account (account -> how many) written into it and the index."""
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
    try:
        await migrations.apply(pool, "agent_memory", migrations_dir)
    finally:
        await pool.close()
    embedder = LocalEmbedder()
    base = await embedder.embed_documents(
        [text(i) for i in range(min(1000, max(accounts.values())))])
    index = EdgeIndex(index_dir)
    for account, count in accounts.items():
        await bulk_load(dsn, index, embedder, account, count, base, agent)
    await index.close()
    await embedder.close()
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute("VACUUM ANALYZE")
    finally:
        await connection.close()
    if hnsw:
        build_hnsw(index_dir)


def build_hnsw(index_dir: Path) -> None:
    import qdrant_edge

    for path in sorted(index_dir.iterdir()):
        started = time.monotonic()
        shard = qdrant_edge.EdgeShard.load(str(path))
        shard.optimize()
        shard.close()
        print(f"HNSW of {path.name} built in {time.monotonic() - started:.0f} s", flush=True)


@dataclass
class Variant:
    """One agent-memory process under measurement: a checkout, its settings, its data."""

    label: str
    root: Path
    env: dict[str, str]
    database: str
    index_dir: Path
    assisted: bool = False  # assisted mode, no utility model: the local cross-encoder reranks
    port: int = 0
    metrics_port: int = 0
    process: subprocess.Popen | None = None
    latencies: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    stages: dict[int, dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    cpu: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    pg_cpu: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))


async def copy_data(postgres: EmbeddedPostgres, master: Path, variants: list[Variant]) -> None:
    """Each variant gets its own copy of the data: a database made from the template and
    a copy of the index (two processes may not open one index folder)."""
    admin = await asyncpg.connect(postgres.dsn)
    try:
        for variant in variants:
            await admin.execute(f"DROP DATABASE IF EXISTS {variant.database}")
            await admin.execute(f"CREATE DATABASE {variant.database} TEMPLATE {TEMPLATE}")
            shutil.rmtree(variant.index_dir, ignore_errors=True)
            shutil.copytree(master, variant.index_dir)
    finally:
        await admin.close()


async def settle(postgres: EmbeddedPostgres, quiet_seconds: float = 3.0,
                 longest: float = 300.0) -> None:
    """Wait until PostgreSQL has had nothing to do for a few seconds: each service's
    start-up work (migrations, a first hygiene pass over the old memories) would
    otherwise land in the first measurements."""
    admin = await asyncpg.connect(postgres.dsn)
    try:
        quiet_since, deadline = time.monotonic(), time.monotonic() + longest
        while time.monotonic() < deadline:
            busy = await admin.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE state <> 'idle'"
                " AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
            if busy:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since >= quiet_seconds:
                return
            await asyncio.sleep(0.2)
    finally:
        await admin.close()


def optimizations_pending(variant: Variant) -> int | None:
    """The variant's gauge of index shards waiting for their HNSW graphs (None: it has none)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{variant.metrics_port}/metrics",
                                timeout=5) as reply:
        for line in reply.read().decode().splitlines():
            if line.startswith("agent_memory_index_optimizations_pending"):
                return int(float(line.rsplit(" ", 1)[1]))
    return None


async def wait_for_graphs(variants: list[Variant], longest: float = 3600.0) -> None:
    """Wait until no variant has an index shard left to optimize."""
    started = time.monotonic()
    waiting = list(variants)
    while waiting and time.monotonic() - started < longest:
        pending = [await asyncio.to_thread(optimizations_pending, v) for v in waiting]
        waiting = [v for v, n in zip(waiting, pending, strict=True) if n]
        if waiting:
            await asyncio.sleep(1)
    if waiting:
        raise SystemExit("the index optimizations did not finish")
    print(f"HNSW graphs built by the services in {time.monotonic() - started:.0f} s"
          " (all variants at once)", flush=True)


def process_cpu(pids: list[int]) -> float:
    """User + system CPU seconds of these processes (and their threads) so far."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def postgres_pids(postgres: EmbeddedPostgres) -> list[int]:
    """The server and its backends (children of the postmaster)."""
    root = postgres.process.pid
    children = Path(f"/proc/{root}/task/{root}/children").read_text().split()
    return [root, *map(int, children)]


async def start(variant: Variant, postgres: EmbeddedPostgres) -> None:
    variant.port, variant.metrics_port = free_port(), free_port()
    paths = f"{variant.root}{os.pathsep}{variant.root / 'gen' / 'python'}"
    env = {**os.environ, **variant.env, "PYTHONPATH": paths,
           "AGENT_MEMORY_PORT": str(variant.port),
           "AGENT_MEMORY_POSTGRES_DSN": dsn_of(postgres, variant.database),
           "AGENT_MEMORY_INDEX_PATH": str(variant.index_dir), "LOG_LEVEL": "ERROR",
           "AGENT_MEMORY_METRICS_PORT": str(variant.metrics_port)}
    variant.process = subprocess.Popen(  # noqa: ASYNC220 - started once, before measuring
        [sys.executable, "-m", "services.agent_memory"], cwd=variant.root, env=env)
    while not is_serving(f"127.0.0.1:{variant.port}"):
        if variant.process.poll() is not None:
            raise SystemExit(f"agent memory ({variant.label}) failed to start")
        await asyncio.sleep(0.2)


async def measure(variant: Variant, stub, postgres: EmbeddedPostgres, size: int, calls: int,
                  first: int) -> None:
    principal = principal_pb2.Principal(account_id=f"bench-{size}", agent_id=AGENT)
    pg = postgres_pids(postgres)
    cpu, pg_cpu = process_cpu([variant.process.pid]), process_cpu(pg)
    for i in range(first, first + calls):
        request = pb.RetrieveContextRequest(
            principal=principal, run_id=f"run-{i}", semantic_query=QUERIES[i % len(QUERIES)],
            explain=i % 10 == 0,
            mode=pb.RETRIEVAL_MODE_ASSISTED if variant.assisted else pb.RETRIEVAL_MODE_DETERMINISTIC)
        started = time.perf_counter()
        reply = await stub.RetrieveContext(request)
        variant.latencies[size].append(time.perf_counter() - started)
        if request.explain:
            for stage, ms in reply.diagnostics.stage_timings_ms.items():
                variant.stages[size][stage].append(ms)
            for leg in reply.diagnostics.legs:
                variant.stages[size][f"leg {leg.leg}"].append(leg.elapsed_ms)
    variant.cpu[size].append((process_cpu([variant.process.pid]) - cpu) / calls * 1000)
    variant.pg_cpu[size].append((process_cpu(pg) - pg_cpu) / calls * 1000)


async def run(variants: list[Variant], postgres: EmbeddedPostgres, sizes: list[int],
              calls: int, rounds: int) -> None:
    async with contextlib.AsyncExitStack() as stack:
        stubs = {}
        for variant in variants:
            channel = await stack.enter_async_context(
                clients.channel(f"127.0.0.1:{variant.port}", default_timeout=30))
            stubs[variant.label] = pb_grpc.RetrievalServiceStub(channel)
        for size in sizes:
            loads = [os.getloadavg()[0]]
            for variant in variants:  # warm caches and connections
                await measure(variant, stubs[variant.label], postgres, size, 10, 0)
                variant.latencies[size].clear()
                variant.stages[size].clear()
                variant.cpu[size].clear()
                variant.pg_cpu[size].clear()
            per_round = max(1, calls // rounds)
            for round_number in range(rounds):
                order = variants if round_number % 2 == 0 else variants[::-1]
                for variant in order:
                    await measure(variant, stubs[variant.label], postgres, size, per_round,
                                  10 + round_number * per_round)
                loads.append(os.getloadavg()[0])
            report(variants, size, loads)


def report(variants: list[Variant], size: int, loads: list[float]) -> None:
    print(f"\n{size:,} memories (1-minute load average {min(loads):.1f}-{max(loads):.1f},"
          f" mean {statistics.fmean(loads):.1f})")
    print("| variant | p50 | p99 | CPU per call: agent memory | PostgreSQL |")
    print("|---|---|---|---|---|")
    for v in variants:
        samples = v.latencies[size]
        print(f"| {v.label} | {percentile(samples, 0.5):.1f} ms | {percentile(samples, 0.99):.1f}"
              f" ms | {statistics.fmean(v.cpu[size]):.1f} ms |"
              f" {statistics.fmean(v.pg_cpu[size]):.1f} ms |")
    for v in variants:
        parts = ", ".join(f"{k} {statistics.median(s):.1f}"
                          for k, s in sorted(v.stages[size].items()))
        print(f"stage medians, {v.label} (ms): {parts}")
    sys.stdout.flush()


async def main(args: argparse.Namespace) -> None:
    sizes = [int(s) for s in args.sizes.split(",")]
    workdir = args.data_dir or scratch_dir("retrieval-bench-")
    postgres = EmbeddedPostgres(workdir / "postgres", free_port()).start()
    variants: list[Variant] = []
    try:
        master = workdir / "qdrant"
        if not (workdir / "loaded").exists():
            started = time.monotonic()
            migrations_dir = (args.baseline or ROOT) / "services" / "agent_memory" / "migrations"
            await load_template(postgres, master, sizes, migrations_dir, args.hnsw)
            (workdir / "loaded").write_text(f"{sizes} hnsw={args.hnsw}\n")
            print(f"loaded {sum(sizes):,} memories in {time.monotonic() - started:.0f} s",
                  flush=True)
        checkouts = [("this checkout", ROOT)]
        if args.baseline:
            checkouts.insert(0, ("baseline", args.baseline.resolve()))
        for label, root in checkouts:
            caches = [("", {})] if label == "baseline" else [
                (", query cache", {}), (", no query cache", {"EMBEDDINGS_CACHE_SIZE": "0"})]
            for suffix, env in caches:
                variants.append(Variant(label + suffix, root, env, f"bench_{len(variants)}",
                                        workdir / f"qdrant-{len(variants)}"))
            for pool in args.rerank_pools if label != "baseline" else []:
                variants.append(Variant(
                    f"{label}, no query cache, local rerank of {pool}", root,
                    {"EMBEDDINGS_CACHE_SIZE": "0", "AGENT_MEMORY_RERANK_POOL": str(pool)},
                    f"bench_{len(variants)}", workdir / f"qdrant-{len(variants)}",
                    assisted=True))
        await copy_data(postgres, master, variants)
        for variant in variants:
            await start(variant, postgres)
        await wait_for_graphs(variants)
        await settle(postgres)
        await run(variants, postgres, sizes, args.calls, args.rounds)
    finally:
        for variant in variants:
            if variant.process is not None:
                variant.process.terminate()
                variant.process.wait(timeout=30)
        postgres.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--calls", type=int, default=200, help="per variant and size")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds per size")
    parser.add_argument("--baseline", type=Path, help="another checkout to measure too")
    parser.add_argument("--data-dir", type=Path, help="keep (or reuse) the loaded data here")
    parser.add_argument("--hnsw", action="store_true", help="build the index's HNSW graphs")
    parser.add_argument("--rerank-pools", type=lambda v: [int(x) for x in v.split(",") if x],
                        default=[], help="also measure assisted mode with the local"
                                         " cross-encoder reranking pools of these sizes")
    uvloop.run(main(parser.parse_args()))
