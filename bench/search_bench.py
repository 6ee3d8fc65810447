"""Transcript-search benchmarks on the embedded engine (chDB), over gRPC.

Projection throughput: messages appended to the journal (its own process) and
followed into ClickHouse by the search service (its own process), end to end.
Search p50/p99 with 100k and 1M messages in one account and agent (target:
p50 <= 50 ms at 100k). The large corpora are written straight into chDB
before the service starts (appending a million messages through the journal
would take a quarter of an hour); their rows are exactly what the projector
writes, terms included.

    python -m bench.search_bench [--sizes 100000,1000000] [--project 20000] [--calls 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import uvloop
from agentmemory.common.v1 import principal_pb2
from agentmemory.search.v1 import search_service_pb2 as pb
from agentmemory.search.v1 import search_service_pb2_grpc as pb_grpc

from libs import clients
from libs.healthcheck import is_serving
from services.search import schema
from services.search import terms as analyzer
from tests.support.journal_client import JournalClient, message, principal
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
# A Zipf-distributed vocabulary of 5,000 words, as in real conversations: a few
# words everywhere, most words rare. Queries use mid-frequency words (ranks 50-1,000).
VOCABULARY = [f"word{rank}x" for rank in range(5000)]
ZIPF = [1.0 / (rank + 1) for rank in range(len(VOCABULARY))]


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


def sentence(rng: random.Random) -> str:
    words = rng.choices(VOCABULARY, weights=ZIPF, k=rng.randint(8, 30))
    return "The team discussed " + " ".join(words) + "."


def bulk_rows(count: int, seed: int):
    """(message row, posting rows) exactly as the projector writes them."""
    rng = random.Random(seed)
    for i in range(count):
        content = sentence(rng)
        words = analyzer.term_ids(analyzer.terms(content))
        thread, offset, created = f"t{i // 100}", i % 100 + 1, 1_700_000_000_000 + i
        message = {"account_id": "bench", "agent_id": "agent", "thread_id": thread,
                   "owner_user_id": "", "environment": "default", "message_id": f"m{i}",
                   "offset": offset, "role": "user" if i % 2 == 0 else "assistant",
                   "content": content, "created_at_ms": created, "terms": words,
                   "length": len(words), "sequence": i + 1}
        postings = [{"account_id": "bench", "agent_id": "agent", "term": term,
                     "thread_id": thread, "offset": offset, "owner_user_id": "", "tf": tf,
                     "length": len(words), "created_at_ms": created, "sequence": i + 1}
                    for term, tf in Counter(words).items()]
        yield message, postings


def bulk_load(path: Path, database: str, count: int) -> float:
    from chdb import session

    started = time.monotonic()
    db = session.Session(str(path))
    try:
        for statement in schema.statements(database):
            db.query(statement)
        messages: list[str] = []
        postings: list[str] = []

        def flush() -> None:
            db.query(f"INSERT INTO {database}.messages FORMAT JSONEachRow\n" + "\n".join(messages))
            db.query(f"INSERT INTO {database}.postings FORMAT JSONEachRow\n" + "\n".join(postings))
            messages.clear()
            postings.clear()

        for message, message_postings in bulk_rows(count, seed=count):
            messages.append(json.dumps(message))
            postings.extend(json.dumps(p) for p in message_postings)
            if len(messages) == 50_000:
                flush()
        if messages:
            flush()
        for table in ("messages", "postings"):
            db.query(f"OPTIMIZE TABLE {database}.{table} FINAL")
    finally:
        db.close()
    return time.monotonic() - started


async def start(name: str, env: dict[str, str], port: int) -> subprocess.Popen:
    process = subprocess.Popen(  # noqa: ASYNC220 - started once, before measuring
        [sys.executable, "-m", f"services.{name}"], cwd=ROOT,
        env={**os.environ, "LOG_LEVEL": "WARNING", **env})
    while not is_serving(f"127.0.0.1:{port}"):
        if process.poll() is not None:
            raise SystemExit(f"{name} failed to start")
        await asyncio.sleep(0.2)
    return process


async def projection_throughput(workdir: Path, count: int) -> None:
    journal_port, search_port = free_port(), free_port()
    processes = [await start("journal", {"JOURNAL_PORT": str(journal_port),
                                         "JOURNAL_LOCAL_PATH": str(workdir / "journal")},
                             journal_port)]
    try:
        async with clients.channel(f"127.0.0.1:{journal_port}", default_timeout=30) as channel:
            journal = JournalClient(channel)
            rng = random.Random(1)
            for start_at in range(0, count, 100):
                await journal.append(f"t{start_at // 1000}", [
                    message(f"m{i}", sentence(rng)) for i in range(start_at, start_at + 100)])
            started = time.monotonic()
            processes.append(await start("search", {
                "SEARCH_PORT": str(search_port), "SEARCH_CHDB_PATH": str(workdir / "projection"),
                "SEARCH_JOURNAL_ADDRESS": f"127.0.0.1:{journal_port}"}, search_port))
            async with clients.channel(f"127.0.0.1:{search_port}", default_timeout=30) as sc:
                stub = pb_grpc.SearchServiceStub(sc)
                while True:
                    status = await stub.DescribeProjection(pb.DescribeProjectionRequest())
                    if status.shards and status.shards[0].projected_sequence >= count:
                        break
                    await asyncio.sleep(0.1)
            elapsed = time.monotonic() - started
            print(f"projection: {count:,} messages from the journal into chDB in {elapsed:.1f} s"
                  f" = {count / elapsed:,.0f} messages/s (service start included)", flush=True)
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(30)


async def search_latency(workdir: Path, size: int, calls: int) -> None:
    path, database = workdir / f"corpus-{size}", "agentmemory"
    loaded = await asyncio.to_thread(bulk_load, path, database, size)
    port = free_port()
    service = await start("search", {"SEARCH_PORT": str(port), "SEARCH_CHDB_PATH": str(path),
                                     "SEARCH_PROJECT_FEED": "false",
                                     "SEARCH_JOURNAL_ADDRESS": "127.0.0.1:9"}, port)
    try:
        async with clients.channel(f"127.0.0.1:{port}", default_timeout=60) as channel:
            stub = pb_grpc.SearchServiceStub(channel)
            rng = random.Random(size)
            latencies, hits = [], 0
            for _ in range(calls):
                query = " ".join(rng.sample(VOCABULARY[50:1000], 3))
                started = time.perf_counter()
                reply = await stub.SearchMessages(pb.SearchMessagesRequest(
                    principal=principal("bench", agent="agent"),
                    surface=principal_pb2.SURFACE_AGENT, query=query, summarize=False))
                latencies.append(time.perf_counter() - started)
                hits += len(reply.hits)
            print(f"search over {size:>9,} messages: p50 {percentile(latencies, .5):7.1f} ms"
                  f"   p99 {percentile(latencies, .99):7.1f} ms   ({calls} queries, "
                  f"{hits / calls:.0f} hits each; corpus loaded in {loaded:.0f} s)", flush=True)
    finally:
        service.terminate()
        service.wait(30)


async def main(sizes: list[int], project: int, calls: int) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="search-bench-"))
    if project:
        await projection_throughput(workdir, project)
    for size in sizes:
        await search_latency(workdir, size, calls)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--project", type=int, default=20000)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    uvloop.run(main([int(s) for s in args.sizes.split(",") if s], args.project, args.calls))
