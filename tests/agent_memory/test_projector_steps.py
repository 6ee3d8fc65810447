"""The projector's claim, work and finish: a worker that dies between the steps loses
nothing, and a memory changed while a worker held it does not stay stale in the index.

A worker "dies" by having its task cancelled where it stands: like a killed process,
nothing after that point runs, and what it committed to PostgreSQL is all it leaves."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from libs import tasks
from services.agent_memory import index as vector_index
from services.agent_memory.index import IndexFilter
from services.agent_memory.memories import projector as projector_module
from services.agent_memory.memories.projector import LEASE_SECONDS
from testkit.memory_client import pb, store

COLLECTION = vector_index.collection_name("acme", "default", "local-bge-small-en")


async def outbox(memory) -> list:
    return await memory.service.repository.pool.fetch(
        "SELECT entry_id, claimed_by, next_attempt_at FROM memory_outbox ORDER BY id")


async def die_at(work, reached: asyncio.Event) -> None:
    """Run ``work`` until it reaches the point ``reached`` marks, and end it there."""
    worker = asyncio.ensure_future(work)
    await asyncio.wait_for(reached.wait(), 60)
    await tasks.cancelled(worker)


async def hang(reached: asyncio.Event) -> None:
    reached.set()
    await asyncio.Event().wait()


async def test_a_worker_that_dies_after_its_claim_leaves_the_rows_for_when_its_lease_ends(
        memory, monkeypatch):
    await memory.stub.Store(store("car", "Drives an electric Renault"))
    reached = asyncio.Event()

    async def embedding_hangs(*_):
        await hang(reached)

    with monkeypatch.context() as patched:
        patched.setattr(projector_module, "points_for", embedding_hangs)
        await die_at(memory.service.projector.run_once(), reached)
    [row] = await outbox(memory)
    assert row["claimed_by"] is not None  # the claim was committed before the work began
    assert row["next_attempt_at"] == memory.clock.now() + timedelta(seconds=LEASE_SECONDS)
    assert await memory.project() == 0  # leased: another worker leaves it alone
    memory.clock.advance(seconds=LEASE_SECONDS - 1)
    assert await memory.project() == 0
    memory.clock.advance(seconds=2)
    assert await memory.project() == 1
    assert await memory.service.index.count(COLLECTION) == 1
    assert await outbox(memory) == []


async def test_a_worker_that_dies_after_its_work_leaves_the_rows_to_be_projected_again(
        memory, monkeypatch):
    await memory.stub.Store(store("car", "Drives an electric Renault"))
    await memory.stub.Store(store("bike", "Rides a road bike"))
    index, reached = memory.service.index, asyncio.Event()
    upsert = index.upsert

    async def upsert_then_hang(name, points):
        await upsert(name, points)
        await hang(reached)

    with monkeypatch.context() as patched:
        patched.setattr(index, "upsert", upsert_then_hang)
        await die_at(memory.service.projector.run_once(), reached)
    assert await index.count(COLLECTION) == 2  # the work is done...
    assert [r["claimed_by"] is not None for r in await outbox(memory)] == [True, True]  # ...not
    memory.clock.advance(seconds=LEASE_SECONDS + 1)
    assert await memory.project() == 2  # the next worker projects them again: no harm
    assert await index.count(COLLECTION) == 2
    assert await outbox(memory) == []


async def test_a_memory_changed_while_a_worker_held_it_is_projected_again(memory, monkeypatch):
    """Worker A reads version 1 and is slow; worker B projects version 2 and finishes;
    then A's version 1 reaches the index. A's finish sees the version has moved on and
    queues the memory again, so the next pass puts version 2 back."""
    index, projector = memory.service.index, memory.service.projector
    await memory.stub.Store(store("home", "Lives in Berlin", pb.CATEGORY_PROJECT_FACT))
    embed, held, release = projector_module.points_for, asyncio.Event(), asyncio.Event()

    async def first_worker_waits(embedder, rows):
        points = await embed(embedder, rows)
        if not held.is_set():
            held.set()
            await release.wait()
        return points

    upserted: list[list[float]] = []
    upsert = index.upsert

    async def recorded(name, points):
        upserted.extend(p.dense for p in points)
        await upsert(name, points)

    monkeypatch.setattr(projector_module, "points_for", first_worker_waits)
    monkeypatch.setattr(index, "upsert", recorded)
    slow = asyncio.create_task(projector.run_once())
    await asyncio.wait_for(held.wait(), 60)
    await memory.stub.Store(store("home", "Moved to Amsterdam", pb.CATEGORY_PROJECT_FACT))
    assert await projector.run_once() == (1, True)  # B: version 2, finished
    release.set()
    assert await slow == (1, True)  # A: version 1, written after B's
    version_2 = upserted[0]

    async def best_score() -> float:
        where = IndexFilter(agent_id="helper", user_id=None, now=memory.clock.now().timestamp())
        return (await index.query_dense(COLLECTION, version_2, where, 1))[0].score

    assert await best_score() < 0.99  # the index holds version 1 now...
    assert len(await outbox(memory)) == 1  # ...and A queued the memory again
    assert await memory.project() == 1
    assert await best_score() > 0.999
    assert await outbox(memory) == []
