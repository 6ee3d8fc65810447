"""What a shard stores besides messages, and what its operations return."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from agentmemory.common.v1 import message_pb2

from libs.errors import AlreadyExists
from services.journal import keys
from services.journal.keys import ThreadRef
from services.journal.validation import PreparedMessage


def _json(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


@dataclass(frozen=True)
class ThreadState:
    """Owner and counters of a thread; its owner never changes once set."""

    owner_user: str | None
    environment: str
    message_count: int
    token_count: int

    def visible_to(self, user_id: str | None) -> bool:
        return self.owner_user is None or self.owner_user == user_id

    def after(self, message: message_pb2.Message) -> ThreadState:
        return replace(
            self,
            message_count=self.message_count + 1,
            token_count=self.token_count + message.token_count,
        )

    def encode(self) -> bytes:
        return _json({"u": self.owner_user, "e": self.environment, "n": self.message_count,
                      "k": self.token_count})

    @classmethod
    def decode(cls, raw: bytes) -> ThreadState:
        state = json.loads(raw)
        return cls(state["u"], state["e"], state["n"], state["k"])


@dataclass(frozen=True)
class ThreadStats:
    """A thread's state, and what it holds after a given offset."""

    thread: ThreadRef
    state: ThreadState
    messages_after: int
    tokens_after: int


@dataclass(frozen=True)
class AppendResult:
    message_id: str
    offset: int
    deduplicated: bool


def message_id_record(offset: int, digest: str) -> bytes:
    return _json({"o": offset, "d": digest})


def deduplicated(prepared: PreparedMessage, record: bytes) -> AppendResult:
    """The result for a message whose id exists; a different message under it is a conflict."""
    known = json.loads(record)
    if known["d"] != prepared.digest:
        raise AlreadyExists(
            f"message id {prepared.id} already exists in this thread with different content",
            reason="MESSAGE_ID_CONFLICT",
            metadata={"message_id": prepared.id, "offset": str(known["o"])},
        )
    return AppendResult(prepared.id, known["o"], True)


@dataclass(frozen=True)
class ToolCallLocation:
    """Where a tool call was made and, once answered, where its result is (0: not yet)."""

    thread: ThreadRef
    call_offset: int
    result_offset: int

    def encode(self) -> bytes:
        return _json({"c": self.call_offset, "r": self.result_offset})

    @classmethod
    def decode(cls, key: bytes, raw: bytes) -> ToolCallLocation:
        offsets = json.loads(raw)
        return cls(keys.thread_of_tool_call(key), offsets["c"], offsets["r"])


@dataclass(frozen=True)
class FeedEvent:
    sequence: int
    shard: int
    thread: ThreadRef
    owner_user: str | None
    environment: str
    message: message_pb2.Message


@dataclass(frozen=True)
class FeedEntry:
    """A change-feed row: which message, of which thread and owner."""

    thread: ThreadRef
    offset: int
    owner_user: str | None
    environment: str

    def encode(self) -> bytes:
        return _json({"a": self.thread.account_id, "g": self.thread.agent_id,
                      "t": self.thread.thread_id, "o": self.offset, "u": self.owner_user,
                      "e": self.environment})

    @classmethod
    def decode(cls, raw: bytes) -> FeedEntry:
        entry = json.loads(raw)
        return cls(ThreadRef(entry["a"], entry["g"], entry["t"]), entry["o"], entry["u"], entry["e"])
