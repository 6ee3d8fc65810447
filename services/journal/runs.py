"""Runs: spans of turns on a thread, opened and closed by boundaries in the journal.

A run boundary is a journal record like a message: it is planned by the
shard's committer in the thread's order, written in the same atomic batch as
the messages around it, durable before it is acknowledged, and it takes the
next *change-feed sequence* (so every feed consumer sees boundaries and
messages in one order). It takes no *message offset*: offsets stay dense over
messages, and a run is described by offsets instead (its messages are those
with ``after_offset < offset <= last_offset``).

Invariants, kept by the single fenced writer:

- a thread has at most one open run; the open run lives in the thread's state
  (id, start, last activity) and an ``o/`` marker, so a restarted writer finds
  every open run without scanning every thread;
- a message appended while a run is open belongs to it (the journal stamps the
  run id); a message naming any other run is refused (RUN_NOT_OPEN);
- a run id is used once per thread;
- an open run whose last activity (its start or its latest message, by the
  journal's clock when written) is older than the idle timeout is closed with
  ``timed_out`` and the finish time *last activity + timeout*, by whichever
  comes first: the shard's sweeper, or the next write to the thread (which
  closes it before writing). Both produce the same record, at the same
  offsets, however late they notice, and before or after a restart: nothing
  about the close depends on when the writer looked.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, replace


class Outcome(enum.StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"


# Outcomes a caller may give; timed_out is the journal's own.
CALLER_OUTCOMES = frozenset({Outcome.SUCCEEDED, Outcome.FAILED, Outcome.CANCELLED})


class BoundaryKind(enum.StrEnum):
    STARTED = "started"
    FINISHED = "finished"


@dataclass(frozen=True)
class OpenRun:
    """The open run of a thread, as its state keeps it (times in ms since the epoch)."""

    run_id: str
    started_ms: int
    last_activity_ms: int
    after_offset: int

    def deadline_ms(self, idle_timeout_ms: int) -> int:
        return self.last_activity_ms + idle_timeout_ms

    def encode(self) -> dict:
        return {"i": self.run_id, "s": self.started_ms, "l": self.last_activity_ms,
                "a": self.after_offset}

    @classmethod
    def decode(cls, value: dict | None) -> OpenRun | None:
        if value is None:
            return None
        return cls(value["i"], value["s"], value["l"], value["a"])


@dataclass(frozen=True)
class RunRecord:
    """A run as stored under its ``r/`` key and carried by its feed boundaries."""

    run_id: str
    after_offset: int
    last_offset: int
    started_ms: int
    finished_ms: int | None = None
    outcome: Outcome | None = None

    @property
    def open(self) -> bool:
        return self.outcome is None

    @classmethod
    def opened(cls, run: OpenRun, last_offset: int) -> RunRecord:
        return cls(run.run_id, run.after_offset, last_offset, run.started_ms)

    def finished(self, last_offset: int, finished_ms: int, outcome: Outcome) -> RunRecord:
        return replace(self, last_offset=last_offset, finished_ms=finished_ms, outcome=outcome)

    def to_json(self) -> dict:
        return {"i": self.run_id, "a": self.after_offset, "l": self.last_offset,
                "s": self.started_ms, "f": self.finished_ms,
                "o": None if self.outcome is None else str(self.outcome)}

    @classmethod
    def from_json(cls, value: dict) -> RunRecord:
        return cls(value["i"], value["a"], value["l"], value["s"], value["f"],
                   None if value["o"] is None else Outcome(value["o"]))

    def encode(self) -> bytes:
        return json.dumps(self.to_json(), separators=(",", ":")).encode()

    @classmethod
    def decode(cls, raw: bytes) -> RunRecord:
        return cls.from_json(json.loads(raw))


@dataclass(frozen=True)
class Boundary:
    kind: BoundaryKind
    run: RunRecord
