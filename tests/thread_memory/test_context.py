"""GetThreadContext: the window straight from the journal, and the summary."""

from __future__ import annotations

import contextlib

import grpc
import pytest
from agentmemory.common.v1 import run_pb2
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as pb
from google.protobuf import struct_pb2

from libs import clients
from services.journal.app import running
from services.journal.settings import JournalConfig
from services.thread_memory.window import window_size
from testkit.journal_client import JournalClient, message, principal, rpc_error
from tests.thread_memory.conftest import start_thread_memory, thread_memory_env


def metadata(value) -> struct_pb2.Struct:
    data = struct_pb2.Struct()
    data.update({"config": {"max_working_memory_messages": value}})
    return data


@pytest.mark.parametrize("requested, meta, expected", [
    (None, None, 20), (25, None, 20), (5, None, 5), (20, None, 20), (0, None, 1), (-4, None, 1),
    (None, 7, 7), (None, 7.0, 7), (None, 50, 20), (None, 0, 1), (None, "5", 20), (None, 2.5, 20),
    (None, True, 20), (None, None, 20), (12, 6, 6), (6, 12, 6),
])
def test_window_rule(requested, meta, expected):
    assert window_size(requested, metadata(meta) if meta is not None else None) == expected


async def test_window_is_capped_at_20_and_can_only_shrink(thread_memory):
    for start in range(0, 30, 10):
        await thread_memory.journal.append("t", [message(f"m{i}") for i in range(start, start + 10)])
    reply = await thread_memory.context("t", max_working_memory_messages=25)
    assert [m.offset for m in reply.messages] == list(range(11, 31))
    reply = await thread_memory.context("t", max_working_memory_messages=5)
    assert [m.id for m in reply.messages] == ["m25", "m26", "m27", "m28", "m29"]
    reply = await thread_memory.context("t", thread_metadata=metadata(3))
    assert len(reply.messages) == 3
    assert not reply.HasField("summary")


async def test_a_10000_message_thread_gives_its_last_20(thread_memory):
    for start in range(0, 10_000, 100):
        await thread_memory.journal.append(
            "long", [message(f"m{i}", f"message {i}") for i in range(start, start + 100)])
    reply = await thread_memory.context("long")
    assert [m.offset for m in reply.messages] == list(range(9981, 10001))


async def test_the_open_run_comes_with_the_window_when_asked(thread_memory):
    journal = thread_memory.journal
    await journal.append("t", [message(f"m{i}") for i in range(3)])
    await journal.stub.StartRun(journal_pb.StartRunRequest(principal=principal(), thread_id="t",
                                                           run_id="r1"))
    asked = await thread_memory.context("t", include_open_run=True)
    assert asked.open_run_id == "r1" and [m.id for m in asked.messages] == ["m0", "m1", "m2"]
    assert (await thread_memory.context("t")).open_run_id == ""  # not asked: not read
    hidden = await thread_memory.context("t", who=principal(account="other"),
                                         include_open_run=True)
    assert (hidden.open_run_id, list(hidden.messages)) == ("", [])
    await journal.stub.FinishRun(journal_pb.FinishRunRequest(
        principal=principal(), thread_id="t", run_id="r1",
        outcome=run_pb2.RUN_OUTCOME_SUCCEEDED))
    assert (await thread_memory.context("t", include_open_run=True)).open_run_id == ""


async def test_journal_down_fails_rather_than_answer_stale(local_journal, redis_server,
                                                           summary_store_env):
    env = thread_memory_env("127.0.0.1:9", redis_server.url, summary_store_env)
    async for memory in start_thread_memory(env, local_journal, redis_server.url):
        error = await rpc_error(memory.context("t"))
        assert error.code == grpc.StatusCode.UNAVAILABLE and error.reason == "JOURNAL_UNAVAILABLE"


async def test_a_read_after_the_journal_stops_fails_instead_of_answering_stale(
        local_store_env, redis_server, summary_store_env, fake_model):
    serving = contextlib.AsyncExitStack()
    config = JournalConfig.from_env({**local_store_env, "JOURNAL_PORT": "0"})
    shards, server = await serving.enter_async_context(running(config))
    address = f"127.0.0.1:{server.port}"
    channel = await serving.enter_async_context(clients.channel(address))
    journal = JournalClient(channel, journal=shards, address=address)
    env = thread_memory_env(address, redis_server.url, summary_store_env, fake_model.base_url)
    async for memory in start_thread_memory(env, journal, redis_server.url):
        await journal.append("t", [message(f"m{i}", f"point {i}") for i in range(60)])
        await memory.settle()
        first = await memory.context("t")
        assert first.HasField("summary") and [m.offset for m in first.messages] == list(
            range(41, 61))
        await serving.aclose()  # the journal stops; the summary is still cached in Redis
        for _ in range(2):
            error = await rpc_error(memory.context("t"))
            assert error.code == grpc.StatusCode.UNAVAILABLE
            assert error.reason == "JOURNAL_UNAVAILABLE"


async def test_bad_input(thread_memory):
    error = await rpc_error(thread_memory.stub.GetThreadContext(
        pb.GetThreadContextRequest(principal=principal(), thread_id="")))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT and "thread_id" in error.field_violations
    error = await rpc_error(thread_memory.stub.GetSummary(
        pb.GetSummaryRequest(principal=principal(account=""), thread_id="t")))
    assert "principal.account_id" in error.field_violations
