"""Retrieval's domain types: what the legs find (hits, candidates with their signals),
what narrows them (filters, the graph leg's walk, the fixed sections, which past an
as-of read means), and what a compiled context leaves behind (receipts, episodes)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from services.agent_memory.index import IndexHit
from services.agent_memory.memories.model import Entry
from services.agent_memory.memories.rules import Kind


class AsOfAxis(enum.StrEnum):
    """Which past an as-of read means: as recorded then, or as known now to have held then."""

    RECORDED = "recorded"
    VALID = "valid"


#: What a leg finds, a memory and its score: the index's hits and PostgreSQL's alike.
Hit = IndexHit


@dataclass(frozen=True)
class Signals:
    """What scoring and trust read besides the memory: use, credit, conflicts."""

    superseded: bool
    contradicted: bool
    recall_count: int
    last_recalled_at: datetime | None
    helpful: int = 0
    unhelpful: int = 0
    successes: int = 0
    failures: int = 0


class Candidate:
    """A memory a leg found, with its signals. Scoring reads its creation time,
    importance and confidence; the whole Entry is built (``build``, the store's row
    mapping) from the row when first read (most candidates are scored and dropped: only
    the top N are delivered)."""

    __slots__ = ("_build", "_entry", "_row", "signals")

    def __init__(self, entry: Entry | None, signals: Signals, row: Any = None,
                 build: Callable[[Any], Entry] | None = None) -> None:
        """``row``: a Mapping or an asyncpg Record, read by name."""
        self._entry, self._row, self._build, self.signals = entry, row, build, signals

    @property
    def entry(self) -> Entry:
        if self._entry is None:
            if self._build is None:
                raise TypeError("a Candidate needs its entry, or a row and how to build it")
            self._entry = self._build(self._row)
        return self._entry

    @property
    def created_at(self) -> datetime:
        return self._read("created_at")

    @property
    def importance(self) -> float:
        return self._read("importance")

    @property
    def confidence(self) -> float:
        return self._read("confidence")

    def _read(self, field: str):
        return getattr(self._entry, field) if self._entry is not None else self._row[field]


@dataclass(frozen=True)
class Filters:
    """The filter stage (seed step 4), beyond visibility and validity."""

    tags: dict[str, str]
    agent_id: str | None
    after: datetime | None
    before: datetime | None


@dataclass(frozen=True)
class Resolved:
    """What the legs found, checked against the view in one statement: the vector hits
    the caller may see (in the index's order), the graph leg's hits, and the
    candidates (every hit that passes the filters, with its signals)."""

    vector: list[Hit]
    graph: list[Hit]
    candidates: dict[UUID, Candidate]


@dataclass(frozen=True)
class EpisodeRow:
    id: UUID
    thread_id: str
    run_id: str
    outcome: str
    task: str
    summary: str
    finished_at: datetime
    score: float = 0.0


@dataclass(frozen=True)
class ReceiptItem:
    memory_id: UUID
    version: int
    section: str
    position: int
    tokens: int


@dataclass(frozen=True)
class Receipt:
    id: UUID
    run_id: str
    thread_id: str | None
    query: str
    mode: str
    token_budget: int
    tokens_used: int
    sections: dict
    created_at: datetime
    items: list[ReceiptItem]


@dataclass(frozen=True)
class Section:
    """One fixed section's memories: blocks, the profile (``owner``: the user's), rules
    (``platform``: the operator's too), the run's (``run``: thread, run)."""

    name: str
    kinds: Sequence[Kind]
    limit: int
    owner: str | None = None
    run: tuple[str | None, str] | None = None
    order: str = "m.importance DESC, m.updated_at DESC, m.id"
    platform: bool = False


@dataclass(frozen=True)
class GraphWalk:
    """The graph leg's walk: from the first ``seeds`` verified vector hits, through
    entities named by at most ``fanout`` memories, at most ``limit`` hits."""

    seeds: int
    fanout: int
    limit: int
