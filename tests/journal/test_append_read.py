"""Append, read back, idempotent retry, paging, isolation: on local FS and on S3."""

from __future__ import annotations

import grpc
from agentmemory.journal.v1 import journal_service_pb2 as pb

from testkit.journal_client import ASSISTANT, message, principal, rpc_error


async def test_append_returns_dense_offsets_and_reads_back(journal):
    reply = await journal.append("t1", [message("m1", "hello"), message("m2", "hi", ASSISTANT)])
    assert [(r.message_id, r.offset, r.deduplicated) for r in reply.results] == [
        ("m1", 1, False), ("m2", 2, False)
    ]
    assert reply.last_offset == 2
    reply = await journal.append("t1", [message("m3", "how are you?")])
    assert reply.results[0].offset == 3

    recent = await journal.recent("t1")
    assert [(m.id, m.offset, m.content) for m in recent] == [
        ("m1", 1, "hello"), ("m2", 2, "hi"), ("m3", 3, "how are you?")
    ]
    assert all(m.token_count > 0 and m.created_at.seconds > 0 for m in recent)
    assert [m.id for m in await journal.recent("t1", limit=2)] == ["m2", "m3"]


async def test_retried_append_returns_original_offsets_and_writes_nothing(journal):
    batch = [message("a"), message("b"), message("c")]
    first = await journal.append("t-retry", batch)
    again = await journal.append("t-retry", batch)
    assert [r.offset for r in again.results] == [r.offset for r in first.results]
    assert all(r.deduplicated for r in again.results)
    stats = await journal.stats("t-retry")
    assert (stats.message_count, stats.last_offset) == (3, 3)
    # A batch mixing old and new ids writes only the new ones.
    mixed = await journal.append("t-retry", [message("c"), message("d")])
    assert [(r.offset, r.deduplicated) for r in mixed.results] == [(3, True), (4, False)]
    assert [m.id for m in await journal.read_all("t-retry")] == ["a", "b", "c", "d"]


async def test_same_id_with_different_content_is_a_conflict_not_a_silent_drop(journal):
    await journal.append("t-conflict", [message("x", "original")])
    error = await rpc_error(journal.append("t-conflict", [message("x", "something else")]))
    assert error.code == grpc.StatusCode.ALREADY_EXISTS
    assert error.reason == "MESSAGE_ID_CONFLICT"
    assert [m.content for m in await journal.read_all("t-conflict")] == ["original"]


async def test_read_range_pages_through_a_thread(journal):
    await journal.append("t-pages", [message(f"m{i}") for i in range(1, 101)])
    await journal.append("t-pages", [message(f"m{i}") for i in range(101, 201)])
    await journal.append("t-pages", [message(f"m{i}") for i in range(201, 251)])
    messages = await journal.read_all("t-pages", page_size=64)
    assert [m.offset for m in messages] == list(range(1, 251))
    reply = await journal.stub.ReadRange(
        pb.ReadRangeRequest(principal=principal(), thread_id="t-pages", from_offset=240, page_size=5)
    )
    assert [m.offset for m in reply.messages] == [240, 241, 242, 243, 244]
    assert reply.next_page_token
    follow = await journal.stub.ReadRange(
        pb.ReadRangeRequest(principal=principal(), thread_id="t-pages",
                            page_token=reply.next_page_token, page_size=50)
    )
    assert [m.offset for m in follow.messages] == list(range(245, 251))
    assert follow.next_page_token == ""


async def test_unknown_thread_reads_empty_not_an_error(journal):
    assert await journal.recent("never-written") == []
    assert await journal.read_all("never-written") == []
    stats = await journal.stats("never-written")
    assert (stats.message_count, stats.last_offset, stats.token_count) == (0, 0, 0)


async def test_threads_never_cross_accounts_agents_or_users(journal):
    alice = principal(user="alice")
    await journal.append("shared-id", [message("secret", "alice's words")], who=alice)
    await journal.append("shared-id", [message("other", "b's words")], who=principal("other-co"))

    assert [m.id for m in await journal.recent("shared-id", who=alice)] == ["secret"]
    assert [m.id for m in await journal.recent("shared-id", who=principal("other-co"))] == ["other"]
    # Same account, another agent or another user: the thread does not exist for them.
    assert await journal.recent("shared-id", who=principal(agent="other-agent")) == []
    assert await journal.recent("shared-id", who=principal(user="bob")) == []
    assert await journal.recent("shared-id", who=principal()) == []
    assert (await journal.stats("shared-id", who=principal(user="bob"))).message_count == 0
    error = await rpc_error(
        journal.append("shared-id", [message("intrude")], who=principal(user="bob"))
    )
    assert error.code == grpc.StatusCode.NOT_FOUND
    assert [m.id for m in await journal.read_all("shared-id", who=alice)] == ["secret"]


