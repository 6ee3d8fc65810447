"""A tool call's full record and its byte-range paging."""

from __future__ import annotations

import json
from dataclasses import dataclass

from agentmemory.common.v1 import message_pb2

from libs.errors import OutOfRange


@dataclass(frozen=True)
class ToolCallRecord:
    thread_id: str
    message_id: str
    message_offset: int
    call: message_pb2.ToolCall

    def document(self) -> bytes:
        """The record paged by GetToolCall: compact UTF-8 JSON, keys in a fixed order."""
        status = message_pb2.ToolCallStatus.Name(self.call.status)
        return json.dumps(
            {
                "id": self.call.id,
                "name": self.call.name,
                "status": status.removeprefix("TOOL_CALL_STATUS_").lower(),
                "arguments": self.call.arguments,
                "result": self.call.result,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        ).encode()


@dataclass(frozen=True)
class Page:
    data: bytes
    total_size: int
    next_offset: int

    @property
    def has_more(self) -> bool:
        return self.next_offset < self.total_size


def page(document: bytes, offset: int, length: int) -> Page:
    if offset < 0:
        raise OutOfRange("offset", "must not be negative")
    if offset > len(document):
        raise OutOfRange("offset", f"past the end of the record ({len(document)} bytes)")
    data = document[offset : offset + length]
    return Page(data, len(document), offset + len(data))


def merge_result(
    call: message_pb2.ToolCall, answer: message_pb2.Message | None
) -> message_pb2.ToolCall:
    """The call with its result taken from the answering tool message if it has none."""
    merged = message_pb2.ToolCall()
    merged.CopyFrom(call)
    if answer is not None and not merged.result:
        merged.result = answer.content
    return merged
