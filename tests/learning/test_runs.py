"""Runs in the journal: boundaries in the feed order, run ids on messages, idle timeout,
and the same boundaries after a journal restart."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest
from agentmemory.common.v1 import run_pb2
from agentmemory.journal.v1 import journal_service_pb2 as pb

from libs import clients
from testkit.journal_client import JournalClient, message, principal, rpc_error
from testkit.journal_process import JournalProcess

SUCCEEDED, TIMED_OUT = run_pb2.RUN_OUTCOME_SUCCEEDED, run_pb2.RUN_OUTCOME_TIMED_OUT
STARTED, FINISHED = run_pb2.RUN_BOUNDARY_KIND_STARTED, run_pb2.RUN_BOUNDARY_KIND_FINISHED
ALL = pb.FEED_CONTENT_MESSAGES_AND_RUNS


async def start(journal, thread, run_id, who=None):
    return await journal.stub.StartRun(pb.StartRunRequest(
        principal=who or principal(), thread_id=thread, run_id=run_id))


async def finish(journal, thread, run_id, outcome=SUCCEEDED, who=None):
    return await journal.stub.FinishRun(pb.FinishRunRequest(
        principal=who or principal(), thread_id=thread, run_id=run_id, outcome=outcome))


async def feed(stub, content=ALL, after=0, count=None, timeout=10.0):
    """Every event after ``after`` (until ``count`` or a quiet second)."""
    call = stub.Subscribe(pb.SubscribeRequest(after_sequence=after, content=content),
                          timeout=timeout)
    events = []
    try:
        while count is None or len(events) < count:
            event = await asyncio.wait_for(call.read(), 1.0 if count is None else timeout)
            if event is grpc.aio.EOF:
                break
            events.append(event)
    except TimeoutError:
        pass
    finally:
        call.cancel()
    return events


def shape(events):
    return [("run", e.run_boundary.kind, e.run_boundary.run.run_id)
            if e.HasField("run_boundary") else ("message", e.message.id, e.message.run_id)
            for e in events]


async def test_boundaries_and_messages_share_one_order_and_offsets_stay_dense(local_journal):
    journal = local_journal
    await journal.append("t", [message("before")])
    started = await start(journal, "t", "run-1")
    assert (started.run.after_offset, started.run.state) == (1, run_pb2.RUN_STATE_OPEN)
    reply = await journal.append("t", [message("m1"), message("m2", run_id="run-1")])
    assert list(r.offset for r in reply.results) == [2, 3]
    finished = await finish(journal, "t", "run-1")
    assert (finished.run.after_offset, finished.run.last_offset) == (1, 3)
    assert finished.run.outcome == SUCCEEDED and finished.run.HasField("finish_time")
    await journal.append("t", [message("after")])

    events = await feed(journal.stub)
    assert shape(events) == [("message", "before", ""), ("run", STARTED, "run-1"),
                             ("message", "m1", "run-1"), ("message", "m2", "run-1"),
                             ("run", FINISHED, "run-1"), ("message", "after", "")]
    assert [e.sequence for e in events] == [1, 2, 3, 4, 5, 6]
    assert [m.offset for m in await journal.read_all("t")] == [1, 2, 3, 4]
    # Consumers that predate runs see messages only; a runs-only consumer sees boundaries only.
    assert [e.message.id for e in await feed(journal.stub, pb.FEED_CONTENT_UNSPECIFIED)] == [
        "before", "m1", "m2", "after"]
    runs_only = await feed(journal.stub, pb.FEED_CONTENT_RUNS)
    assert [(e.sequence, e.run_boundary.kind) for e in runs_only] == [(2, STARTED), (5, FINISHED)]
    assert runs_only[1].run_boundary.run.last_offset == 3


async def test_run_rules_idempotency_and_errors(local_journal):
    journal = local_journal
    first = await start(journal, "t", "r1")
    again = await start(journal, "t", "r1")
    assert again.deduplicated and not first.deduplicated
    assert (await rpc_error(start(journal, "t", "r2"))).reason == "RUN_IN_PROGRESS"
    wrong = await rpc_error(journal.append("t", [message("x", run_id="r2")]))
    assert (wrong.code, wrong.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "RUN_NOT_OPEN")
    await finish(journal, "t", "r1")
    repeat = await finish(journal, "t", "r1")
    assert repeat.deduplicated and repeat.run.outcome == SUCCEEDED
    other = await rpc_error(finish(journal, "t", "r1", run_pb2.RUN_OUTCOME_FAILED))
    assert other.reason == "RUN_ALREADY_FINISHED"
    assert (await rpc_error(start(journal, "t", "r1"))).reason == "RUN_ALREADY_FINISHED"
    assert (await rpc_error(finish(journal, "t", "nope"))).reason == "RUN_NOT_FOUND"
    closed = await rpc_error(journal.append("t", [message("y", run_id="r1")]))
    assert closed.reason == "RUN_NOT_OPEN"
    bad = await rpc_error(finish(journal, "t", "r1", TIMED_OUT))
    assert (bad.code, list(bad.field_violations)) == (grpc.StatusCode.INVALID_ARGUMENT, ["outcome"])
    bad = await rpc_error(start(journal, "t", "bad/id"))
    assert list(bad.field_violations) == ["run_id"]
    # Another user's thread: no runs, no hint.
    await start(journal, "mine", "r", who=principal(user="ana"))
    hidden = await rpc_error(start(journal, "mine", "r9", who=principal(user="bob")))
    assert hidden.reason == "THREAD_NOT_FOUND"
    missing = await rpc_error(journal.stub.GetRun(pb.GetRunRequest(
        principal=principal(user="bob"), thread_id="mine")))
    assert missing.reason == "RUN_NOT_FOUND"
    found = await journal.stub.GetRun(pb.GetRunRequest(principal=principal(user="ana"),
                                                       thread_id="mine"))
    assert found.run.run_id == "r"


async def test_the_window_read_answers_the_open_run_when_asked(local_journal):
    """ReadRecent with include_open_run: the run GetRun would give, in the same call."""
    journal = local_journal

    async def window(thread: str, who=None, asked: bool = True) -> tuple[list[str], str]:
        reply = await journal.stub.ReadRecent(pb.ReadRecentRequest(
            principal=who or principal(user="ana"), thread_id=thread, limit=2,
            include_open_run=asked))
        return [m.id for m in reply.messages], reply.open_run_id

    ana = principal(user="ana")
    await journal.append("mine", [message("m1"), message("m2"), message("m3")], who=ana)
    assert await window("mine") == (["m2", "m3"], "")
    await start(journal, "mine", "r1", who=ana)
    assert await window("mine") == (["m2", "m3"], "r1")
    assert await window("mine", asked=False) == (["m2", "m3"], "")
    # Another user, agent or account: no messages and no run, as GetRun says nothing.
    for other in (principal(user="bob"), principal(agent="other", user="ana"),
                  principal(account="other", user="ana")):
        assert await window("mine", other) == ([], "")
    assert await window("never-written") == ([], "")
    await finish(journal, "mine", "r1", who=ana)
    assert await window("mine") == (["m2", "m3"], "")


@pytest.mark.parametrize("user", ["", "ana"], ids=["agent's thread", "a user's thread"])
async def test_an_idle_run_is_closed_at_last_activity_plus_the_timeout(tmp_path, user):
    """On a user's thread too: the sweeper acts for no caller (it used to be refused the
    thread as "not found", and tried again at once, forever)."""
    env = {"JOURNAL_OBJECT_STORE": "local", "JOURNAL_LOCAL_PATH": str(tmp_path / "j"),
           "JOURNAL_RUN_IDLE_TIMEOUT_SECONDS": "1"}
    who = principal(user=user)
    process = JournalProcess(env, tmp_path / "journal.log").start()
    try:
        async with clients.channel(process.address, default_timeout=10) as channel:
            journal = JournalClient(channel)
            await start(journal, "t", "idle", who=who)
            await journal.append("t", [message("m1")], who=who)
            last_activity = time.time()
            await asyncio.sleep(2.5)
            run = (await journal.stub.GetRun(pb.GetRunRequest(
                principal=who, thread_id="t", run_id="idle"))).run
            assert (run.state, run.outcome, run.last_offset) == (
                run_pb2.RUN_STATE_FINISHED, TIMED_OUT, 1)
            # The finish time is the deadline, not when the sweeper noticed.
            closed_at = run.finish_time.ToMilliseconds() / 1000
            assert abs(closed_at - (last_activity + 1.0)) < 0.5
            # A new run can start; a message naming the closed one is refused.
            await start(journal, "t", "next", who=who)
            assert (await rpc_error(journal.append("t", [message("m2", run_id="idle")],
                                                   who=who))).reason == "RUN_NOT_OPEN"
    finally:
        process.terminate()


async def test_run_boundaries_and_open_runs_survive_a_journal_restart(tmp_path):
    """kill -9 between the boundaries: the restarted writer knows the open run, the feed
    replays the same boundaries, and the run still times out at its original deadline."""
    env = {"JOURNAL_OBJECT_STORE": "local", "JOURNAL_LOCAL_PATH": str(tmp_path / "j"),
           "JOURNAL_RUN_IDLE_TIMEOUT_SECONDS": "12"}
    first = JournalProcess(env, tmp_path / "first.log").start()
    async with clients.channel(first.address, default_timeout=10) as channel:
        journal = JournalClient(channel)
        await start(journal, "done", "r1")
        await journal.append("done", [message("a")])
        await finish(journal, "done", "r1")
        await start(journal, "open", "r2")
        await journal.append("open", [message("b")])
        activity = time.time()
        before = shape(await feed(journal.stub))
    first.kill()

    second = JournalProcess(env, tmp_path / "second.log").start()
    try:
        async with clients.channel(second.address, default_timeout=10) as channel:
            journal = JournalClient(channel)
            assert shape(await feed(journal.stub)) == before
            # The open run is still open and still owns the thread's new messages.
            assert (await rpc_error(start(journal, "open", "r3"))).reason == "RUN_IN_PROGRESS"
            closing = asyncio.create_task(feed(journal.stub, pb.FEED_CONTENT_RUNS,
                                               after=len(before), count=1, timeout=30))
            [closed] = await closing
            run = closed.run_boundary.run
            assert (closed.run_boundary.kind, run.run_id, run.outcome) == (FINISHED, "r2",
                                                                            TIMED_OUT)
            assert abs(run.finish_time.ToMilliseconds() / 1000 - (activity + 12.0)) < 0.5
    finally:
        second.terminate()
