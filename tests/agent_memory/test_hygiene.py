"""Hygiene with a controllable clock: expiry leaves every read; stale facts decay."""

from __future__ import annotations

import pytest

from services.agent_memory import index as vector_index
from testkit.memory_client import pb, principal, recall, store


async def importance(memory, key) -> float:
    reply = await memory.stub.GetEntry(pb.GetEntryRequest(principal=principal(), key=key))
    return round(reply.entry.importance, 6)


async def hygiene(memory) -> pb.RunHygieneResponse:
    return await memory.stub.RunHygiene(pb.RunHygieneRequest())


async def test_expired_observations_are_removed_from_the_database_and_the_index(memory):
    await memory.stub.Store(store("seen", "Mentioned a job interview", pb.CATEGORY_OBSERVATION))
    await memory.stub.Store(store("kept", "Works on the payments team", pb.CATEGORY_PROJECT_FACT))
    await memory.project()
    name = vector_index.collection_name("acme", "default", "local-bge-small-en")
    assert await memory.service.index.count(name) == 2
    memory.clock.advance(days=30, seconds=1)
    assert (await hygiene(memory)).expired == 1
    await memory.project()
    assert await memory.service.index.count(name) == 1
    listed = await memory.stub.ListEntries(pb.ListEntriesRequest(principal=principal()))
    assert [e.key for e in listed.entries] == ["kept"]
    assert (await hygiene(memory)).expired == 0


async def test_unrecalled_facts_and_observations_decay_profiles_never(memory):
    await memory.stub.Store(store("fact", "Uses Kafka for events", pb.CATEGORY_PROJECT_FACT,
                                  importance=0.5))
    await memory.stub.Store(store("obs", "Seemed unsure about Kafka", pb.CATEGORY_OBSERVATION,
                                  importance=0.35))
    await memory.stub.Store(store("profile", "Is called Kim", pb.CATEGORY_USER_PROFILE,
                                  importance=0.5))
    await memory.stub.Store(store("recalled", "Deploys with Argo CD", pb.CATEGORY_PROJECT_FACT,
                                  importance=0.5))
    await memory.project()
    memory.clock.advance(days=89)
    assert (await hygiene(memory)).decayed == 0
    await memory.stub.Recall(recall("Argo CD deploys", limit=1))  # recalled on day 89
    memory.clock.advance(days=1, seconds=1)
    assert (await hygiene(memory)).decayed == 1  # the observation expired at 30 days
    assert await importance(memory, "fact") == pytest.approx(0.4)
    assert await importance(memory, "profile") == pytest.approx(0.5)
    assert await importance(memory, "recalled") == pytest.approx(0.5)
    # At most one step a day, however often hygiene runs.
    assert (await hygiene(memory)).decayed == 0
    memory.clock.advance(days=1)
    await hygiene(memory)
    assert await importance(memory, "fact") == pytest.approx(0.3)
    for _ in range(5):
        memory.clock.advance(days=1)
        await hygiene(memory)
    assert await importance(memory, "fact") == pytest.approx(0.1)  # the floor
    assert await importance(memory, "profile") == pytest.approx(0.5)
    memory.clock.advance(days=84)  # 91 days since "recalled" was last recalled
    await hygiene(memory)
    assert await importance(memory, "recalled") == pytest.approx(0.4)


async def test_decay_runs_in_batches_until_every_stale_entry_has_stepped_once(memory):
    for i in range(7):
        await memory.stub.Store(store(f"fact{i}", f"Project fact number {i}",
                                      pb.CATEGORY_PROJECT_FACT, importance=0.5))
    memory.clock.advance(days=90, seconds=1)
    assert await memory.service.repository.decay(memory.clock.now(), batch=3) == 7
    assert [await importance(memory, f"fact{i}") for i in range(7)] == [pytest.approx(0.4)] * 7
    assert await memory.service.repository.decay(memory.clock.now(), batch=3) == 0
