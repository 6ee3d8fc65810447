"""Store rules: visibility, no-op, replace, capacity, sizes, expiry, retries."""

from __future__ import annotations

import asyncio

import asyncpg
import grpc
import pytest

from testkit.journal_client import rpc_error
from testkit.memory_client import pb, principal, store
from tests.agent_memory.conftest import CATEGORY

ALICE = principal(user="alice")


async def test_private_without_a_user_silently_becomes_shared(memory):
    reply = await memory.stub.Store(store("tone", "Prefers a formal tone",
                                          visibility=pb.VISIBILITY_PRIVATE))
    assert reply.visibility == pb.VISIBILITY_SHARED
    assert reply.entry.visibility == pb.VISIBILITY_SHARED and reply.entry.user_id == ""
    with_user = await memory.stub.Store(store("tone", "Prefers a formal tone", who=ALICE,
                                              visibility=pb.VISIBILITY_PRIVATE))
    assert with_user.visibility == pb.VISIBILITY_PRIVATE and with_user.entry.user_id == "alice"


async def test_unspecified_visibility_is_private_with_a_user_and_shared_without(memory):
    assert (await memory.stub.Store(store("a", "likes tea", who=ALICE))).visibility == \
        pb.VISIBILITY_PRIVATE
    assert (await memory.stub.Store(store("b", "likes tea"))).visibility == pb.VISIBILITY_SHARED


async def outbox_rows(dsn: str) -> int:
    connection = await asyncpg.connect(dsn)
    try:
        return await connection.fetchval("SELECT count(*) FROM memory_outbox")
    finally:
        await connection.close()


async def test_identical_content_is_a_no_op_returning_the_existing_row(memory):
    first = await memory.stub.Store(store("lang", "Writes Python", importance=0.9))
    await memory.project()
    memory.clock.advance(hours=1)
    again = await memory.stub.Store(store("lang", "Writes Python", importance=0.2))
    assert again.unchanged and not again.replaced
    assert again.entry.id == first.entry.id
    assert again.entry.updated_at == first.entry.updated_at
    assert again.entry.importance == pytest.approx(0.9)
    assert await outbox_rows(memory.dsn) == 0  # nothing written, nothing to project


async def test_new_content_replaces_and_skips_the_capacity_check(memory):
    await asyncio.gather(*(memory.stub.Store(store(f"k{i}", f"fact {i}", who=ALICE))
                           for i in range(30)))
    full = await rpc_error(memory.stub.Store(store("k30", "one too many", who=ALICE)))
    assert full.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    replaced = await memory.stub.Store(store("k7", "fact 7, revised", who=ALICE))
    assert replaced.replaced and replaced.entry.content == "fact 7, revised"
    fetched = await memory.stub.GetEntry(pb.GetEntryRequest(principal=ALICE, key="k7"))
    assert fetched.entry.content == "fact 7, revised" and fetched.entry.id == replaced.entry.id


@pytest.mark.parametrize("category, per_agent, per_user", [
    ("user_profile", 100, 30), ("project_fact", 200, 50), ("observation", 500, 100),
])
async def test_capacity_per_category_per_user_and_per_agent(memory, category, per_agent, per_user):
    kind = CATEGORY[category]
    await asyncio.gather(*(memory.stub.Store(store(f"u{i}", f"user entry {i}", kind, who=ALICE))
                           for i in range(per_user)))
    over_user = await rpc_error(memory.stub.Store(store("u-over", "x", kind, who=ALICE)))
    assert over_user.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert over_user.reason == "CAPACITY_EXCEEDED"
    assert over_user.metadata == {"category": category, "per": "user", "limit": str(per_user)}
    # Another user still has room; shared entries count toward the agent only.
    await memory.stub.Store(store("u-bob", "bob's entry", kind, who=principal(user="bob")))
    remaining = per_agent - per_user - 1
    await asyncio.gather(*(memory.stub.Store(store(f"s{i}", f"shared entry {i}", kind))
                           for i in range(remaining)))
    over_agent = await rpc_error(memory.stub.Store(store("s-over", "x", kind)))
    assert over_agent.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert over_agent.metadata == {"category": category, "per": "agent", "limit": str(per_agent)}
    assert str(per_agent) in over_agent.message
    # Another agent of the same account has its own budget.
    await memory.stub.Store(store("s-over", "x", kind, who=principal(agent="other-agent")))


@pytest.mark.parametrize("category, limit", [
    ("user_profile", 2000), ("project_fact", 4000), ("observation", 2000),
])
async def test_maximum_content_size(memory, category, limit):
    kind = CATEGORY[category]
    at_limit = await memory.stub.Store(store("big", "x" * limit, kind))
    assert len(at_limit.entry.content) == limit
    error = await rpc_error(memory.stub.Store(store("bigger", "x" * (limit + 1), kind)))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT and "content" in error.field_violations


async def test_observations_expire_30_days_after_creation(memory):
    created = await memory.stub.Store(store("mood", "Seemed tired today", CATEGORY["observation"]))
    entry = created.entry
    assert entry.expires_at.ToDatetime() - entry.created_at.ToDatetime() == \
        __import__("datetime").timedelta(days=30)
    fact = await memory.stub.Store(store("stack", "Uses Postgres", CATEGORY["project_fact"]))
    assert not fact.entry.HasField("expires_at")
    memory.clock.advance(days=29, hours=23)
    assert (await memory.stub.GetEntry(pb.GetEntryRequest(principal=principal(), key="mood"))).entry
    memory.clock.advance(hours=2)
    gone = await rpc_error(memory.stub.GetEntry(pb.GetEntryRequest(principal=principal(), key="mood")))
    assert gone.code == grpc.StatusCode.NOT_FOUND
    listed = await memory.stub.ListEntries(pb.ListEntriesRequest(principal=principal()))
    assert [e.key for e in listed.entries] == ["stack"]


async def test_a_retried_request_id_answers_the_same_and_writes_once(memory):
    first = await memory.stub.Store(store("city", "Lives in Lisbon", request_id="req-1"))
    await memory.stub.Store(store("city", "Moved to Porto"))
    retried = await memory.stub.Store(store("city", "Lives in Lisbon", request_id="req-1"))
    assert retried.entry.id == first.entry.id and not retried.unchanged and not retried.replaced
    assert retried.entry.content == "Moved to Porto"  # the retry did not write again


@pytest.mark.parametrize("request_, field", [
    (store("", "content"), "key"),
    (store("k", ""), "content"),
    (store("k", "   "), "content"),
    (store("k", "c", category=pb.CATEGORY_UNSPECIFIED), "category"),
    (store("k", "c", category=42), "category"),
    (store("k", "c", importance=1.5), "importance"),
    (store("k", "c", importance=-0.1), "importance"),
    (store("k", "c", visibility=9), "visibility"),
    (store("x" * 201, "c"), "key"),
    (pb.StoreRequest(key="k", content="c", category=pb.CATEGORY_USER_PROFILE),
     "principal.account_id"),
])
async def test_bad_input_names_the_field(memory, request_, field):
    error = await rpc_error(memory.stub.Store(request_))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert field in error.field_violations


async def test_migrations_are_versioned_and_applied_once(memory):
    connection = await asyncpg.connect(memory.dsn)
    try:
        rows = await connection.fetch("SELECT service, version FROM schema_migrations")
    finally:
        await connection.close()
    assert [(r["service"], r["version"]) for r in rows] == [
        ("agent_memory", version) for version in range(1, 13)]  # 0001 to 0012, once each
