"""The change feed: ordered replay from a cursor, live follow, resume after restart."""

from __future__ import annotations

import asyncio

import grpc
from agentmemory.journal.v1 import journal_service_pb2 as pb

from libs import clients
from testkit.journal_client import JournalClient, message, principal
from testkit.journal_process import JournalProcess


async def take(stub, after: int, count: int, shard: int = 0, timeout: float = 20.0):
    """The next ``count`` events after ``after``; fails if they do not come in time."""
    call = stub.Subscribe(pb.SubscribeRequest(shard=shard, after_sequence=after), timeout=timeout)
    events = []
    try:
        async for event in call:
            events.append(event)
            if len(events) == count:
                break
    finally:
        call.cancel()
    assert len(events) == count, f"stream ended after {len(events)} of {count} events"
    return events


async def test_replay_from_a_cursor_in_order(journal):
    for thread in ("a", "b", "c"):
        await journal.append(thread, [message(f"{thread}{i}") for i in range(10)],
                             who=principal(user=f"user-{thread}"))
    events = await take(journal.stub, 0, 30)
    assert [e.sequence for e in events] == list(range(1, 31))
    assert [e.message.id for e in events[:3]] == ["a0", "a1", "a2"]
    last = events[-1]
    assert (last.thread_id, last.message.id, last.message.offset) == ("c", "c9", 10)
    assert (last.principal.account_id, last.principal.user_id) == ("acme", "user-c")
    assert last.principal.environment == "default"
    resumed = await take(journal.stub, 12, 18)
    assert [e.sequence for e in resumed] == list(range(13, 31))
    assert [(e.thread_id, e.message.id) for e in resumed] == [
        (e.thread_id, e.message.id) for e in events[12:]
    ]


async def test_follows_new_appends_live(journal):
    await journal.append("live", [message("before")])
    waiter = asyncio.create_task(take(journal.stub, 1, 5))
    await asyncio.sleep(0.3)
    assert not waiter.done()
    for i in range(5):
        await journal.append("live", [message(f"after{i}")])
    events = await asyncio.wait_for(waiter, 20)
    assert [e.message.id for e in events] == [f"after{i}" for i in range(5)]
    assert [e.sequence for e in events] == [2, 3, 4, 5, 6]


async def test_deduplicated_appends_do_not_reappear_in_the_feed(journal):
    await journal.append("t", [message("x"), message("y")])
    await journal.append("t", [message("x"), message("y"), message("z")])
    events = await take(journal.stub, 0, 3)
    assert [e.message.id for e in events] == ["x", "y", "z"]
    shards = await journal.stub.DescribeShards(pb.DescribeShardsRequest())
    assert shards.shard_count == 1 and shards.shards[0].durable_sequence == 3


async def test_bad_shard_or_cursor(local_journal):
    for request, field in ((pb.SubscribeRequest(shard=5), "shard"),
                           (pb.SubscribeRequest(after_sequence=-1), "after_sequence")):
        call = local_journal.stub.Subscribe(request, timeout=5)
        try:
            async for _ in call:
                raise AssertionError("no event expected")
        except grpc.aio.AioRpcError as exc:
            assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert field in exc.details()


async def test_consumer_resumes_after_journal_restart_without_loss_or_duplicate(
    local_store_env, tmp_path
):
    log = tmp_path / "journal.log"
    first = JournalProcess(local_store_env, log).start()
    async with clients.channel(first.address) as channel:
        client = JournalClient(channel)
        await client.append("feed", [message(f"m{i}") for i in range(20)])
        consumed = await take(client.stub, 0, 10)
    cursor = consumed[-1].sequence
    first.kill()  # no graceful shutdown: the cursor must still be enough

    second = JournalProcess(local_store_env, log).start()
    try:
        async with clients.channel(second.address) as channel:
            client = JournalClient(channel)
            await client.append("feed", [message(f"m{i}") for i in range(20, 25)])
            rest = await take(client.stub, cursor, 15)
    finally:
        assert second.terminate() == 0
    ids = [e.message.id for e in consumed + rest]
    assert ids == [f"m{i}" for i in range(25)]
    assert [e.sequence for e in consumed + rest] == list(range(1, 26))
