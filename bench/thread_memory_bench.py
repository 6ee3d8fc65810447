"""Thread-memory benchmarks over gRPC: journal, Valkey and thread memory each as
their own process, on the embedded stack.

GetThreadContext p50/p99 with a summary present, at 1 and 50 concurrent
clients (target: p50 <= 5 ms), and at 1 client on a thread whose window does
not reach its summary (the read then consults the counters); summarization
jobs per second with the offline summarizer (jobs of 50 messages each, through
the Summarize RPC, 8 at a time); and how fast a second thread-memory process,
started with Redis empty, counts a feed it has never seen (every thread's
counters measured from the journal once).

    python -m bench.thread_memory_bench [--seconds 5] [--threads 100]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import uvloop
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2_grpc as pb_grpc
from redis.asyncio import Redis

from bench.scratch import scratch_dir
from libs import clients
from libs.healthcheck import is_serving
from testkit.journal_client import JournalClient, message, principal
from testkit.ports import free_port
from tools.backends.redis import EmbeddedRedis

ROOT = Path(__file__).resolve().parent.parent


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


async def start(name: str, env: dict[str, str], port: int) -> subprocess.Popen:
    process = subprocess.Popen(  # noqa: ASYNC220 - started once, before measuring
        [sys.executable, "-m", f"services.{name}"], cwd=ROOT, env={**os.environ, **env})
    while not is_serving(f"127.0.0.1:{port}"):
        if process.poll() is not None:
            raise SystemExit(f"{name} failed to start")
        await asyncio.sleep(0.2)
    return process


async def context_load(stub, concurrency: int, seconds: float,
                       thread: str = "busy") -> tuple[int, float, float]:
    latencies: list[float] = []
    stop_at = time.monotonic() + seconds
    request = pb.GetThreadContextRequest(principal=principal(), thread_id=thread)

    async def worker() -> None:
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            reply = await stub.GetThreadContext(request)
            latencies.append(time.perf_counter() - started)
            assert reply.HasField("summary") and len(reply.messages) == 20

    started = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    rate = len(latencies) / (time.monotonic() - started)
    return int(rate), percentile(latencies, 0.5), percentile(latencies, 0.99)


async def feed_catch_up(journal: JournalClient, workdir: Path, journal_port: int,
                        common: dict[str, str], processes: list, threads: int) -> None:
    """A fresh process with an empty Redis follows the whole feed from the start."""
    for t in range(threads):
        await journal.append(f"feed-{t}", [message(f"m{i}", f"Short note {i}.")
                                           for i in range(40)])
    durable = max((await journal.stub.DescribeShards(journal_pb.DescribeShardsRequest()))
                  .shards, key=lambda s: s.durable_sequence)
    redis = EmbeddedRedis(workdir / "redis-feed", free_port()).start()
    port = free_port()
    last = Redis.from_url(redis.url)  # the feed is in order: the last thread is counted last
    try:
        started = time.monotonic()
        processes.append(await start("thread_memory", {
            **common, "THREAD_MEMORY_PORT": str(port),
            "THREAD_MEMORY_JOURNAL_ADDRESS": f"127.0.0.1:{journal_port}",
            "THREAD_MEMORY_AGENT_MEMORY_ADDRESS": "", "THREAD_MEMORY_REDIS_URL": redis.url,
            "THREAD_MEMORY_LOCAL_PATH": str(workdir / "feed-summaries"), "MODEL_BASE_URL": ""},
            port))
        while await last.hget(f"tm:counters:acme/helper/feed-{threads - 1}", "through") != b"40":
            await asyncio.sleep(0.05)
        elapsed = time.monotonic() - started
        print(f"feed counted from scratch (Redis empty): {durable.durable_sequence / elapsed:.0f}"
              f" messages/s   ({durable.durable_sequence} messages in {2 * threads + 2} "
              f"threads, {elapsed:.2f} s including start-up)", flush=True)
    finally:
        await last.aclose()
        redis.stop()


async def main(seconds: float, threads: int) -> None:
    workdir = scratch_dir("thread-memory-bench-")
    redis = EmbeddedRedis(workdir / "redis", free_port()).start()
    journal_port, memory_port = free_port(), free_port()
    common = {"LOG_LEVEL": "WARNING"}
    processes = []
    try:
        processes.append(await start("journal", {
            **common, "JOURNAL_PORT": str(journal_port),
            "JOURNAL_LOCAL_PATH": str(workdir / "journal")}, journal_port))
        processes.append(await start("thread_memory", {
            **common, "THREAD_MEMORY_PORT": str(memory_port),
            "THREAD_MEMORY_JOURNAL_ADDRESS": f"127.0.0.1:{journal_port}",
            "THREAD_MEMORY_AGENT_MEMORY_ADDRESS": "", "THREAD_MEMORY_REDIS_URL": redis.url,
            "THREAD_MEMORY_LOCAL_PATH": str(workdir / "summaries"), "MODEL_BASE_URL": "",
            "THREAD_MEMORY_FOLLOW_FEED": "false"}, memory_port))
        async with clients.channel(f"127.0.0.1:{journal_port}", default_timeout=30) as jc, \
                clients.channel(f"127.0.0.1:{memory_port}", default_timeout=30) as tc:
            journal, stub = JournalClient(jc), pb_grpc.ThreadMemoryServiceStub(tc)
            for start_at in range(0, 200, 100):
                await journal.append("busy", [message(f"m{i}", f"Message number {i}. More.")
                                              for i in range(start_at, start_at + 100)])
            await stub.Summarize(pb.SummarizeRequest(principal=principal(), thread_id="busy"))
            for concurrency in (1, 50):
                rate, p50, p99 = await context_load(stub, concurrency, seconds)
                print(f"GetThreadContext clients={concurrency:<3} {rate:6d}/s   p50 {p50:6.2f} ms"
                      f"   p99 {p99:6.2f} ms", flush=True)
            await journal.append("gap", [message(f"m{i}", f"Message {i}.") for i in range(30)])
            await stub.Summarize(pb.SummarizeRequest(principal=principal(), thread_id="gap"))
            await journal.append("gap", [message(f"n{i}", f"Message {i}.") for i in range(30)])
            rate, p50, p99 = await context_load(stub, 1, seconds, "gap")
            print(f"GetThreadContext with a gap   {rate:6d}/s   p50 {p50:6.2f} ms"
                  f"   p99 {p99:6.2f} ms", flush=True)

            for t in range(threads):
                await journal.append(f"job-{t}", [message(f"m{i}", f"Point {i} of thread {t}. "
                                                           "Then some detail.") for i in range(50)])
            semaphore = asyncio.Semaphore(8)

            async def summarize(t: int) -> None:
                async with semaphore:
                    reply = await stub.Summarize(pb.SummarizeRequest(principal=principal(),
                                                                     thread_id=f"job-{t}"))
                    assert reply.summarized and reply.summary.generator == "offline-extractive-v1"

            started = time.monotonic()
            await asyncio.gather(*(summarize(t) for t in range(threads)))
            elapsed = time.monotonic() - started
            print(f"summarization jobs (offline, 50 messages each): {threads / elapsed:.1f} jobs/s"
                  f"   ({threads} jobs in {elapsed:.2f} s)", flush=True)
            await feed_catch_up(journal, workdir, journal_port, common, processes, threads)
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(30)
        redis.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=100)
    args = parser.parse_args()
    uvloop.run(main(args.seconds, args.threads))
