"""Bad input: INVALID_ARGUMENT that names the field, and nothing written."""

from __future__ import annotations

import grpc
import pytest
from agentmemory.common.v1 import message_pb2
from agentmemory.journal.v1 import journal_service_pb2 as pb
from google.protobuf import struct_pb2

from libs import page_tokens
from testkit.journal_client import ASSISTANT, USER, message, principal, rpc_error

MiB = 1024 * 1024


def _append(journal, messages, thread="t", who=None):
    return journal.stub.Append(
        pb.AppendRequest(principal=who or principal(), thread_id=thread, messages=messages)
    )


def _big_metadata() -> struct_pb2.Struct:
    metadata = struct_pb2.Struct()
    metadata.update({"blob": "z" * (64 * 1024)})
    return metadata


CASES = [
    ("empty message id", [message_pb2.Message(id="", role=USER)], "messages[0].id"),
    ("bad id characters", [message("has/slash")], "messages[0].id"),
    ("unknown role", [message_pb2.Message(id="m", role=99, content="x")], "messages[0].role"),
    ("unspecified role", [message_pb2.Message(id="m", content="x")], "messages[0].role"),
    ("oversize content", [message("ok"), message("big", "x" * (MiB + 1))], "messages[1].content"),
    ("oversize reasoning", [message("m", reasoning="y" * (MiB + 1))], "messages[0].reasoning"),
    ("oversize metadata", [message("m", metadata=_big_metadata())], "messages[0].metadata"),
    ("duplicate ids", [message("a"), message("a")], "messages[1].id"),
    ("no messages", [], "messages"),
    ("too many messages", [message(f"m{i}") for i in range(101)], "messages"),
    ("tool call on a user message",
     [message("m", tool_calls=[message_pb2.ToolCall(id="c", name="n")])], "messages[0].tool_calls"),
    ("tool call without id",
     [message("m", role=ASSISTANT, tool_calls=[message_pb2.ToolCall(name="n")])],
     "messages[0].tool_calls[0].id"),
    ("tool call without name",
     [message("m", role=ASSISTANT, tool_calls=[message_pb2.ToolCall(id="c")])],
     "messages[0].tool_calls[0].name"),
    ("tool_call_id on a user message", [message("m", tool_call_id="c")], "messages[0].tool_call_id"),
]


@pytest.mark.parametrize("messages, field", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_bad_messages_name_the_field(local_journal, messages, field):
    error = await rpc_error(_append(local_journal, messages))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.reason == "INVALID_FIELD"
    assert field in error.field_violations, error
    assert error.metadata["field"] == field
    assert (await local_journal.stats("t")).message_count == 0


@pytest.mark.parametrize(
    "who, thread, field",
    [
        (principal(account=""), "t", "principal.account_id"),
        (principal(agent=""), "t", "principal.agent_id"),
        (principal(user="a b"), "t", "principal.user_id"),
        (principal(), "", "thread_id"),
        (principal(), "x" * 129, "thread_id"),
    ],
)
async def test_bad_principal_or_thread(local_journal, who, thread, field):
    error = await rpc_error(_append(local_journal, [message("m")], thread=thread, who=who))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert field in error.field_violations


async def test_bad_page_token_and_limits(local_journal):
    await local_journal.append("t", [message("m")])
    forged = [page_tokens.encode(thread="t", next=n) for n in (-1, 2**70, True)]
    for token in ("garbage!", "eyJ2IjoxfQ", "bm90IGpzb24", *forged):
        error = await rpc_error(local_journal.stub.ReadRange(
            pb.ReadRangeRequest(principal=principal(), thread_id="t", page_token=token)
        ))
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT
        assert "page_token" in error.field_violations
    first = await local_journal.stub.ReadRange(
        pb.ReadRangeRequest(principal=principal(), thread_id="t", page_size=1, from_offset=0)
    )
    assert first.next_page_token == ""
    await local_journal.append("t", [message("m2")])
    page = await local_journal.stub.ReadRange(
        pb.ReadRangeRequest(principal=principal(), thread_id="t", page_size=1)
    )
    other_thread = await rpc_error(local_journal.stub.ReadRange(
        pb.ReadRangeRequest(principal=principal(), thread_id="u", page_token=page.next_page_token)
    ))
    assert "page_token" in other_thread.field_violations
    for limit in (-1, 1001):
        error = await rpc_error(local_journal.stub.ReadRecent(
            pb.ReadRecentRequest(principal=principal(), thread_id="t", limit=limit)
        ))
        assert "limit" in error.field_violations
    error = await rpc_error(local_journal.stub.ReadRange(
        pb.ReadRangeRequest(principal=principal(), thread_id="t", page_size=5000)
    ))
    assert "page_size" in error.field_violations
