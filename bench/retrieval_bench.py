"""RetrieveContext latency over gRPC, against agent memory running as its own process.

p50/p99 of RetrieveContext (deterministic mode, query embedding included, the
receipt and usage counters written) with 1k, 10k and 100k memories in one
account, all visible to the caller. Embedded stack: PostgreSQL from its
wheel, the in-process Qdrant engine, the local embedding model. Target: p50
<= 40 ms at 100k.

Loading 100k memories through AddMemory would spend most of an hour
embedding on the CPU, so they are written straight into PostgreSQL (with
their entities, as the projector extracts them) and the index: the first
1,000 texts are embedded for real, the rest reuse those vectors with a
little noise. The path measured is the real one.

    python -m bench.retrieval_bench [--sizes 1000,10000,100000] [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import numpy
import uvloop
from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from agentmemory.agent_memory.v1 import retrieval_pb2_grpc as pb_grpc
from agentmemory.common.v1 import principal_pb2

from libs import clients, migrations
from libs.embeddings import LocalEmbedder
from libs.healthcheck import is_serving
from services.agent_memory import index as vector_index
from services.agent_memory import sparse
from services.agent_memory.app import MIGRATIONS
from services.agent_memory.index.edge import EdgeIndex
from services.agent_memory.retrieval import entities
from tests.support.ports import free_port
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


def text(i: int) -> str:
    rng = random.Random(i)
    owner = rng.choice(PEOPLE).split()[0].lower()
    return (f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(TOPICS)} for project "
            f"{rng.choice(PROJECTS)} (note {i}); follow-up owner @{owner}.")


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


async def bulk_load(dsn: str, index: EdgeIndex, embedder: LocalEmbedder, account: str,
                    count: int, base_vectors: list[list[float]]) -> None:
    start = datetime.now(UTC) - timedelta(days=365)
    rng = numpy.random.default_rng(count)
    name = vector_index.collection_name(account, "default", embedder.name)
    await index.ensure_collection(name, embedder.dimensions)
    rows, found, points = [], [], []
    for i in range(count):
        content, memory_id = text(i), uuid.uuid4()
        kind = KINDS[i % len(KINDS)]
        created = start + timedelta(seconds=i * 300)
        rows.append((memory_id, account, "default", "agent", AGENT, "", f"note-{i}", content,
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
            vector_index.payload(scope="agent", agent_id=AGENT, owner_user_id="", kind=kind,
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
        await connection.execute("ANALYZE")
    finally:
        await connection.close()


async def measure(stub, account: str, calls: int) -> tuple[float, float, dict]:
    principal = principal_pb2.Principal(account_id=account, agent_id=AGENT)
    latencies, stages = [], defaultdict(list)
    for i in range(calls):
        request = pb.RetrieveContextRequest(principal=principal, run_id=f"run-{i}",
                                            semantic_query=QUERIES[i % len(QUERIES)],
                                            explain=i % 10 == 0)
        started = time.perf_counter()
        reply = await stub.RetrieveContext(request)
        latencies.append(time.perf_counter() - started)
        if request.explain:
            for stage, ms in reply.diagnostics.stage_timings_ms.items():
                stages[stage].append(ms)
            for leg in reply.diagnostics.legs:
                stages[f"leg {leg.leg}"].append(leg.elapsed_ms)
    medians = {k: statistics.median(v) for k, v in stages.items()}
    return percentile(latencies, 0.5), percentile(latencies, 0.99), medians


async def main(sizes: list[int], calls: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="retrieval-bench-"))
    postgres = EmbeddedPostgres(workdir / "postgres", free_port()).start()
    service = None
    try:
        pool = await asyncpg.create_pool(postgres.dsn, min_size=1, max_size=2)
        await migrations.apply(pool, "agent_memory", MIGRATIONS)
        await pool.close()
        embedder = LocalEmbedder()
        base = await embedder.embed_documents([text(i) for i in range(min(1000, max(sizes)))])
        index = EdgeIndex(workdir / "qdrant")
        started = time.monotonic()
        for size in sizes:
            await bulk_load(postgres.dsn, index, embedder, f"bench-{size}", size, base)
        await index.close()
        await embedder.close()
        print(f"loaded {sum(sizes):,} memories in {time.monotonic() - started:.0f} s", flush=True)

        port = free_port()
        env = {**os.environ, "AGENT_MEMORY_PORT": str(port),
               "AGENT_MEMORY_POSTGRES_DSN": postgres.dsn,
               "AGENT_MEMORY_INDEX_PATH": str(workdir / "qdrant"), "LOG_LEVEL": "WARNING"}
        service = subprocess.Popen(  # noqa: ASYNC220 - started once, before measuring
            [sys.executable, "-m", "services.agent_memory"], cwd=ROOT, env=env)
        while not is_serving(f"127.0.0.1:{port}"):
            if service.poll() is not None:
                raise SystemExit("agent memory failed to start")
            await asyncio.sleep(0.2)
        async with clients.channel(f"127.0.0.1:{port}", default_timeout=30) as channel:
            stub = pb_grpc.RetrievalServiceStub(channel)
            print("| memories in the account | RetrieveContext p50 | p99 |")
            print("|---|---|---|")
            breakdowns = {}
            for size in sizes:
                await measure(stub, f"bench-{size}", 10)  # warm caches and connections
                p50, p99, stages = await measure(stub, f"bench-{size}", calls)
                breakdowns[size] = stages
                print(f"| {size:,} | {p50:.1f} ms | {p99:.1f} ms |", flush=True)
            for size, stages in breakdowns.items():
                parts = ", ".join(f"{k} {v:.1f}" for k, v in sorted(stages.items()))
                print(f"stage medians at {size:,} (ms): {parts}")
    finally:
        if service is not None:
            service.terminate()
            service.wait(timeout=30)
        postgres.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    uvloop.run(main([int(s) for s in args.sizes.split(",")], args.calls))