async def test_thread_without_owner_is_shared_by_the_agents_callers(journal):
    await journal.append("team", [message("m1")])
    await journal.append("team", [message("m2")], who=principal(user="carol"))
    assert [m.id for m in await journal.recent("team", who=principal(user="dave"))] == ["m1", "m2"]


async def test_stats_count_messages_and_tokens(journal):
    await journal.append("t-stats", [message("a", "one two three"), message("b", "four")])
    stats = await journal.stats("t-stats")
    messages = await journal.recent("t-stats")
    assert stats.message_count == 2 and stats.last_offset == 2
    assert stats.token_count == sum(m.token_count for m in messages) > 0


async def test_stats_after_an_offset_count_only_the_later_messages(journal):
    alice = principal(user="alice", environment="staging")
    texts = [" ".join(["word"] * (i * 7 + 1)) for i in range(12)]
    await journal.append("t-after", [message(f"m{i}", text) for i, text in enumerate(texts)],
                         who=alice)
    messages = await journal.read_all("t-after", who=alice)
    for after in (0, 1, 4, 5, 6, 7, 11, 12, 40):
        stats = await journal.stub.GetThreadStats(pb.GetThreadStatsRequest(
            principal=alice, thread_id="t-after", after_offset=after))
        later = [m for m in messages if m.offset > after]
        assert (stats.last_offset, stats.messages_after) == (12, len(later)), after
        assert stats.tokens_after == sum(m.token_count for m in later), after
        assert stats.owner == principal(user="alice", environment="staging")
    stranger = await journal.stub.GetThreadStats(pb.GetThreadStatsRequest(
        principal=principal(user="bob"), thread_id="t-after", after_offset=3))
    assert stranger == pb.GetThreadStatsResponse()  # no counts and no owner for others
    shared = await journal.append("t-shared", [message("s")])
    stats = await journal.stub.GetThreadStats(pb.GetThreadStatsRequest(
        principal=principal(user="carol"), thread_id="t-shared"))
    assert shared.last_offset == stats.messages_after == 1
    assert stats.owner == principal(environment="default")  # nobody's: shared
    error = await rpc_error(journal.stub.GetThreadStats(pb.GetThreadStatsRequest(
        principal=principal(), thread_id="t-after", after_offset=-1)))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT and "after_offset" in error.field_violations


async def test_a_message_at_the_size_limits_is_stored_whole(journal):
    content = "ü" * (512 * 1024)  # 1 MiB of UTF-8, the limit
    await journal.append("t-big", [message("big", content), message("small", "after it")])
    stored = await journal.read_all("t-big")
    assert [m.id for m in stored] == ["big", "small"]
    assert stored[0].content == content and stored[0].token_count > 0


async def test_purge_deletes_a_thread_for_good(journal):
    from agentmemory.common.v1 import message_pb2
    from agentmemory.journal.v1 import journal_service_pb2 as pb

    await journal.append("doomed", [message("a", "secret one"), message(
        "b", "calling", ASSISTANT, tool_calls=[message_pb2.ToolCall(id="c9", name="t")])])
    await journal.append("kept", [message("k", "stays")])
    stranger = await rpc_error(journal.stub.PurgeThread(pb.PurgeThreadRequest(
        principal=principal(user="mallory"), thread_id="nope")))
    assert stranger.code == grpc.StatusCode.NOT_FOUND
    reply = await journal.stub.PurgeThread(pb.PurgeThreadRequest(principal=principal(),
                                                                 thread_id="doomed"))
    assert reply.deleted_messages == 2
    assert await journal.recent("doomed") == [] and await journal.read_all("doomed") == []
    assert (await journal.stats("doomed")).message_count == 0
    gone = await rpc_error(journal.stub.GetToolCall(pb.GetToolCallRequest(
        principal=principal(), tool_call_id="c9")))
    assert gone.code == grpc.StatusCode.NOT_FOUND
    reuse = await rpc_error(journal.append("doomed", [message("c", "again")]))
    assert reuse.code == grpc.StatusCode.FAILED_PRECONDITION and reuse.reason == "THREAD_PURGED"
    # The change feed skips the purged thread's events.
    call = journal.stub.Subscribe(pb.SubscribeRequest(after_sequence=0), timeout=5)
    first = await call.read()
    call.cancel()
    assert first.thread_id == "kept" and first.sequence == 3
    assert [m.id for m in await journal.recent("kept")] == ["k"]
