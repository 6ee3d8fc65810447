"""Journal benchmarks over gRPC, against a journal running as its own process.

Durable Append throughput and latency with 1, 16 and 64 concurrent clients
(each appending one message at a time to its own thread), on the local
filesystem and on an S3-compatible server (SeaweedFS); ReadRecent(20) latency on
a thread of 10,000 messages. Targets on the local filesystem: >= 1,000 durable
appends/s at 64 clients, ReadRecent(20) p50 <= 2 ms.

    python -m bench.journal_bench [--seconds 5] [--stores local,s3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import uvloop

from libs import clients
from testkit.journal_client import JournalClient, message, principal
from testkit.journal_process import JournalProcess
from testkit.s3 import start_s3_server


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def append_load(client: JournalClient, concurrency: int, seconds: float) -> dict:
    latencies: list[float] = []
    stop_at = time.monotonic() + seconds
    run = uuid.uuid4().hex[:8]

    async def worker(n: int) -> None:
        thread, i = f"bench-{run}-{n}", 0
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            await client.append(thread, [message(f"m{i}", "a benchmark message of modest size " * 4)])
            latencies.append(time.perf_counter() - started)
            i += 1

    started = time.monotonic()
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    elapsed = time.monotonic() - started
    return {
        "appends/s": len(latencies) / elapsed,
        "p50 ms": percentile(latencies, 0.50) * 1000,
        "p99 ms": percentile(latencies, 0.99) * 1000,
        "n": len(latencies),
    }


async def read_recent_load(client: JournalClient, calls: int) -> dict:
    thread = f"long-{uuid.uuid4().hex[:8]}"
    for start in range(0, 10_000, 100):
        await client.append(thread, [message(f"m{i}") for i in range(start, start + 100)])
    latencies = []
    for _ in range(calls):
        started = time.perf_counter()
        window = await client.recent(thread, 20)
        latencies.append(time.perf_counter() - started)
    assert [m.offset for m in window] == list(range(9981, 10001))
    return {"p50 ms": percentile(latencies, 0.5) * 1000,
            "p99 ms": percentile(latencies, 0.99) * 1000,
            "mean ms": statistics.fmean(latencies) * 1000, "n": calls}


async def bench_store(name: str, env: dict[str, str], workdir: Path, seconds: float) -> None:
    journal = JournalProcess(env, workdir / f"journal-{name}.log").start()
    try:
        async with clients.channel(journal.address, default_timeout=30) as channel:
            client = JournalClient(channel)
            await client.append("warm-up", [message("w")], who=principal())
            for concurrency in (1, 16, 64):
                result = await append_load(client, concurrency, seconds)
                print(f"{name:<6} Append  clients={concurrency:<3} "
                      f"{result['appends/s']:8.0f} appends/s   p50 {result['p50 ms']:6.1f} ms"
                      f"   p99 {result['p99 ms']:6.1f} ms   (n={result['n']})", flush=True)
            result = await read_recent_load(client, 2000)
            print(f"{name:<6} ReadRecent(20) on 10,000 messages: p50 {result['p50 ms']:.2f} ms"
                  f"   p99 {result['p99 ms']:.2f} ms   mean {result['mean ms']:.2f} ms"
                  f"   (n={result['n']})", flush=True)
    finally:
        journal.terminate()


async def main(seconds: float, stores: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="journal-bench-") as tmp:
        workdir = Path(tmp)
        if "local" in stores:
            await bench_store("local", {"JOURNAL_LOCAL_PATH": str(workdir / "journal")},
                              workdir, seconds)
        if "s3" in stores:
            s3 = await asyncio.to_thread(start_s3_server, workdir / "s3", workdir / "weed.log")
            try:
                await bench_store("s3", s3.journal_env(), workdir, seconds)
            finally:
                s3.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each append run")
    parser.add_argument("--stores", default="local,s3", help="comma-separated: local, s3")
    args = parser.parse_args()
    uvloop.run(main(args.seconds, args.stores.split(",")))
