"""Recall: hybrid through Qdrant, re-checked in PostgreSQL, with its keyword fallback."""

from __future__ import annotations

import grpc
import pytest

from libs import reranker
from services.agent_memory.index.server import QdrantServerIndex
from testkit.journal_client import rpc_error
from testkit.memory_client import pb, principal, recall, store
from tests.agent_memory.conftest import CATEGORY, start_memory

FACTS = {
    "drink": "Drinks oat-milk flat whites, never black coffee",
    "editor": "Codes in Neovim with a custom Lua configuration",
    "pet": "Has a golden retriever called Biscuit",
    "deploy": "Production deploys happen on Tuesdays after the change review",
    "language": "Speaks Portuguese at home and English at work",
    "allergy": "Allergic to peanuts, so team lunches avoid Thai food",
    "timezone": "Works from Lisbon, UTC+0 in winter",
    "database": "The billing service stores invoices in PostgreSQL 16",
}
QUERIES = {
    "what coffee does the user like": "drink",
    "which text editor do they use": "editor",
    "tell me about their dog": "pet",
    "when do we ship to production": "deploy",
    "what languages do they speak": "language",
    "food restrictions for lunch": "allergy",
    "where are invoices kept": "database",
}


async def store_facts(memory, who=None, category=pb.CATEGORY_PROJECT_FACT):
    for key, content in FACTS.items():
        await memory.stub.Store(store(key, content, category, who=who or principal()))


async def keys_for(memory, query, **kwargs):
    reply = await memory.stub.Recall(recall(query, **kwargs))
    return [e.entry.key for e in reply.entries], reply


async def test_recall_finds_the_right_entry_through_the_index(memory_on_both):
    memory = memory_on_both
    await store_facts(memory)
    assert await memory.project() == len(FACTS)
    for query, expected in QUERIES.items():
        keys, reply = await keys_for(memory, query)
        assert not reply.fallback
        assert keys[0] == expected, (query, keys)
        assert len(keys) == 5  # the default limit


async def test_limit_default_cap_and_bad_values(memory):
    for i in range(25):
        await memory.stub.Store(store(f"fact{i}", f"Remembered fact number {i} about anything",
                                      pb.CATEGORY_PROJECT_FACT))
    await memory.project()
    assert len((await memory.stub.Recall(recall("anything", limit=3))).entries) == 3
    assert len((await memory.stub.Recall(recall("anything"))).entries) == 5
    assert len((await memory.stub.Recall(recall("anything", limit=20))).entries) == 20
    # Seed 000: "capped at 20": a larger limit is capped, not refused.
    for large in (21, 1000):
        assert len((await memory.stub.Recall(recall("anything", limit=large))).entries) == 20
    error = await rpc_error(memory.stub.Recall(recall("anything", limit=-1)))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT and "limit" in error.field_violations
    error = await rpc_error(memory.stub.Recall(recall("   ")))
    assert "query" in error.field_violations


async def test_importance_boost_is_score_times_point_eight_plus_a_fifth_of_importance(memory):
    # Keyword fallback (nothing projected): the raw score is PostgreSQL's, the same
    # for both texts, so the ratio of the final scores is the ratio of the boosts.
    await memory.stub.Store(store("low", "Collects vintage typewriters", importance=0.0))
    await memory.stub.Store(store("mid", "Collects vintage typewriters", importance=0.5,
                                  who=principal(agent="helper2")))
    await memory.stub.Store(store("top", "Collects vintage typewriters", importance=1.0,
                                  who=principal(agent="helper3")))
    scores = {}
    for key, agent in (("low", "helper"), ("mid", "helper2"), ("top", "helper3")):
        reply = await memory.stub.Recall(recall("vintage typewriters", who=principal(agent=agent)))
        assert reply.fallback and [e.entry.key for e in reply.entries] == [key]
        scores[key] = reply.entries[0].score
    raw = scores["low"] / 0.8
    assert scores["mid"] == pytest.approx(raw * (0.8 + 0.5 * 0.2))
    assert scores["top"] == pytest.approx(raw * 1.0)


async def test_default_importance_is_one_half(memory):
    reply = await memory.stub.Store(store("plain", "Likes green tea"))
    assert reply.entry.importance == 0.5
    fetched = await memory.stub.GetEntry(pb.GetEntryRequest(principal=principal(), key="plain"))
    assert fetched.entry.importance == 0.5


async def test_importance_boosts_the_score(memory):
    await memory.stub.Store(store("a", "Enjoys hiking in the Alps", importance=0.0))
    await memory.stub.Store(store("b", "Enjoys hiking in the Alps!", importance=1.0))
    await memory.project()
    reply = await memory.stub.Recall(recall("hiking in the Alps", limit=2))
    by_key = {e.entry.key: e.score for e in reply.entries}
    assert list(by_key)[0] == "b"
    assert by_key["b"] > by_key["a"]


