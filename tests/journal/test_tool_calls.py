"""GetToolCall: the full record, paged in at most 32 KiB, exactly at the boundaries."""

from __future__ import annotations

import json

import grpc
from agentmemory.common.v1 import message_pb2
from agentmemory.journal.v1 import journal_service_pb2 as pb

from testkit.journal_client import ASSISTANT, TOOL, message, principal, rpc_error

PAGE = 32 * 1024


def _call(call_id: str, arguments: str = "{}", result: str = "") -> message_pb2.ToolCall:
    return message_pb2.ToolCall(
        id=call_id, name="fetch", arguments=arguments, result=result,
        status=message_pb2.TOOL_CALL_STATUS_SUCCEEDED,
    )


def _document(call_id: str, arguments: str, result: str) -> bytes:
    return json.dumps(
        {"id": call_id, "name": "fetch", "status": "succeeded", "arguments": arguments,
         "result": result},
        ensure_ascii=False, separators=(",", ":"),
    ).encode()


async def _get(journal, call_id, offset=0, length=0, thread="", who=None):
    return await journal.stub.GetToolCall(
        pb.GetToolCallRequest(principal=who or principal(), tool_call_id=call_id,
                              thread_id=thread, offset=offset, length=length)
    )


async def _read_whole(journal, call_id, length=0, **kwargs) -> tuple[bytes, list[int]]:
    data, offsets, offset = b"", [], 0
    while True:
        page = await _get(journal, call_id, offset=offset, length=length, **kwargs)
        offsets.append(offset)
        data += page.data
        assert page.next_offset == offset + len(page.data)
        if not page.has_more:
            assert page.next_offset == page.total_size
            return data, offsets
        offset = page.next_offset


async def test_record_of_exactly_two_pages(journal):
    arguments = '{"url":"https://example.com"}'
    overhead = len(_document("call-2p", arguments, ""))
    result = "r" * (2 * PAGE - overhead)
    expected = _document("call-2p", arguments, result)
    assert len(expected) == 2 * PAGE
    await journal.append("t", [message("m1", role=ASSISTANT,
                                       tool_calls=[_call("call-2p", arguments, result)])])

    first = await _get(journal, "call-2p")
    assert (len(first.data), first.total_size, first.next_offset, first.has_more) == (
        PAGE, 2 * PAGE, PAGE, True
    )
    assert (first.thread_id, first.message_id, first.message_offset, first.name) == (
        "t", "m1", 1, "fetch"
    )
    second = await _get(journal, "call-2p", offset=PAGE)
    assert (len(second.data), second.next_offset, second.has_more) == (PAGE, 2 * PAGE, False)
    assert first.data + second.data == expected
    at_end = await _get(journal, "call-2p", offset=2 * PAGE)
    assert (at_end.data, at_end.next_offset, at_end.has_more) == (b"", 2 * PAGE, False)
    past = await rpc_error(_get(journal, "call-2p", offset=2 * PAGE + 1))
    assert past.code == grpc.StatusCode.OUT_OF_RANGE and "offset" in past.field_violations


async def test_one_byte_over_a_page_needs_a_second_page(journal):
    overhead = len(_document("call-1b", "{}", ""))
    result = "é" * ((PAGE + 1 - overhead) // 2) + "x" * ((PAGE + 1 - overhead) % 2)
    expected = _document("call-1b", "{}", result)
    assert len(expected) == PAGE + 1
    await journal.append("t", [message("m1", role=ASSISTANT, tool_calls=[_call("call-1b", "{}", result)])])
    data, offsets = await _read_whole(journal, "call-1b")
    assert data == expected and offsets == [0, PAGE]
    assert json.loads(data)["result"] == result
    data, offsets = await _read_whole(journal, "call-1b", length=1000)
    assert data == expected and len(offsets) == 33


async def test_length_is_capped_at_32_kib(journal):
    await journal.append("t", [message("m1", role=ASSISTANT, tool_calls=[_call("c1")])])
    error = await rpc_error(_get(journal, "c1", length=PAGE + 1))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT and "length" in error.field_violations
    negative = await rpc_error(_get(journal, "c1", offset=-1))
    assert "offset" in negative.field_violations


async def test_result_comes_from_the_answering_tool_message(journal):
    await journal.append("t", [message("m1", role=ASSISTANT,
                                       tool_calls=[_call("call-a", '{"q":"weather"}')])])
    before = json.loads((await _get(journal, "call-a")).data)
    assert before["result"] == "" and before["arguments"] == '{"q":"weather"}'
    await journal.append("t", [message("m2", "sunny, 21C", role=TOOL, tool_call_id="call-a")])
    after = json.loads((await _get(journal, "call-a")).data)
    assert after["result"] == "sunny, 21C"


async def test_unknown_ambiguous_and_foreign_tool_calls(journal):
    error = await rpc_error(_get(journal, "nope"))
    assert error.code == grpc.StatusCode.NOT_FOUND and error.reason == "TOOL_CALL_NOT_FOUND"

    for thread in ("t-a", "t-b"):
        await journal.append(thread, [message("m", role=ASSISTANT, tool_calls=[_call("dup")])])
    ambiguous = await rpc_error(_get(journal, "dup"))
    assert ambiguous.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "thread_id" in ambiguous.field_violations
    assert (await _get(journal, "dup", thread="t-b")).thread_id == "t-b"

    await journal.append("private", [message("m", role=ASSISTANT, tool_calls=[_call("mine")])],
                         who=principal(user="alice"))
    assert (await _get(journal, "mine", who=principal(user="alice"))).thread_id == "private"
    for stranger in (principal(user="bob"), principal(account="other"), principal(agent="x")):
        error = await rpc_error(_get(journal, "mine", who=stranger))
        assert error.code == grpc.StatusCode.NOT_FOUND
