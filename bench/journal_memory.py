"""Journal memory under load: journal processes side by side, each with its own data and
the same load, their RSS every 30 s, to tell a cache filling from a leak.

One journal per ``--cache-mb`` value (JOURNAL_CACHE_MB; 0: no block cache), and with
``--baseline DIR`` one more run from another checkout (``git archive <commit> | tar -x
-C DIR``) with its defaults. Each gets 16 writers, each turn of a writer appending a
user and an assistant message (a new thread every 40), then ReadRecent(20) and
GetThreadStats of the thread, ``--pause`` seconds apart (0: as fast as it goes), and
two subscribers following the change feed from its start, as thread memory and
search do. The journals share the machine's cores, so their turns differ; each line
says how many each has served.

    python -m bench.journal_memory [--minutes 12] [--cache-mb 16,0] [--baseline DIR]
        [--pause 0]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import grpc
import uvloop
from agentmemory.journal.v1 import journal_service_pb2 as pb
from agentmemory.journal.v1 import journal_service_pb2_grpc as pb_grpc

from bench.scratch import scratch_dir
from bench.search_bench import sentence
from libs.healthcheck import is_serving
from testkit.journal_client import message, principal
from testkit.ports import free_port
from tools import launch

WRITERS, FOLLOWERS, MESSAGES_PER_THREAD = 16, 2, 40


@dataclass
class Journal:
    label: str
    process: subprocess.Popen
    address: str
    turns: int = 0

    def rss_mib(self) -> float:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0


def start(label: str, root: Path, env: dict[str, str]) -> Journal:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "services.journal"], cwd=root, stdin=subprocess.DEVNULL,
        env={**os.environ, **env, "JOURNAL_PORT": str(port), "JOURNAL_METRICS_PORT": "0",
             "JOURNAL_OBJECT_STORE": "local", "LOG_LEVEL": "WARNING",
             "JOURNAL_LOCAL_PATH": str(scratch_dir("journal-memory-"))})
    return Journal(label, process, f"127.0.0.1:{port}")


async def writer(journal: Journal, stub, n: int, stop_at: float, pause: float) -> None:
    rng, who, sent = random.Random(n), principal(user=f"user{n}"), 0
    while time.monotonic() < stop_at:
        thread = f"w{n}-t{sent // MESSAGES_PER_THREAD}"
        await stub.Append(pb.AppendRequest(principal=who, thread_id=thread, messages=[
            message(f"m{sent}", sentence(rng)), message(f"m{sent + 1}", sentence(rng))]))
        sent += 2
        await stub.ReadRecent(pb.ReadRecentRequest(principal=who, thread_id=thread, limit=20))
        await stub.GetThreadStats(pb.GetThreadStatsRequest(principal=who, thread_id=thread))
        journal.turns += 1
        await asyncio.sleep(pause)


async def follower(stub, stop_at: float) -> None:
    feed = stub.Subscribe(pb.SubscribeRequest(after_sequence=0),
                          timeout=stop_at - time.monotonic())
    with contextlib.suppress(grpc.aio.AioRpcError):  # its deadline ends it
        async for _ in feed:
            pass


async def main(minutes: float, caches: list[int], baseline: Path | None, pause: float) -> None:
    variants = [(f"JOURNAL_CACHE_MB={mb}", launch.ROOT, {"JOURNAL_CACHE_MB": str(mb)})
                for mb in caches]
    if baseline is not None:
        variants.append((f"baseline {baseline.name}", baseline, {}))
    journals = [start(*variant) for variant in variants]
    try:
        for journal in journals:
            while not is_serving(journal.address):
                assert journal.process.poll() is None, f"{journal.label} exited"
                await asyncio.sleep(0.2)
        stop_at = time.monotonic() + minutes * 60
        channels = [grpc.aio.insecure_channel(j.address) for j in journals]
        tasks = []
        for journal, channel in zip(journals, channels, strict=True):
            stub = pb_grpc.JournalServiceStub(channel)
            tasks += [asyncio.create_task(writer(journal, stub, n, stop_at, pause))
                      for n in range(WRITERS)]
            tasks += [asyncio.create_task(follower(stub, stop_at)) for _ in range(FOLLOWERS)]
        print("  s  " + " | ".join(f"{j.label:>26}" for j in journals), flush=True)
        first = [j.rss_mib() for j in journals]
        started = time.monotonic()
        while time.monotonic() < stop_at:
            await asyncio.sleep(min(30, max(0.0, stop_at - time.monotonic())))
            print(f"{time.monotonic() - started:4.0f} " + " | ".join(
                f"{j.rss_mib():7.1f} MiB {j.turns:>8} turns" for j in journals), flush=True)
        await asyncio.gather(*tasks)
        for channel in channels:
            await channel.close()
        print("grown: " + ", ".join(f"{j.label} {j.rss_mib() - mib:+.1f} MiB"
                                    for j, mib in zip(journals, first, strict=True)))
    finally:
        for journal in journals:
            journal.process.terminate()
            journal.process.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=12.0)
    parser.add_argument("--cache-mb", default="16,0",
                        help="JOURNAL_CACHE_MB of each journal, comma-separated")
    parser.add_argument("--baseline", type=Path,
                        help="another checkout: one more journal run from it, its defaults")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds between a writer's turns")
    options = parser.parse_args()
    uvloop.run(main(options.minutes, [int(mb) for mb in options.cache_mb.split(",")],
                    options.baseline and options.baseline.resolve(), options.pause))