async def test_recall_updates_counters_of_what_it_returns(memory):
    await store_facts(memory)
    await memory.project()
    memory.clock.advance(minutes=5)
    reply = await memory.stub.Recall(recall("tell me about their dog", limit=1))
    assert reply.entries[0].entry.key == "pet"
    pet = (await memory.stub.GetEntry(pb.GetEntryRequest(principal=principal(), key="pet"))).entry
    assert pet.recall_count == 1
    assert pet.last_recalled_at.ToDatetime(tzinfo=memory.clock.now().tzinfo) == memory.clock.now()
    other = (await memory.stub.GetEntry(pb.GetEntryRequest(principal=principal(), key="drink")))
    assert other.entry.recall_count == 0


async def test_a_fresh_write_is_recalled_before_the_projector_runs(memory_on_both):
    memory = memory_on_both
    await store_facts(memory)
    await memory.project()
    await memory.stub.Store(store("bike", "Commutes by bicycle, a blue Brompton",
                                  pb.CATEGORY_PROJECT_FACT))
    keys, reply = await keys_for(memory, "how does the user commute by bicycle")
    assert not reply.fallback and "bike" in keys


async def test_empty_index_falls_back_to_keyword_search(memory):
    await store_facts(memory)  # nothing projected yet: the collection does not exist
    keys, reply = await keys_for(memory, "golden retriever")
    assert reply.fallback and keys[0] == "pet"
    keys, _ = await keys_for(memory, "invoices PostgreSQL")
    assert keys[0] == "database"
    keys, _ = await keys_for(memory, "Neovm Lua confguration")  # typos: trigram similarity
    assert keys[0] == "editor"


async def test_qdrant_down_falls_back_and_still_returns_the_right_entries(postgres, tmp_path):
    from qdrant_client import AsyncQdrantClient

    unreachable = QdrantServerIndex(AsyncQdrantClient(url="http://127.0.0.1:9", timeout=1))
    async for memory in start_memory(postgres, tmp_path, index=unreachable):
        await store_facts(memory)
        keys, reply = await keys_for(memory, "golden retriever dog")
        assert reply.fallback and keys[0] == "pet"
        assert await memory.project() == len(FACTS)  # deferred, not lost
        rows = await memory.service.repository.outbox_size()
        assert rows == len(FACTS)


async def test_category_filter(memory):
    await memory.stub.Store(store("coffee-fact", "The office coffee machine is broken",
                                  pb.CATEGORY_PROJECT_FACT))
    await memory.stub.Store(store("coffee-taste", "Likes strong coffee", pb.CATEGORY_USER_PROFILE))
    await memory.project()
    keys, _ = await keys_for(memory, "coffee", categories=[pb.CATEGORY_USER_PROFILE])
    assert keys == ["coffee-taste"]


@pytest.mark.parametrize("category", ["observation"])
async def test_expired_entries_are_never_recalled(memory, category):
    await memory.stub.Store(store("tired", "Looked tired in the standup", CATEGORY[category]))
    await memory.project()
    assert (await keys_for(memory, "tired standup"))[0] == ["tired"]
    memory.clock.advance(days=31)
    assert (await keys_for(memory, "tired standup"))[0] == []


async def test_recall_keeps_to_seed_000_categories(memory):
    from tests.agent_memory.library import add, new, who

    owner = who(user="u1")
    await add(memory.stub, owner, new("Deploys go out on Fridays", pb.MEMORY_KIND_PROJECT_FACT,
                                      key="fact"))
    for kind in (pb.MEMORY_KIND_DECISION, pb.MEMORY_KIND_BLOCK, pb.MEMORY_KIND_ARTIFACT_REF):
        await add(memory.stub, owner, new("Deploys go out on Fridays", kind))
    await memory.project()
    reply = await memory.stub.Recall(recall("when do deploys go out", who=owner, limit=20))
    assert [e.entry.key for e in reply.entries] == ["fact"] and not reply.fallback


async def test_rerank_orders_the_fused_pool_by_the_blend_with_the_cross_encoder(memory):
    await store_facts(memory)
    await memory.project()
    query = "what is the user allergic to"
    plain = await memory.stub.Recall(recall(query, limit=3))
    reranked = await memory.stub.Recall(recall(query, limit=3, rerank=True))
    assert (plain.reranked, reranked.reranked) == (False, True)
    pool = (await memory.stub.Recall(recall(query, limit=20))).entries  # the fused pool
    model = reranker.CrossEncoder()
    try:
        given = await model.scores(query, [f"{e.entry.key}: {e.entry.content}" for e in pool])
    finally:
        await model.close()
    blended = reranker.blended(given)  # the model's ranks blended with the fused ones
    best = sorted(range(len(pool)), key=lambda i: -blended[i])[:3]
    assert [e.entry.key for e in reranked.entries] == [pool[i].entry.key for i in best]
    assert reranked.entries[0].entry.key == "allergy"
