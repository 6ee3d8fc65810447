"""Which turns of a run become procedures (seed 004), decided without a model.

A turn is a user message (the task) and the messages after it up to the next
user message. After a run that *succeeded*, a turn is recorded when the agent
called two or more *different* tools in it and every call succeeded
(``TOOL_CALL_STATUS_SUCCEEDED``; a pending or unknown status is not a
success). Not captured, with the reason counted:

- ``failed_call``: any call in the turn did not succeed (a recovery is not a
  procedure);
- ``single_call``: fewer than two calls, or one tool repeated;
- ``untrusted``: content flagged untrusted: a message of the turn whose
  metadata has ``untrusted: true`` (or ``trust: "untrusted"``), or a task,
  argument or result the write-time safety screen rejects (an injection
  attempt);
- ``no_task``: no user message asked for it.

The task and every call's arguments and result are masked (``masking``) before
anything is kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentmemory.common.v1 import message_pb2

from services.agent_memory.learning.masking import Masker
from services.agent_memory.learning.model import Step

RESULT_CHARS = 300
MAX_STEPS = 50


@dataclass(frozen=True)
class CapturedTurn:
    turn_offset: int
    task: str
    steps: tuple[Step, ...]

    @property
    def signature(self) -> str:
        body = json.dumps([self.task, [(s.tool_name, s.arguments) for s in self.steps]])
        return hashlib.sha256(body.encode()).hexdigest()


@dataclass
class _Turn:
    task: message_pb2.Message | None
    messages: list[message_pb2.Message]


def _flagged(message: message_pb2.Message) -> bool:
    fields = message.metadata.fields
    untrusted = fields.get("untrusted")
    trust = fields.get("trust")
    return bool((untrusted is not None and untrusted.bool_value)
                or (trust is not None and trust.string_value == "untrusted"))


def turns(messages: Sequence[message_pb2.Message], after_offset: int) -> list[_Turn]:
    """The turns with a tool call inside the run; the task may precede the run's start."""
    found: list[_Turn] = []
    task = None
    for message in messages:
        if message.role == message_pb2.ROLE_USER:
            task = message
            found.append(_Turn(task, [message]))
        elif found:
            found[-1].messages.append(message)
        elif message.offset > after_offset:
            found.append(_Turn(None, [message]))
    return [t for t in found
            if any(m.offset > after_offset and m.tool_calls for m in t.messages)]


def capture(messages: Sequence[message_pb2.Message], after_offset: int, masker: Masker,
            rejected: Callable[[str], bool]) -> tuple[list[CapturedTurn], dict[str, int]]:
    """The turns to record, and how many were not recorded for each reason."""
    captured: list[CapturedTurn] = []
    skipped: dict[str, int] = {}
    for turn in turns(messages, after_offset):
        kept, reason = _capture_turn(turn, masker, rejected)
        if kept is None:
            skipped[reason] = skipped.get(reason, 0) + 1
        else:
            captured.append(kept)
    return captured, skipped


def _capture_turn(turn: _Turn, masker: Masker,
                  rejected: Callable[[str], bool]) -> tuple[CapturedTurn | None, str]:
    if turn.task is None or not turn.task.content.strip():
        return None, "no_task"
    answers = {m.tool_call_id: m for m in turn.messages
               if m.role == message_pb2.ROLE_TOOL and m.tool_call_id}
    calls = [c for m in turn.messages for c in m.tool_calls]
    if any(c.status != message_pb2.TOOL_CALL_STATUS_SUCCEEDED for c in calls):
        return None, "failed_call"
    if len({c.name for c in calls}) < 2:
        return None, "single_call"
    results = [c.result or (answers[c.id].content if c.id in answers else "") for c in calls]
    texts = [turn.task.content, *(c.arguments for c in calls), *results]
    if any(_flagged(m) for m in turn.messages) or any(rejected(t) for t in texts if t):
        return None, "untrusted"
    steps = tuple(
        Step(c.name, masker.arguments(c.arguments) if c.arguments else "", "succeeded",
             masker.text(result)[:RESULT_CHARS])
        for c, result in zip(calls[:MAX_STEPS], results, strict=False))
    return CapturedTurn(turn.task.offset, masker.text(turn.task.content), steps), ""
