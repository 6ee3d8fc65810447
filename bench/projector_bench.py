"""The outbox projector: rows projected per second, and the longest PostgreSQL
transaction open while it works.

Agent memory runs in-process on an embedded PostgreSQL, the in-process Qdrant engine
and the local embedding model, with its loops off; ``--memories`` are stored through
gRPC, then the projector drains the outbox. Meanwhile a thread of its own samples
``pg_stat_activity`` every 5 ms for the oldest open transaction on the database (the
projector holds the only ones): with the embedding inside the claim's transaction it
lasts a whole batch; claimed, worked and finished apart, a few statements.

    python -m bench.projector_bench [--memories 1000] [--batch 64] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time

import asyncpg
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as pb_grpc
from agentmemory.common.v1 import principal_pb2

from bench.scratch import scratch_dir
from libs import clients
from services.agent_memory.app import running
from services.agent_memory.settings import AgentMemoryConfig
from testkit.postgres import fresh_database
from tools.backends.ports import free_port
from tools.backends.postgres import EmbeddedPostgres

SAMPLE_SECONDS = 0.005
AGENTS = 10


class LongestTransaction(threading.Thread):
    """The age of the oldest open transaction on one database, sampled until stopped."""

    def __init__(self, dsn: str) -> None:
        super().__init__(daemon=True)
        self._dsn = dsn
        self._stopping = threading.Event()
        self.longest = 0.0
        self.samples = 0

    def run(self) -> None:
        asyncio.run(self._sample())

    def stop(self) -> float:
        self._stopping.set()
        self.join()
        return self.longest

    async def _sample(self) -> None:
        connection = await asyncpg.connect(self._dsn)
        try:
            while not self._stopping.is_set():
                age = await connection.fetchval(
                    "SELECT coalesce(max(extract(epoch FROM clock_timestamp() - xact_start)), 0)"
                    " FROM pg_stat_activity WHERE datname = current_database()"
                    " AND pid <> pg_backend_pid() AND xact_start IS NOT NULL")
                self.longest = max(self.longest, float(age))
                self.samples += 1
                await asyncio.sleep(SAMPLE_SECONDS)
        finally:
            await connection.close()


async def one_run(postgres: EmbeddedPostgres, memories: int, batch: int) -> tuple[float, float]:
    """(rows projected per second, longest open transaction in seconds)."""
    dsn = await fresh_database(postgres)
    config = AgentMemoryConfig.from_env({
        "AGENT_MEMORY_PORT": "0", "AGENT_MEMORY_METRICS_PORT": "0",
        "AGENT_MEMORY_POSTGRES_DSN": dsn,
        "AGENT_MEMORY_INDEX_PATH": str(scratch_dir("projector-bench-index-")),
        "AGENT_MEMORY_PROJECTOR_BATCH": str(batch)})
    async with running(config, background=False) as service:
        async with clients.channel(f"127.0.0.1:{service.server.port}",
                                   default_timeout=60) as channel:
            stub = pb_grpc.AgentMemoryServiceStub(channel)
            for i in range(memories):
                who = principal_pb2.Principal(  # an agent keeps at most 200 project facts
                    account_id="bench", agent_id=f"agent{i % AGENTS}")
                await stub.Store(pb.StoreRequest(
                    principal=who, key=f"fact_{i}", category=pb.CATEGORY_PROJECT_FACT,
                    content=f"Project fact {i}: the build of module {i % 37} runs on "
                            f"worker {i % 11} and takes {i % 90 + 5} seconds."))
        sampler = LongestTransaction(dsn)
        sampler.start()
        started = time.perf_counter()
        projected = await service.projector.drain()
        elapsed = time.perf_counter() - started
        longest = sampler.stop()
    assert projected == memories, f"projected {projected} of {memories}"
    return projected / elapsed, longest


async def main(memories: int, batch: int, runs: int) -> None:
    postgres = EmbeddedPostgres(scratch_dir("projector-bench-pg-"), free_port()).start()
    try:
        results = [await one_run(postgres, memories, batch) for _ in range(runs)]
    finally:
        postgres.stop()
    rates, longest = zip(*results, strict=True)
    print(f"projector: {memories} memories, batch {batch}, {runs} runs")
    print(f"  rows/s                  median {statistics.median(rates):8.1f}"
          f"  (runs: {', '.join(f'{r:.1f}' for r in rates)})")
    print(f"  longest transaction ms  median {statistics.median(longest) * 1000:8.1f}"
          f"  (runs: {', '.join(f'{t * 1000:.1f}' for t in longest)})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.memories, arguments.batch, arguments.runs))
