"""Agent-memory benchmarks over gRPC, against the service running as its own process.

Store p50/p99; Recall p50/p99 (query embedding included) with 1k, 10k and 100k
entries in one account; ListPinned p50/p99. Embedded stack: PostgreSQL from
its wheel, the in-process Qdrant engine, the local embedding model. Targets:
Recall p50 <= 30 ms at 10k, ListPinned p50 <= 2 ms.

Loading 100k entries through Store would spend most of an hour embedding on
the CPU, so the bulk entries are written straight into PostgreSQL and the
index: the first 1,000 texts are embedded for real, and the rest reuse those
vectors with a little noise (their BM25 vectors are their own). The recall
path measured, query embedding included, is the real one.

    python -m bench.agent_memory_bench [--sizes 1000,10000,100000] [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import random
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import numpy
import uvloop
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc

from bench.scratch import scratch_dir
from libs import clients, migrations
from libs.embeddings import LocalEmbedder
from libs.healthcheck import is_serving
from services.agent_memory import index as vector_index
from services.agent_memory.app import MIGRATIONS
from services.agent_memory.index import sparse
from services.agent_memory.index.edge import EdgeIndex
from services.agent_memory.memories.model import Entry, Source
from services.agent_memory.memories.projector import indexed_text
from services.agent_memory.memories.rules import Kind, Scope
from testkit.memory_client import pb, principal, recall, store
from testkit.ports import free_port
from tools.backends.postgres import EmbeddedPostgres
from tools.safety_corpus import BENIGN

ROOT = Path(__file__).resolve().parent.parent
SUBJECTS = ["coffee", "deploys", "invoices", "the dog", "Kafka", "Lisbon", "the piano", "tests",
            "the billing service", "Neovim", "marathons", "on-call", "dark mode", "Portuguese"]
VERBS = ["likes", "asked about", "maintains", "complained about", "documented", "prefers",
         "migrated", "reviewed", "scheduled", "forgot"]
AGENTS_PER_ACCOUNT = 200  # 500 observations per agent: 100k entries need 200 agents


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


def text(i: int) -> str:
    rng = random.Random(i)
    return (f"Entry {i}: the user {rng.choice(VERBS)} {rng.choice(SUBJECTS)} "
            f"and {rng.choice(VERBS)} {rng.choice(SUBJECTS)}.")


async def bulk_load(dsn: str, index: EdgeIndex, embedder: LocalEmbedder, account: str,
                    count: int, base_vectors: list[list[float]]) -> None:
    now = datetime.now(UTC)
    rows, rng = [], numpy.random.default_rng(count)
    name = vector_index.collection_name(account, "default", embedder.name)
    await index.ensure_collection(name, embedder.dimensions)
    points = []
    for i in range(count):
        agent = f"agent-{i % AGENTS_PER_ACCOUNT}"
        content = text(i)
        entry_id = uuid.uuid4()
        rows.append((entry_id, account, "default", "agent", agent, "", f"k{i}", content,
                     hashlib.sha256(content.encode()).hexdigest(), "project_fact",
                     0.5, "agent", now, now))
        vector = numpy.asarray(base_vectors[i % len(base_vectors)])
        if i >= len(base_vectors):
            vector = vector + rng.normal(0, 0.01, vector.shape)
            vector = vector / numpy.linalg.norm(vector)
        entry = Entry(entry_id, account, "default", Scope.AGENT, agent, None, f"k{i}", content,
                      Kind.PROJECT_FACT, 0.5, 0.8, {}, "", Source(), None, now, now)
        points.append(vector_index.IndexPoint(
            entry_id, vector.tolist(), sparse.document_vector(indexed_text(entry)),
            vector_index.payload(scope="agent", agent_id=agent, owner_user_id="",
                                 kind="project_fact", expires_at=None)))
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
                     "key", "content", "content_hash", "kind", "importance",
                     "source_kind", "created_at", "updated_at"])
    finally:
        await connection.close()


async def measure(calls: int, make_call) -> tuple[float, float]:
    latencies = []
    for i in range(calls):
        started = time.perf_counter()
        await make_call(i)
        latencies.append(time.perf_counter() - started)
    return percentile(latencies, 0.5), percentile(latencies, 0.99)


async def main(sizes: list[int], calls: int) -> None:
    workdir = scratch_dir("agent-memory-bench-")
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
        print(f"loaded {sum(sizes):,} entries in {time.monotonic() - started:.0f} s", flush=True)

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
            stub = agent_memory_service_pb2_grpc.AgentMemoryServiceStub(channel)
            p50, p99 = await measure(calls, lambda i: stub.Store(store(  # 50 per user: capacity
                f"note-{i}", BENIGN[i % len(BENIGN)], pb.CATEGORY_OBSERVATION,
                who=principal("bench-store", agent=f"writer-{i // 500}", user=f"u{i // 50}"))))
            print(f"Store                       p50 {p50:6.2f} ms   p99 {p99:6.2f} ms", flush=True)
            for size in sizes:
                who = principal(f"bench-{size}", agent="agent-7")
                queries = [f"what does the user think about {SUBJECTS[i % len(SUBJECTS)]} "
                           f"and {SUBJECTS[(i * 7) % len(SUBJECTS)]} ({i})" for i in range(calls)]
                reply = await stub.Recall(recall(queries[0], who=who))
                assert not reply.fallback and reply.entries
                p50, p99 = await measure(
                    calls, lambda i, q=queries, w=who: stub.Recall(recall(q[i], who=w)))
                print(f"Recall at {size:>7,} entries   p50 {p50:6.2f} ms   p99 {p99:6.2f} ms",
                      flush=True)
            pinned_owner = principal("bench-pinned", user="u1")
            for i in range(10):
                await stub.Store(store(f"fact-{i}", f"profile fact {i}", importance=0.8,
                                       who=pinned_owner))
            await asyncio.sleep(2)  # let the projector embed those first: measure reads alone
            p50, p99 = await measure(calls * 2, lambda i: stub.ListPinned(
                pb.ListPinnedRequest(principal=pinned_owner)))
            print(f"ListPinned (10 pinned)      p50 {p50:6.2f} ms   p99 {p99:6.2f} ms", flush=True)
        await embedder.close()
    finally:
        if service is not None:
            service.terminate()
            service.wait(30)
        postgres.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    uvloop.run(main([int(s) for s in args.sizes.split(",")], args.calls))
