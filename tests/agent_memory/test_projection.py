"""The outbox projection: eventual, retried, and undone by Forget; Reindex rebuilds."""

from __future__ import annotations

import asyncio
import time

from libs.pacing import IdleBackoff
from services.agent_memory import index as vector_index
from testkit.memory_client import pb, principal, recall, store

COLLECTION = vector_index.collection_name("acme", "default", "local-bge-small-en")


async def test_forget_removes_the_entry_from_postgres_and_from_the_index(memory_on_both):
    memory = memory_on_both
    await memory.stub.Store(store("car", "Drives an electric Renault"))
    await memory.stub.Store(store("bike", "Rides a road bike"))
    await memory.project()
    assert await memory.service.index.count(COLLECTION) == 2
    assert (await memory.stub.Forget(pb.ForgetRequest(principal=principal(), key="car"))).forgotten
    recalled = await memory.stub.Recall(recall("electric car"))
    assert "car" not in [e.entry.key for e in recalled.entries]  # gone before projection too
    await memory.project()
    assert await memory.service.index.count(COLLECTION) == 1
    assert not (await memory.stub.Forget(pb.ForgetRequest(principal=principal(), key="car"))).forgotten


async def test_replaced_content_is_reprojected(memory):
    await memory.stub.Store(store("home", "Lives in Berlin", pb.CATEGORY_PROJECT_FACT))
    await memory.project()
    await memory.stub.Store(store("home", "Moved to Amsterdam", pb.CATEGORY_PROJECT_FACT))
    await memory.project()
    reply = await memory.stub.Recall(recall("Amsterdam", limit=1))
    assert not reply.fallback and reply.entries[0].entry.content == "Moved to Amsterdam"
    assert await memory.service.index.count(COLLECTION) == 1


async def test_reindex_rebuilds_the_collection_with_progress(memory_on_both):
    memory = memory_on_both
    for i in range(300):  # three agents: one collection per account and environment
        await memory.stub.Store(store(f"k{i}", f"project fact number {i}", pb.CATEGORY_PROJECT_FACT,
                                      who=principal(agent=f"agent{i % 3}")))
    await memory.stub.Store(store("other", "another account's fact", who=principal("globex")))
    await memory.service.index.drop(COLLECTION)  # the index is lost
    progress = [p async for p in memory.stub.Reindex(pb.ReindexRequest(principal=principal()))]
    assert progress[0].indexed == 0 and progress[-1].indexed == progress[-1].total == 300
    assert [p.indexed for p in progress] == sorted(p.indexed for p in progress)
    assert len(progress) >= 3 and progress[0].collection == COLLECTION
    assert await memory.service.index.count(COLLECTION) == 300
    reply = await memory.stub.Recall(recall("project fact number 123", limit=1,
                                            who=principal(agent="agent0")))
    assert not reply.fallback and reply.entries[0].entry.key == "k123"


async def test_agent_settings_record_the_memory_binding(memory):
    get = pb.GetAgentSettingsRequest(principal=principal())
    assert not (await memory.stub.GetAgentSettings(get)).settings.memory_bound
    await memory.stub.SetAgentSettings(pb.SetAgentSettingsRequest(
        principal=principal(), settings=pb.AgentSettings(memory_bound=True)))
    assert (await memory.stub.GetAgentSettings(get)).settings.memory_bound
    other = pb.GetAgentSettingsRequest(principal=principal(agent="another"))
    assert not (await memory.stub.GetAgentSettings(other)).settings.memory_bound


async def test_reindex_command_shows_progress(memory, capsys):
    from services.agent_memory.reindex import reindex

    for i in range(5):
        await memory.stub.Store(store(f"k{i}", f"fact {i}", pb.CATEGORY_PROJECT_FACT))
    address = f"127.0.0.1:{memory.service.server.port}"
    assert await reindex(address, "acme", "default") == 0
    out = capsys.readouterr().out
    assert f"{COLLECTION} [{'#' * 40}] 5/5 (100%)" in out


async def test_an_idle_projector_looks_less_often_and_a_notified_write_is_projected_at_once(
        memory, monkeypatch):
    """Another replica's write arrives by NOTIFY only (this process's kick is off)."""
    projector, repository = memory.service.projector, memory.service.repository
    monkeypatch.setattr(projector, "_poll", IdleBackoff(0.1, 30.0))  # the service's, faster
    monkeypatch.setattr(projector, "kick", lambda: None)
    looks: list[float] = []
    claim_outbox = repository.claim_outbox

    async def counted(*args):
        looks.append(time.monotonic())
        return await claim_outbox(*args)

    monkeypatch.setattr(repository, "claim_outbox", counted)
    running = asyncio.create_task(projector.run_forever())
    try:
        await asyncio.sleep(3.5)
        assert 4 <= len(looks) <= 7  # 0, 0.1, 0.3, 0.7, 1.5, 3.1: a steady poll looks 35 times
        written = time.monotonic()
        await memory.stub.Store(store("car", "Drives an electric Renault"))
        while await memory.service.index.count(COLLECTION) == 0:
            assert time.monotonic() - written < 10, "never projected"
            await asyncio.sleep(0.02)
        first_after = min(t for t in looks if t > written)
        assert first_after - written < 1.0  # woken by the NOTIFY, not the next look (at 6.3 s)
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
