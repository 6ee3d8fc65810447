"""Append limits and field checks; every failure names the field.

Limits (also documented in journal_service.proto and docs/journal.md):

- 1-100 messages per Append;
- per message: 1 MiB of content, 1 MiB of reasoning, 4 MiB of tool-call
  arguments and results together, 64 KiB of metadata, 128 tool calls.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from agentmemory.common.v1 import message_pb2
from google.protobuf import timestamp_pb2

from libs import tokens
from libs.errors import InvalidArgument
from libs.identity import require_id

MAX_BATCH_MESSAGES = 100
MAX_CONTENT_BYTES = 1024 * 1024
MAX_REASONING_BYTES = 1024 * 1024
MAX_TOOL_CALL_BYTES = 4 * 1024 * 1024
MAX_METADATA_BYTES = 64 * 1024
MAX_TOOL_CALLS = 128
MAX_TOOL_NAME_CHARS = 256
MAX_READ_LIMIT = 1000
MAX_TOOL_CALL_PAGE_BYTES = 32 * 1024

# Tokenizing a large message blocks for milliseconds: do it off the event loop.
_OFFLOAD_TOKENIZE_BYTES = 64 * 1024

_ROLES = set(message_pb2.Role.values()) - {message_pb2.ROLE_UNSPECIFIED}


@dataclass(frozen=True)
class PreparedMessage:
    """A validated message ready to store, with what idempotency compares."""

    message: message_pb2.Message
    digest: str

    @property
    def id(self) -> str:
        return self.message.id


async def prepare_batch(messages: Sequence[message_pb2.Message]) -> list[PreparedMessage]:
    if not messages:
        raise InvalidArgument("messages", "at least one message is required")
    if len(messages) > MAX_BATCH_MESSAGES:
        raise InvalidArgument("messages", f"at most {MAX_BATCH_MESSAGES} messages per append")
    seen: dict[str, int] = {}
    prepared = []
    for index, message in enumerate(messages):
        field = f"messages[{index}]"
        _check_message(message, field)
        if message.id in seen:
            raise InvalidArgument(f"{field}.id", f"duplicate of messages[{seen[message.id]}].id")
        seen[message.id] = index
        prepared.append(await _prepare(message))
    return prepared


def _check_message(message: message_pb2.Message, field: str) -> None:
    require_id(message.id, f"{field}.id")
    if message.role not in _ROLES:
        raise InvalidArgument(f"{field}.role", "must be user, assistant, system or tool")
    _check_size(message.content, MAX_CONTENT_BYTES, f"{field}.content")
    _check_size(message.reasoning, MAX_REASONING_BYTES, f"{field}.reasoning")
    if message.metadata.ByteSize() > MAX_METADATA_BYTES:
        raise InvalidArgument(f"{field}.metadata", f"at most {MAX_METADATA_BYTES} bytes")
    if message.tool_call_id:
        if message.role != message_pb2.ROLE_TOOL:
            raise InvalidArgument(f"{field}.tool_call_id", "only tool messages answer a tool call")
        require_id(message.tool_call_id, f"{field}.tool_call_id")
    if message.tool_calls:
        _check_tool_calls(message, field)
    if message.run_id:
        require_id(message.run_id, f"{field}.run_id")


def _check_tool_calls(message: message_pb2.Message, field: str) -> None:
    if message.role != message_pb2.ROLE_ASSISTANT:
        raise InvalidArgument(f"{field}.tool_calls", "only assistant messages make tool calls")
    if len(message.tool_calls) > MAX_TOOL_CALLS:
        raise InvalidArgument(f"{field}.tool_calls", f"at most {MAX_TOOL_CALLS} tool calls")
    ids: set[str] = set()
    total = 0
    for index, call in enumerate(message.tool_calls):
        call_field = f"{field}.tool_calls[{index}]"
        require_id(call.id, f"{call_field}.id")
        if call.id in ids:
            raise InvalidArgument(f"{call_field}.id", "duplicate tool call id in this message")
        ids.add(call.id)
        if not call.name or len(call.name) > MAX_TOOL_NAME_CHARS:
            raise InvalidArgument(f"{call_field}.name", f"1-{MAX_TOOL_NAME_CHARS} characters")
        if call.status not in message_pb2.ToolCallStatus.values():
            raise InvalidArgument(f"{call_field}.status", "unknown status")
        total += len(call.arguments.encode()) + len(call.result.encode())
    if total > MAX_TOOL_CALL_BYTES:
        raise InvalidArgument(
            f"{field}.tool_calls", f"arguments and results exceed {MAX_TOOL_CALL_BYTES} bytes"
        )


def _check_size(text: str, limit: int, field: str) -> None:
    # Cheap bound first: a str never takes fewer UTF-8 bytes than characters.
    if len(text) > limit or len(text.encode()) > limit:
        raise InvalidArgument(field, f"at most {limit} bytes (UTF-8)")


async def _prepare(message: message_pb2.Message) -> PreparedMessage:
    received = message_pb2.Message()
    received.CopyFrom(message)
    received.ClearField("offset")
    received.ClearField("token_count")
    digest = hashlib.sha256(received.SerializeToString(deterministic=True)).hexdigest()
    text = _context_text(received)
    if len(text) > _OFFLOAD_TOKENIZE_BYTES:
        received.token_count = await asyncio.to_thread(tokens.count_tokens, text)
    else:
        received.token_count = tokens.count_tokens(text)
    if not received.HasField("created_at"):
        received.created_at.CopyFrom(timestamp_pb2.Timestamp())
        received.created_at.GetCurrentTime()
    return PreparedMessage(received, digest)


def _context_text(message: message_pb2.Message) -> str:
    """What the message puts in a model context: content and tool calls, not reasoning."""
    parts = [message.content]
    for call in message.tool_calls:
        parts += [call.name, call.arguments, call.result]
    return "\n".join(p for p in parts if p)

