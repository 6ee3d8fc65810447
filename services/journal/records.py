"""What a shard stores besides messages, and what its operations return."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from agentmemory.common.v1 import message_pb2

from libs.errors import AlreadyExists
from services.journal import keys
from services.journal.keys import ThreadRef
from services.journal.runs import Boundary, BoundaryKind, OpenRun, RunRecord
from services.journal.validation import PreparedMessage


def _json(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


@dataclass(frozen=True)
class ThreadState:
    """Owner, counters and open run of a thread; its owner never changes once set."""

    owner_user: str | None
    environment: str
    message_count: int
    token_count: int
    run: OpenRun | None = None

    def visible_to(self, user_id: str | None) -> bool:
        return self.owner_user is None or self.owner_user == user_id

    def after(self, message: message_pb2.Message, now_ms: int) -> ThreadState:
        """With ``message`` appended (at ``now_ms``: the open run's last activity)."""
        run = self.run and replace(self.run, last_activity_ms=now_ms)
        return replace(
            self,
            message_count=self.message_count + 1,
            token_count=self.token_count + message.token_count,
            run=run,
        )

    def encode(self) -> bytes:
        state: dict[str, Any] = {"u": self.owner_user, "e": self.environment,
                                 "n": self.message_count, "k": self.token_count}
        if self.run is not None:
            state["r"] = self.run.encode()
        return _json(state)

    @classmethod
    def decode(cls, raw: bytes) -> ThreadState:
        state = json.loads(raw)
        return cls(state["u"], state["e"], state["n"], state["k"], OpenRun.decode(state.get("r")))


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
    """A message (``boundary`` None) or a run boundary (``message`` None)."""

    sequence: int
    shard: int
    thread: ThreadRef
    owner_user: str | None
    environment: str
    message: message_pb2.Message | None
    boundary: Boundary | None = None


@dataclass(frozen=True)
class FeedEntry:
    """A change-feed row: which message (or run boundary), of which thread and owner.

    A boundary carries its run as it was just after the boundary (offset 0)."""

    thread: ThreadRef
    offset: int
    owner_user: str | None
    environment: str
    boundary: Boundary | None = None

    def encode(self) -> bytes:
        entry = {"a": self.thread.account_id, "g": self.thread.agent_id,
                 "t": self.thread.thread_id, "o": self.offset, "u": self.owner_user,
                 "e": self.environment}
        if self.boundary is not None:
            entry["b"] = str(self.boundary.kind)
            entry["r"] = self.boundary.run.to_json()
        return _json(entry)

    @classmethod
    def decode(cls, raw: bytes) -> FeedEntry:
        entry = json.loads(raw)
        boundary = None
        if "b" in entry:
            boundary = Boundary(BoundaryKind(entry["b"]), RunRecord.from_json(entry["r"]))
        return cls(ThreadRef(entry["a"], entry["g"], entry["t"]), entry["o"], entry["u"],
                   entry["e"], boundary)
