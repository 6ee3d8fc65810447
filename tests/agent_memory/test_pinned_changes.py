"""WatchPinnedChanges: the accounts whose ListPinned answers may have changed, as
migration 0006's triggers announce them, and the end of the stream when this replica
stops hearing PostgreSQL."""

from __future__ import annotations

import asyncio

import asyncpg
import grpc
import pytest

from testkit.memory_client import pb, principal, store

ACME, GLOBEX = principal(account="acme", user="alice"), principal(account="globex", user="bob")
UMBRELLA = principal(account="umbrella", user="carol")


async def next_change(changes) -> pb.WatchPinnedChangesResponse:
    return await asyncio.wait_for(changes.read(), timeout=10)


async def test_every_change_to_a_pinned_answer_is_announced_and_a_recall_is_not(memory):
    changes = memory.stub.WatchPinnedChanges(pb.WatchPinnedChangesRequest())
    assert (await next_change(changes)).subscribed
    await memory.stub.Store(store("name", "Name is Alice", importance=0.9, who=ACME))
    assert (await next_change(changes)).account_id == "acme"
    await memory.stub.Recall(pb.RecallRequest(principal=ACME, query="Alice name"))
    await memory.stub.Forget(pb.ForgetRequest(principal=GLOBEX, key="nothing-there"))
    await memory.stub.Store(store("city", "Lives in Porto", importance=0.9, who=GLOBEX))
    # Announcements come in commit order: the recall's counters were not announced.
    assert (await next_change(changes)).account_id == "globex"
    await memory.stub.Forget(pb.ForgetRequest(principal=ACME, key="name"))
    assert (await next_change(changes)).account_id == "acme"
    changes.cancel()


async def test_a_statement_touching_many_rows_announces_each_account_once(memory):
    for i in range(20):
        await memory.stub.Store(store(f"k{i}", f"Fact number {i}", importance=0.9, who=ACME))
    changes = memory.stub.WatchPinnedChanges(pb.WatchPinnedChangesRequest())
    assert (await next_change(changes)).subscribed
    await memory.stub.Store(store("first", "The first fact", importance=0.9, who=GLOBEX))
    while (await next_change(changes)).account_id != "globex":
        pass  # the stores' announcements may still have been on their way
    connection = await asyncpg.connect(memory.dsn)
    try:
        await connection.execute("UPDATE memory_entries SET importance = 0.8")
        await connection.execute("UPDATE memory_entries SET recall_count = recall_count + 1")
    finally:
        await connection.close()
    await memory.stub.Store(store("last", "The last fact", importance=0.9, who=UMBRELLA))
    heard = [(await next_change(changes)).account_id for _ in range(3)]
    assert heard[-1] == "umbrella" and sorted(heard[:2]) == ["acme", "globex"], heard
    changes.cancel()


async def test_the_stream_ends_when_the_replica_stops_hearing_postgres(memory):
    changes = memory.stub.WatchPinnedChanges(pb.WatchPinnedChangesRequest())
    assert (await next_change(changes)).subscribed
    connection = await asyncpg.connect(memory.dsn)
    try:
        await connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND query LIKE 'LISTEN%'")
    finally:
        await connection.close()
    with pytest.raises(grpc.aio.AioRpcError) as lost:
        await next_change(changes)
    assert lost.value.code() == grpc.StatusCode.UNAVAILABLE
