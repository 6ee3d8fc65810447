"""Transcript-search benchmarks on the embedded engine (chDB), over gRPC.

Projection throughput: messages appended to the journal (its own process) and
followed into ClickHouse by the search service (its own process), end to end,
for the keyword projection and for the embeddings (local bge-small-en).

Search p50/p99 with 1k, 100k and 1M messages in one account and agent (the
caller's whole scope), one client, summarize off, BM25 (SEARCH_MODE_KEYWORD)
and hybrid (the default) alternating query by query; with the service's CPU
time per call (every thread: gRPC, chDB, the embedder) and the load average. Targets: p50 <= 10 ms at
1k, <= 30 ms at 100k, <= 60 ms at 1M. The corpora are written straight into
chDB before the service starts (appending a million messages through the
journal would take a quarter of an hour, embedding them four hours); their
rows are exactly what the projector writes, terms included. Embeddings are
lightly perturbed copies of real embeddings of 2,000 public benign statements
(``tools.safety_data``), or with ``--chat`` of 2,000 chat turns, so similarity
search probes, scans and re-ranks real-looking vectors; each copy is filed in
its original's cell. The
query is embedded by the service for real, and that time is included.

    python -m bench.search_bench [--sizes 1000,100000,1000000] [--project 5000] [--calls 200]
                                 [--workdir DIR] [--chat DIR] [--search-during-projection]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import uvloop
from agentmemory.common.v1 import principal_pb2
from agentmemory.search.v1 import search_service_pb2 as pb
from agentmemory.search.v1 import search_service_pb2_grpc as pb_grpc

from bench.scratch import scratch_dir
from libs import clients
from libs.embeddings import LocalEmbedder
from libs.healthcheck import is_serving
from services.search import cells, schema
from services.search import terms as analyzer
from services.search.dense import table_name
from testkit.journal_client import JournalClient, message, principal
from testkit.persona_chat import turns
from testkit.ports import free_port
from tools import safety_data

ROOT = Path(__file__).resolve().parent.parent
# A Zipf-distributed vocabulary of 5,000 words, as in real conversations: a few
# words everywhere, most words rare. Queries use mid-frequency words (ranks 50-1,000).
VOCABULARY = [f"word{rank}x" for rank in range(5000)]
ZIPF = [1.0 / (rank + 1) for rank in range(len(VOCABULARY))]
POOL = 2000  # distinct real embeddings behind the perturbed copies
MODES = {"bm25": pb.SEARCH_MODE_KEYWORD, "hybrid": pb.SEARCH_MODE_HYBRID}


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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


def pool_embeddings(chat: Path | None) -> list[list[float]]:
    """Embeddings of POOL public benign statements (the safety sets': preferences, facts,
    changelog lines, questions), or with ``chat`` of POOL turns of Synthetic-Persona-Chat's
    test split (never the cells' training split). The corpus's own word-soup sentences
    all embed close together, and templated statements nearly so: either would crowd
    every message into a few cells. The safety statements crowd some cells too (one holds
    6% of them); chat turns are the even case (at most 2% in a cell)."""
    async def embed() -> list[list[float]]:
        embedder = LocalEmbedder()
        try:
            if chat is None:
                texts = sorted({r.text for split in ("tuning", "evaluation")
                                for r in safety_data.load(split) if r.label == "benign"})[:POOL]
            else:
                every = turns(chat / "Synthetic-Persona-Chat_test.csv")
                texts = every[::max(1, len(every) // POOL)][:POOL]
            return await embedder.embed_documents(texts)
        finally:
            await embedder.close()

    return asyncio.run(embed())


def bulk_load(path: Path, database: str, count: int, chat: Path | None) -> float:
    """Messages, postings and embeddings; thread totals are left to the service's
    start, which fills them as for a store written by an earlier release."""
    from chdb import session

    partition = cells.for_embedder(LocalEmbedder)
    vectors, dimensions = table_name(LocalEmbedder, partition), LocalEmbedder.dimensions
    pool = pool_embeddings(chat)
    pool_cells = partition.of(pool)
    started = time.monotonic()
    db = session.Session(str(path))
    try:
        for statement in schema.statements(database, vectors, small_blocks=True):
            db.query(statement)
        messages: list[str] = []
        postings: list[str] = []

        def flush() -> None:
            db.query(f"INSERT INTO {database}.messages FORMAT JSONEachRow\n" + "\n".join(messages))
            db.query(f"INSERT INTO {database}.postings FORMAT JSONEachRow\n" + "\n".join(postings))
            messages.clear()
            postings.clear()

        for row, message_postings in bulk_rows(count, seed=count):
            messages.append(json.dumps(row))
            postings.extend(json.dumps(p) for p in message_postings)
            if len(messages) == 50_000:
                flush()
        if messages:
            flush()
        db.query(f"CREATE TABLE {database}.bench_pool (id UInt64, embedding Array(Float32),"
                 " cell UInt16) ENGINE = Memory")
        db.query(f"INSERT INTO {database}.bench_pool FORMAT JSONEachRow\n" + "\n".join(
            json.dumps({"id": i, "embedding": v, "cell": c})
            for i, (v, c) in enumerate(zip(pool, pool_cells, strict=True))))
        words = (dimensions + 63) // 64
        db.query(f"""INSERT INTO {database}.{vectors} ({', '.join(schema.VECTOR_COLUMNS)})
SELECT account_id, agent_id, cell, thread_id, offset, owner_user_id, length,
       arrayMap(w -> arraySum(arrayMap(j -> bitShiftLeft(toUInt64(e[w * 64 + j + 1] > 0), j),
                                       range(64))), range({words})),
       arrayMap(x -> toInt8(round(x / scale)), e), scale, sequence
FROM (SELECT *, arrayReduce('max', arrayMap(x -> abs(x), e)) / 127 AS scale
 FROM (SELECT account_id, agent_id, cell, thread_id, offset, owner_user_id, length, sequence,
             arrayMap(x -> toFloat32(x / sqrt(arraySum(arrayMap(y -> y * y, v)))), v) AS e
      FROM (SELECT m.account_id AS account_id, m.agent_id AS agent_id, p.cell AS cell,
                   m.thread_id AS thread_id,
                   m.offset AS offset, m.owner_user_id AS owner_user_id, m.sequence AS sequence,
                   m.length AS length,
                   arrayMap((x, i) -> x + ((cityHash64(m.sequence, i) % 2001) / 1000. - 1) * 0.02,
                            p.embedding, range({dimensions})) AS v
            FROM {database}.messages AS m
            INNER JOIN {database}.bench_pool AS p ON p.id = m.sequence % {POOL})))""")
        db.query(f"DROP TABLE {database}.bench_pool")
        for table in ("messages", "postings", vectors):
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


async def searches_meanwhile(stub: pb_grpc.SearchServiceStub, done: asyncio.Event,
                             latencies: list[float]) -> None:
    """A client searching (hybrid) every 50 ms until ``done``: what a backlog costs a caller."""
    rng = random.Random(7)
    while not done.is_set():
        started = time.perf_counter()
        await stub.SearchMessages(pb.SearchMessagesRequest(
            principal=principal(), surface=principal_pb2.SURFACE_AGENT,  # the appends' scope
            query=" ".join(rng.sample(VOCABULARY[50:1000], 3)), summarize=False))
        latencies.append(time.perf_counter() - started)
        await asyncio.sleep(0.05)


async def projection_throughput(workdir: Path, count: int, search: bool) -> None:
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
            keyword = None
            async with clients.channel(f"127.0.0.1:{search_port}", default_timeout=30) as sc:
                stub = pb_grpc.SearchServiceStub(sc)
                done, latencies = asyncio.Event(), []
                searching = asyncio.create_task(searches_meanwhile(stub, done, latencies)) \
                    if search else None
                while True:
                    status = await stub.DescribeProjection(pb.DescribeProjectionRequest())
                    if keyword is None and status.shards and \
                            status.shards[0].projected_sequence >= count:
                        keyword = time.monotonic() - started
                    if status.shards and status.shards[0].embedded_sequence >= count:
                        break
                    await asyncio.sleep(0.1)
                done.set()
                if searching is not None:
                    await searching
            elapsed = time.monotonic() - started
            print(f"projection: {count:,} messages from the journal into chDB (service start"
                  f" included): keyword {keyword:.1f} s = {count / keyword:,.0f} messages/s;"
                  f" with embeddings ({status.embedder}) {elapsed:.1f} s"
                  f" = {count / elapsed:,.0f} messages/s", flush=True)
            if latencies:
                print(f"meanwhile, hybrid searches every 50 ms: p50"
                      f" {percentile(latencies, .5):.1f} ms, p99 {percentile(latencies, .99):.1f}"
                      f" ms ({len(latencies)} searches)", flush=True)
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(30)


async def search_latency(workdir: Path, size: int, calls: int, chat: Path | None) -> None:
    path, database = workdir / f"corpus-{size}", "agentmemory"
    loaded = 0.0 if path.exists() else await asyncio.to_thread(bulk_load, path, database, size,
                                                               chat)
    port = free_port()
    service = await start("search", {"SEARCH_PORT": str(port), "SEARCH_CHDB_PATH": str(path),
                                     "SEARCH_PROJECT_FEED": "false",
                                     "SEARCH_JOURNAL_ADDRESS": "127.0.0.1:9"}, port)
    try:
        async with clients.channel(f"127.0.0.1:{port}", default_timeout=60) as channel:
            stub = pb_grpc.SearchServiceStub(channel)
            rng = random.Random(size)
            latencies: dict[str, list[float]] = {name: [] for name in MODES}
            cpu: dict[str, float] = dict.fromkeys(MODES, 0.0)
            hits = Counter()
            for call in range(calls + 10):  # the first ten warm the caches up
                query = " ".join(rng.sample(VOCABULARY[50:1000], 3))
                for name, mode in MODES.items():
                    used, started = cpu_seconds(service.pid), time.perf_counter()
                    reply = await stub.SearchMessages(pb.SearchMessagesRequest(
                        principal=principal("bench", agent="agent"), mode=mode,
                        surface=principal_pb2.SURFACE_AGENT, query=query, summarize=False))
                    if call >= 10:
                        latencies[name].append(time.perf_counter() - started)
                        cpu[name] += cpu_seconds(service.pid) - used
                        hits[name] += len(reply.hits)
            corpus = f"corpus loaded in {loaded:.0f} s" if loaded else "corpus reused"
            for name, samples in latencies.items():
                print(f"search over {size:>9,} messages, {name:6s}: p50 "
                      f"{percentile(samples, .5):7.1f} ms   p99 {percentile(samples, .99):7.1f} ms"
                      f"   service CPU {cpu[name] / calls * 1000:5.1f} ms a call"
                      f"   ({calls} queries, {hits[name] / calls:.0f} hits each; {corpus};"
                      f" load {os.getloadavg()[0]:.1f})", flush=True)
    finally:
        service.terminate()
        service.wait(30)


async def main(sizes: list[int], project: int, calls: int, workdir: Path | None,
               chat: Path | None, search_meanwhile: bool) -> None:
    workdir = workdir or scratch_dir("search-bench-")
    if project:
        await projection_throughput(workdir, project, search_meanwhile)
    for size in sizes:
        await search_latency(workdir, size, calls, chat)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000,1000000")
    parser.add_argument("--project", type=int, default=5000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--workdir", type=Path,
                        help="keep the corpora here (corpus-<size>) and reuse them next time")
    parser.add_argument("--chat", type=Path,
                        help="a folder with Synthetic-Persona-Chat_test.csv: the embeddings are"
                             " copies of its turns' (else of the safety sets' statements)")
    parser.add_argument("--search-during-projection", action="store_true",
                        help="a client searches every 50 ms while the projection catches up")
    args = parser.parse_args()
    uvloop.run(main([int(s) for s in args.sizes.split(",") if s], args.project, args.calls,
                    args.workdir, args.chat, args.search_during_projection))
