"""Memory-model benchmarks over gRPC, against agent memory running as its own process.

- ListMemories, first page of 50 (newest first), and GetMemory with its
  versions, p50/p99, with 100k memories (3 versions each) in one account, every
  capacity respected (about 240 agents); the caller sees the account's
  memories, its agent's, its user's and its own;
- Store p50/p99 with versions and the audit trail on (compare with
  ``bench.agent_memory_bench``'s Store on the previous release: target within
  1.5x of its p50);
- export and import throughput (memories/s) of everything the caller sees;
- SummarizeMemories (the library page's overview: live memories per agent, scope
  and kind) over every agent, and over one, p50/p99.

The 100k memories are written straight into PostgreSQL (COPY), the way a
migrated database would hold them; every measured call is the real one.

    python -m bench.memory_model_bench [--memories 100000] [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import uvloop
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc

from bench.agent_memory_bench import percentile, text
from bench.scratch import scratch_dir
from libs import clients, migrations
from libs.healthcheck import is_serving
from services.agent_memory.app import MIGRATIONS
from testkit.journal_client import principal
from testkit.memory_client import store
from testkit.ports import free_port
from tools.backends.postgres import EmbeddedPostgres
from tools.safety_corpus import BENIGN

ROOT = Path(__file__).resolve().parent.parent
ACCOUNT = "bench-model"
EXPORTERS = 10  # agent-0 .. agent-9 with user u0 export (and import) what each sees
CALLER = principal(ACCOUNT, agent="agent-0", user="u0")
KINDS = ("project_fact", "decision")


def _layout(count: int) -> list[tuple[str, str, str, str]]:
    """(scope, agent, owner, kind) of each memory, every capacity respected: the
    account's 200 of each kind, 50 of each per user, and per agent 100 of each in
    the agent scope and 50 of each privately for two users."""
    found = [("account", "", "", kind) for kind in KINDS for _ in range(200)]
    found += [("user", "", f"u{u}", kind) for u in range(50) for kind in KINDS for _ in range(50)]
    agent = 0
    while len(found) < count:
        name = f"agent-{agent}"
        found += [("agent", name, "", kind) for kind in KINDS for _ in range(100)]
        found += [("private", name, f"u{u}", kind) for u in range(2) for kind in KINDS
                  for _ in range(50)]
        agent += 1
    return found[:count]


async def bulk_load(dsn: str, count: int) -> list[str]:
    start = datetime.now(UTC) - timedelta(days=20)
    rows = []
    layout = _layout(count)
    random.Random(3).shuffle(layout)  # interleave scopes in time, as real writes would
    for i, (scope, agent, owner, kind) in enumerate(layout):
        content = text(i)
        created = start + timedelta(seconds=i * 10)
        rows.append((uuid.uuid4(), ACCOUNT, "default", scope, agent, owner, f"k{i}", content,
                     hashlib.sha256(content.encode()).hexdigest(), kind, 0.5, 0.8,
                     json.dumps({"facet": ["billing", "infra", "people"][i % 3]}), "agent", 3,
                     agent or "agent-0", owner, created, created + timedelta(hours=2)))
    connection = await asyncpg.connect(dsn)
    try:
        await connection.copy_records_to_table(
            "memory_entries", records=rows,
            columns=["id", "account_id", "environment", "scope", "agent_id", "owner_user_id",
                     "key", "content", "content_hash", "kind", "importance", "confidence",
                     "tags", "source_kind", "version", "author_agent_id", "author_user_id",
                     "created_at", "updated_at"])
        await connection.execute(
            "INSERT INTO memory_versions SELECT account_id, environment, id, v, scope, agent_id,"
            " owner_user_id, key, text, encode(sha256(convert_to(text, 'UTF8')), 'hex'), kind,"
            " importance, confidence, tags, source_kind, source_thread_id,"
            " source_message_ids, source_run_id, source_first_offset, source_last_offset,"
            " expires_at, deleted_at, superseded_by, superseded_at, author_key_id,"
            " author_agent_id, author_user_id, author_role, created_at, updated_at,"
            " CASE WHEN v = 1 THEN 'create' ELSE 'update' END,"
            " created_at + (v - 1) * interval '1 hour',"
            " CASE WHEN v < 3 THEN created_at + v * interval '1 hour' END"
            " FROM memory_entries, generate_series(1, 3) AS v, LATERAL (SELECT content ||"
            " CASE WHEN v < 3 THEN ' (draft ' || v || ')' ELSE '' END AS text) drafts"
            " WHERE account_id = $1", ACCOUNT)
        await connection.execute("ANALYZE")
        visible = await connection.fetch(
            "SELECT id FROM memory_entries WHERE account_id = $1 AND (scope = 'account'"
            " OR (scope = 'agent' AND agent_id = 'agent-0') OR (scope = 'user' AND"
            " owner_user_id = 'u0') OR (scope = 'private' AND agent_id = 'agent-0'"
            " AND owner_user_id = 'u0'))", ACCOUNT)
    finally:
        await connection.close()
    return [str(r["id"]) for r in visible]


async def measure(calls: int, make_call) -> tuple[float, float]:
    latencies = []
    for i in range(calls):
        started = time.perf_counter()
        await make_call(i)
        latencies.append(time.perf_counter() - started)
    return percentile(latencies, 0.5), percentile(latencies, 0.99)


def line(name: str, p50: float, p99: float) -> None:
    print(f"{name:<44} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms", flush=True)


async def run(stub, visible: list[str], calls: int) -> None:
    rng = random.Random(7)
    reply = await stub.ListMemories(pb.ListMemoriesRequest(principal=CALLER, page_size=50))
    assert len(reply.memories) == 50 and reply.next_page_token
    line("ListMemories, first page of 50", *await measure(calls, lambda i: stub.ListMemories(
        pb.ListMemoriesRequest(principal=CALLER, page_size=50))))
    by_tag = pb.MemoryFilter(kinds=[pb.MEMORY_KIND_PROJECT_FACT], tags={"facet": "infra"})
    line("ListMemories, 50, kind + tag filter", *await measure(calls, lambda i: stub.ListMemories(
        pb.ListMemoriesRequest(principal=CALLER, page_size=50, filter=by_tag))))
    every_agent = pb.SummarizeMemoriesRequest(principal=CALLER)
    counted = await stub.SummarizeMemories(every_agent)
    agents = {c.agent_id for c in counted.counts} - {""}
    assert sum(c.memories for c in counted.counts) > len(visible)
    line(f"SummarizeMemories, every agent ({len(agents)})", *await measure(
        calls, lambda i: stub.SummarizeMemories(every_agent)))
    one_agent = pb.SummarizeMemoriesRequest(principal=CALLER, agent_ids=["agent-0"])
    line("SummarizeMemories, one agent", *await measure(
        calls, lambda i: stub.SummarizeMemories(one_agent)))
    reply = await stub.GetMemory(pb.GetMemoryRequest(principal=CALLER, memory_id=visible[0]))
    assert len(reply.versions) == 3
    ids = [rng.choice(visible) for _ in range(calls)]
    line("GetMemory with 3 versions", *await measure(calls, lambda i: stub.GetMemory(
        pb.GetMemoryRequest(principal=CALLER, memory_id=ids[i]))))
    line("Store (new entry; version + audit)", *await measure(calls, lambda i: stub.Store(store(
        f"note-{i}", BENIGN[i % len(BENIGN)], pb.CATEGORY_OBSERVATION,
        who=principal("bench-store", agent=f"writer-{i // 500}", user=f"u{i // 50}")))))
    line("Store (replace: new version + audit)", *await measure(calls, lambda i: stub.Store(store(
        f"note-{i}", BENIGN[(i + 1) % len(BENIGN)] + " (revised)", pb.CATEGORY_OBSERVATION,
        who=principal("bench-store", agent=f"writer-{i // 500}", user=f"u{i // 50}")))))

    exports, exported, started = [], 0, time.perf_counter()
    for n in range(EXPORTERS):
        pages, token = [], ""
        while True:
            page = await stub.ExportMemories(pb.ExportMemoriesRequest(
                principal=principal(ACCOUNT, agent=f"agent-{n}", user="u0"), page_size=1000,
                page_token=token))
            pages.append(page.jsonl)
            exported += page.count
            token = page.next_page_token
            if not token:
                break
        exports.append("".join(pages).splitlines()[1:])
    seconds = time.perf_counter() - started
    print(f"Export {exported:,} memories (3 versions each) {exported / seconds:9,.0f} "
          f"memories/s ({seconds:.1f} s)", flush=True)
    started, imported = time.perf_counter(), 0
    for n, lines in enumerate(exports):
        target = principal(f"bench-import-{n}", agent=f"agent-{n}", user="u0")
        for chunk in range(0, len(lines), 1000):
            reply = await stub.ImportMemories(pb.ImportMemoriesRequest(
                principal=target, jsonl="\n".join(lines[chunk:chunk + 1000])))
            assert reply.created == len(lines[chunk:chunk + 1000]), reply
            imported += reply.created
    seconds = time.perf_counter() - started
    print(f"Import {imported:,} memories (empty accounts)  {imported / seconds:9,.0f} "
          f"memories/s ({seconds:.1f} s)", flush=True)


async def main(count: int, calls: int) -> None:
    workdir = scratch_dir("memory-model-bench-")
    postgres = EmbeddedPostgres(workdir / "postgres", free_port()).start()
    service = None
    try:
        pool = await asyncpg.create_pool(postgres.dsn, min_size=1, max_size=2)
        await migrations.apply(pool, "agent_memory", MIGRATIONS)
        await pool.close()
        started = time.monotonic()
        visible = await bulk_load(postgres.dsn, count)
        print(f"loaded {count:,} memories ({3 * count:,} versions) in "
              f"{time.monotonic() - started:.0f} s; the caller sees {len(visible):,}", flush=True)
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
        async with clients.channel(f"127.0.0.1:{port}", default_timeout=120) as channel:
            await run(agent_memory_service_pb2_grpc.AgentMemoryServiceStub(channel), visible,
                      calls)
    finally:
        if service is not None:
            service.terminate()
            service.wait(30)
        postgres.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    uvloop.run(main(args.memories, args.calls))
