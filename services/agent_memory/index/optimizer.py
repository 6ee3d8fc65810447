"""Background HNSW builds for the embedded index, and the child process that runs one.

qdrant-edge optimizes only when asked. ``IndexOptimizer`` asks, one shard at a
time: at start-up for every shard holding at least
``AGENT_MEMORY_INDEX_OPTIMIZE_AFTER_CHANGES`` points outside its HNSW graphs,
then whenever writes bring a shard there (``EdgeIndex.due``). The build itself
runs in a child process (``python -m services.agent_memory.index.optimizer
PATH``) on a copy of the shard: see ``index.edge``.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

from services.agent_memory.index import IndexUnavailable
from services.agent_memory.index.edge import EdgeIndex, Optimization

logger = logging.getLogger(__name__)


class IndexOptimizer:
    def __init__(self, index: EdgeIndex) -> None:
        self._index = index
        self._running = 0

    @property
    def pending(self) -> int:
        """Shards being optimized or waiting for it (a gauge: 0 when every graph is built)."""
        return self._running + self._index.queued

    async def queue_startup(self) -> None:
        """Queue the shards left with many points outside their graphs (a bulk load, an
        upgrade from a release that built none, a stop during a build)."""
        for name in self._index.collections():
            try:
                await self._index.check(name)
            except IndexUnavailable:
                logger.exception("index shard %s could not be checked for optimization", name)

    async def run_forever(self) -> None:
        while True:
            name = await self._index.due()
            self._running += 1
            try:
                result = await self.optimize(name)
            finally:
                self._running -= 1
            if result is not None and result.optimized:
                await self._index.check(name)  # writes made during the build may be due

    async def optimize(self, name: str) -> Optimization | None:
        try:
            outside = await self._index.unindexed(name)
            logger.info("index optimization of %s started: %d points outside the HNSW graphs",
                        name, outside)
            result = await self._index.optimize(name)
        except IndexUnavailable:
            logger.exception("index optimization of %s failed; searches keep scanning", name)
            return None
        if result.optimized:
            logger.info("index optimization of %s finished: %d points, graphs built in %.1f s,"
                        " writes and searches of the shard paused %.2f s",
                        name, result.points, result.seconds, result.pause_seconds)
        else:
            logger.info("index optimization of %s found nothing to do (%d points, %.1f s)",
                        name, result.points, result.seconds)
        return result


def main(path: str) -> None:
    """Optimize the shard copy at ``path``; print what was done as one JSON line."""
    import qdrant_edge

    os.nice(10)  # the build yields the CPU to the service it serves
    started = time.monotonic()
    shard = qdrant_edge.EdgeShard.load(path)
    try:
        optimized = shard.optimize()
        points = shard.info().points_count
    finally:
        shard.close()
    print(json.dumps({"optimized": optimized, "points": points,
                      "seconds": round(time.monotonic() - started, 3)}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
