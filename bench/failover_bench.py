"""Journal failover: kill -9 a shard's writer under load, N times; print takeover times
and what the clients saw.

Runs the production topology of ``make topology`` (tools/topology.py: two journal
shards, each with a writer and a standby under leases, two replicas of every
service) and a load of clients appending and building context through both
gateways (testkit/gateway_load.py: no client-side gRPC retries, so every error
reaches the client and is counted; UNAVAILABLE is retried by the client). Each
run kills the current writer of one shard (alternating), measures the time until
another process reports SERVING for that shard (the takeover), then restarts the
killed process, which comes back as the shard's standby. After all runs it checks
that every acknowledged message is in the journal at its offset.

    python -m bench.failover_bench [--runs 5] [--lease-seconds 2] [--clients 6] [--data DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from testkit.gateway_load import GatewayLoad, check_acknowledged, threads_on
from tools.topology import SHARDS, Topology


async def one_run(topology: Topology, load: GatewayLoad, shard: int) -> dict:
    writer = await asyncio.to_thread(topology.writer_of, shard)
    errors_before = sum(load.seen.errors.values())
    outages_before = len(load.seen.outages)
    killed_at = time.monotonic()
    writer.kill()
    while True:
        now_writer = await asyncio.to_thread(topology.writer_of, shard)
        if now_writer is not None and now_writer is not writer:
            break
        await asyncio.sleep(0.02)
    takeover = time.monotonic() - killed_at
    await asyncio.sleep(3)  # the clients' retries land on the new writer
    await asyncio.to_thread(topology.restart, writer.name)
    waits = [end - start for _, start, end in load.seen.outages[outages_before:]]
    return {"shard": shard, "killed": writer.name, "writer": now_writer.name,
            "takeover": takeover, "errors": sum(load.seen.errors.values()) - errors_before,
            "longest_wait": max(waits, default=0.0)}


async def bench(runs: int, lease_seconds: float, clients: int, root: Path) -> None:
    topology = await asyncio.to_thread(Topology(root, lease_seconds=lease_seconds).start)
    threads = [t for shard in range(SHARDS)
               for t in threads_on(shard, "bench", max(1, clients // SHARDS))]
    load = GatewayLoad(topology, threads, tools=False)
    running = asyncio.create_task(load.run())
    results = []
    try:
        await asyncio.sleep(3)
        for run in range(runs):
            results.append(await one_run(topology, load, run % SHARDS))
            await asyncio.sleep(lease_seconds)
        load.stop.set()
        await running
        checked = await check_acknowledged(topology, load.seen.acked)
    finally:
        load.stop.set()
        await asyncio.gather(running, return_exceptions=True)
        await load.close()
        await asyncio.to_thread(topology.stop)
    report(results, load, lease_seconds, len(threads), checked)


def report(results: list[dict], load: GatewayLoad, lease_seconds: float, clients: int,
           checked: int) -> None:
    print(f"journal failover: kill -9 of a shard's writer, {len(results)} runs, "
          f"{lease_seconds:g} s leases, {clients} clients through 2 gateways")
    print(f"{'run':>3}  {'shard':>5}  {'killed':<11} {'new writer':<11} {'takeover s':>10}  "
          f"{'client errors':>13}  {'longest client wait s':>21}")
    for i, r in enumerate(results, 1):
        print(f"{i:>3}  {r['shard']:>5}  {r['killed']:<11} {r['writer']:<11} "
              f"{r['takeover']:>10.2f}  {r['errors']:>13}  {r['longest_wait']:>21.2f}")
    takeovers = [r["takeover"] for r in results]
    waits = [r["longest_wait"] for r in results]
    codes = ", ".join(f"{method} {code}: {n}" for (method, code), n in sorted(
        load.seen.errors.items())) or "none"
    print(f"takeover: p50 {statistics.median(takeovers):.2f} s, max {max(takeovers):.2f} s")
    print(f"longest client wait per run: p50 {statistics.median(waits):.2f} s, "
          f"max {max(waits):.2f} s")
    print(f"client-visible errors: {sum(load.seen.errors.values())} ({codes}); "
          f"unexpected: {len(load.seen.unexpected)}")
    print(f"acknowledged messages checked in the journal: {checked}, none missing")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lease-seconds", type=float, default=2.0)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--data", type=Path, help="keep data and logs here (default: a "
                        "temporary directory, removed at the end)")
    args = parser.parse_args()
    if args.data:
        asyncio.run(bench(args.runs, args.lease_seconds, args.clients, args.data))
        return
    with tempfile.TemporaryDirectory(prefix="failover-bench-") as root:
        asyncio.run(bench(args.runs, args.lease_seconds, args.clients, Path(root)))


if __name__ == "__main__":
    main()
