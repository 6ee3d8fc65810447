"""The embedded index builds its HNSW graphs in the background (real qdrant-edge, a real
child process) and keeps answering, writes and searches included, while it does."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from uuid import UUID

import numpy
import pytest

from services.agent_memory.app import running
from services.agent_memory.index import IndexFilter, IndexPoint, payload, sparse
from services.agent_memory.index.edge import WORK, EdgeIndex
from services.agent_memory.index.optimizer import IndexOptimizer
from services.agent_memory.settings import AgentMemoryConfig
from testkit.clock import FakeClock
from testkit.postgres import fresh_database

DIMENSIONS = 384  # as the local embedding model: dense vectors outweigh sparse ones
AFTER = 400  # AGENT_MEMORY_INDEX_OPTIMIZE_AFTER_CHANGES in these tests
WORDS = ["invoice", "deploy", "backup", "kafka", "lisbon", "piano", "tea", "neovim", "jazz",
         "marathon", "oncall", "billing"]


def vectors(count: int, seed: int = 7) -> numpy.ndarray:
    found = numpy.random.default_rng(seed).normal(size=(count, DIMENSIONS))
    return found / numpy.linalg.norm(found, axis=1, keepdims=True)


def text(i: int) -> str:
    """One word of WORDS, in documents of distinct lengths: no two of its holders tie in
    BM25, so the hybrid ranking is one order, not a choice among equals."""
    return " ".join([WORDS[i % len(WORDS)], *(f"f{i}n{j}" for j in range(i // len(WORDS)))])


def points(first: int, count: int, seed: int = 7) -> list[IndexPoint]:
    dense = vectors(first + count, seed)
    return [IndexPoint(
        id=UUID(int=i + 1), dense=dense[i].tolist(),
        sparse=sparse.document_vector(text(i)),
        payload=payload(scope="agent", agent_id="helper", owner_user_id="",
                        kind=["project_fact", "observation"][i % 2], expires_at=None))
        for i in range(first, first + count)]


WHERE = IndexFilter("helper", None, time.time())


async def load(index: EdgeIndex, count: int) -> None:
    await index.ensure_collection("c", DIMENSIONS)
    for start in range(0, count, 250):
        await index.upsert("c", points(start, min(250, count - start)))


def ranking(hits) -> list[tuple[float, frozenset[UUID]]]:
    """Hits as groups of equal score, best first. Reciprocal-rank fusion ties often (rank 2
    in one leg and 5 in the other scores as 5 and 2): equals come in the shard's internal
    order, which the build changes. The last group may be cut by the limit: score only."""
    groups: dict[float, set[UUID]] = {}
    for hit in hits:
        groups.setdefault(round(hit.score, 9), set()).add(hit.id)
    found = [(score, frozenset(ids)) for score, ids in groups.items()]
    return [*found[:-1], (found[-1][0], frozenset())] if found else []


async def top_hits(index: EdgeIndex, count: int) -> list:
    """Dense top 10 (in order) and hybrid top 10 (up to ties) of fixed queries: every
    37th stored vector, nudged, with one word."""
    dense = vectors(count)
    found = []
    for i in range(0, count, 37):
        query = (dense[i] + 0.05 * dense[(i + 1) % count]).tolist()
        found.append([h.id for h in await index.query_dense("c", query, WHERE, 10)])
        found.append(ranking(await index.query(
            "c", query, sparse.query_vector(WORDS[i % len(WORDS)]), WHERE, 10)))
    return found


def gated(gate: Path, pid_file: Path):
    """The real child, held until ``gate`` exists: the test acts during a build."""
    script = ("import os, pathlib, sys, time\n"
              # Written then renamed: the test must never see the file empty.
              f"tmp = pathlib.Path({str(pid_file)!r} + '.tmp'); tmp.write_text(str(os.getpid()))\n"
              f"tmp.replace({str(pid_file)!r})\n"
              f"while not pathlib.Path({str(gate)!r}).exists(): time.sleep(0.02)\n"
              "from services.agent_memory.index.optimizer import main\n"
              "main(sys.argv[1])\n")
    return lambda work: [sys.executable, "-c", script, str(work)]


async def wait_for(path: Path) -> None:
    for _ in range(500):
        if await asyncio.to_thread(path.exists):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def test_writes_past_the_threshold_build_the_graphs_and_keep_the_top_hits(tmp_path):
    index = EdgeIndex(tmp_path, optimize_after_changes=AFTER)
    try:
        await load(index, 1500)
        assert await index.unindexed("c") == 1500
        assert await asyncio.wait_for(index.due(), 1) == "c"
        before = await top_hits(index, 1500)

        result = await IndexOptimizer(index).optimize("c")

        assert result is not None and result.optimized and result.points == 1500
        assert await index.unindexed("c") == 0
        after = await top_hits(index, 1500)
        assert after == before
        assert await index.count("c") == 1500
        assert not (tmp_path / WORK / "c").exists()
    finally:
        await index.close()


async def test_a_collection_below_the_threshold_stays_a_plain_scan(tmp_path):
    index = EdgeIndex(tmp_path, optimize_after_changes=AFTER)
    try:
        await load(index, AFTER - 50)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(index.due(), 0.3)
        # Qdrant itself finds nothing due: the shard's indexing threshold is the setting.
        result = await index.optimize("c")
        assert not result.optimized
        assert await index.unindexed("c") == AFTER - 50
    finally:
        await index.close()


async def test_writes_and_searches_during_a_build_succeed_and_survive_the_swap(tmp_path):
    index = EdgeIndex(tmp_path, optimize_after_changes=AFTER)
    gate, pid_file = tmp_path / "gate", tmp_path / "pid"
    try:
        await load(index, 1200)
        build = asyncio.create_task(index.optimize("c", gated(gate, pid_file)))
        await wait_for(pid_file)  # the child runs on its copy

        new = points(1200, 300)
        await index.upsert("c", new)
        gone = [UUID(int=i + 1) for i in range(0, 100)]
        await index.delete("c", gone)
        during = await index.query_dense("c", new[5].dense, WHERE, 1)
        assert during[0].id == new[5].id
        assert not build.done()

        gate.touch()
        result = await build
        assert result.optimized and result.points == 1200  # the copy: before the writes

        assert await index.count("c") == 1200 + 300 - 100
        for point in (new[0], new[150], new[299]):
            assert (await index.query_dense("c", point.dense, WHERE, 1))[0].id == point.id
        everything = {h.id for h in await index.query_dense("c", new[0].dense, WHERE, 1400)}
        assert everything.isdisjoint(gone)
        assert len(everything) == 1400
        # Only those written during the build are outside the graphs (the estimate counts
        # vectors deleted from a graph as indexed until a vacuum: an underestimate).
        assert 0 < await index.unindexed("c") <= 300

        later = points(1500, 50)
        await index.upsert("c", later)
        await index.delete("c", [new[0].id])
        assert (await index.query_dense("c", later[7].dense, WHERE, 1))[0].id == later[7].id
        assert (await index.query_dense("c", new[0].dense, WHERE, 1))[0].id != new[0].id
        assert await index.count("c") == 1200 + 300 - 100 + 50 - 1
    finally:
        await index.close()


async def test_shutdown_stops_a_build_and_leaves_the_shard_whole(tmp_path):
    index = EdgeIndex(tmp_path, optimize_after_changes=AFTER)
    gate, pid_file = tmp_path / "gate", tmp_path / "pid"
    await load(index, 1000)
    optimizer = IndexOptimizer(index)
    index_optimize = index.optimize
    index.optimize = lambda name: index_optimize(name, gated(gate, pid_file))  # never released
    worker = asyncio.create_task(optimizer.run_forever())
    try:
        await wait_for(pid_file)
        assert optimizer.pending == 1
        child = int(pid_file.read_text())
    finally:
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
    assert worker.cancelled()
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
    assert optimizer.pending == 0
    assert not (tmp_path / WORK / "c").exists()
    assert await index.count("c") == 1000
    assert await index.unindexed("c") == 1000
    await index.close()


async def test_start_up_queues_a_shard_left_with_many_points_outside_its_graphs(tmp_path):
    loaded = EdgeIndex(tmp_path)
    await load(loaded, 1000)
    await loaded.close()

    index = EdgeIndex(tmp_path, optimize_after_changes=AFTER)
    optimizer = IndexOptimizer(index)
    try:
        await optimizer.queue_startup()
        assert optimizer.pending == 1
        worker = asyncio.create_task(optimizer.run_forever())
        for _ in range(1500):
            if optimizer.pending == 0 and await index.unindexed("c") == 0:
                break
            await asyncio.sleep(0.02)
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
        assert await index.unindexed("c") == 0
        assert await index.count("c") == 1000
    finally:
        await index.close()


async def test_a_swap_stopped_between_its_renames_keeps_the_shard(tmp_path):
    index = EdgeIndex(tmp_path, optimize_after_changes=AFTER)
    await load(index, 300)
    await index.close()
    (tmp_path / WORK).mkdir()
    (tmp_path / "c").rename(tmp_path / WORK / "c.retired")

    reopened = EdgeIndex(tmp_path, optimize_after_changes=AFTER)
    try:
        assert await reopened.count("c") == 300
    finally:
        await reopened.close()


async def test_zero_never_builds_the_graphs(tmp_path):
    index = EdgeIndex(tmp_path, optimize_after_changes=0)
    optimizer = IndexOptimizer(index)
    try:
        await load(index, 1500)
        await optimizer.queue_startup()
        assert optimizer.pending == 0
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(index.due(), 0.3)
        assert await index.unindexed("c") == 1500
    finally:
        await index.close()


def test_the_setting_defaults_to_ten_thousand_and_zero_is_allowed():
    assert AgentMemoryConfig.from_env({}).storage.index_optimize_after_changes == 10_000
    assert AgentMemoryConfig.from_env({
        "AGENT_MEMORY_INDEX_OPTIMIZE_AFTER_CHANGES": "0"}).storage.index_optimize_after_changes == 0
    with pytest.raises(ValueError, match="INDEX_OPTIMIZE_AFTER_CHANGES"):
        AgentMemoryConfig.from_env({"AGENT_MEMORY_INDEX_OPTIMIZE_AFTER_CHANGES": "-1"})


async def test_the_service_builds_the_graphs_of_a_bulk_loaded_shard_at_start_up(postgres,
                                                                              tmp_path):
    """Through ``running``: the setting reaches the index, the start-up check queues the
    shard, the background worker builds it, shutdown is clean."""
    loaded = EdgeIndex(tmp_path / "qdrant")
    await load(loaded, 1000)
    await loaded.close()
    config = AgentMemoryConfig.from_env({
        "AGENT_MEMORY_PORT": "0", "AGENT_MEMORY_METRICS_PORT": "0",
        "AGENT_MEMORY_POSTGRES_DSN": await fresh_database(postgres),
        "AGENT_MEMORY_INDEX_PATH": str(tmp_path / "qdrant"),
        "AGENT_MEMORY_INDEX_OPTIMIZE_AFTER_CHANGES": str(AFTER)})
    async with running(config, clock=FakeClock()) as service:
        index = service.index
        assert isinstance(index, EdgeIndex)
        for _ in range(1500):
            if await index.unindexed("c") == 0:
                break
            await asyncio.sleep(0.02)
        assert await index.unindexed("c") == 0
        assert await index.count("c") == 1000
    assert not (tmp_path / "qdrant" / WORK / "c").exists()
