"""Learning's domain objects: finished runs, facts, suggestions, procedures."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from services.agent_memory.memories.model import Actor, Author, Source
from services.agent_memory.memories.rules import Kind, Scope


class Outcome(enum.StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMED_OUT = "timed_out"


@dataclass(frozen=True)
class FinishedRun:
    """A run whose finish boundary agent memory has seen: what to learn from."""

    account_id: str
    environment: str
    agent_id: str
    thread_id: str
    run_id: str
    owner_user_id: str | None
    outcome: Outcome
    after_offset: int
    last_offset: int
    finished_at: datetime
    credentials_declared: bool = False

    @property
    def actor(self) -> Actor:
        """The thread's own view: its agent, and its person for a user's own thread."""
        return Actor(self.account_id, self.environment, self.agent_id, self.owner_user_id)


@dataclass(frozen=True)
class Fact:
    """One bounded statement extracted from a run, with where it came from."""

    key: str
    content: str
    kind: Kind
    confidence: float
    source: Source


class SuggestionKind(enum.StrEnum):
    MEMORY = "memory"
    SUPERSEDE = "supersede"
    SKILL = "skill"


class SuggestionStatus(enum.StrEnum):
    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Suggestion:
    id: UUID
    account_id: str
    environment: str
    scope: Scope
    agent_id: str
    owner_user_id: str | None
    kind: SuggestionKind
    status: SuggestionStatus
    created_at: datetime
    key: str = ""
    content: str = ""
    memory_kind: Kind | None = None
    confidence: float = 0.0
    source: Source | None = None
    supersedes_memory_id: UUID | None = None
    superseded_content: str = ""
    procedure_id: UUID | None = None
    memory_id: UUID | None = None
    stored_content: str = ""  # accepted: the made memory's content now
    decided_at: datetime | None = None
    decided_by: Author | None = None

    @property
    def fact_kind(self) -> Kind:
        """The memory kind of a fact or supersede suggestion (a skill has none)."""
        if self.memory_kind is None:
            raise ValueError(f"suggestion {self.id} ({self.kind}) names no memory kind")
        return self.memory_kind

    @property
    def skill_procedure(self) -> UUID:
        """The procedure a skill suggestion proposes."""
        if self.procedure_id is None:
            raise ValueError(f"suggestion {self.id} ({self.kind}) names no procedure")
        return self.procedure_id


class SkillState(enum.StrEnum):
    NONE = "none"
    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Step:
    """One tool call of a procedure (arguments and result already masked)."""

    tool_name: str
    arguments: str
    status: str  # succeeded (a procedure keeps only turns whose calls all succeeded)
    result: str

    def to_json(self) -> dict:
        return {"tool": self.tool_name, "arguments": self.arguments, "status": self.status,
                "result": self.result}

    @classmethod
    def from_json(cls, value: dict) -> Step:
        return cls(value["tool"], value["arguments"], value["status"], value["result"])


@dataclass(frozen=True)
class Procedure:
    id: UUID
    account_id: str
    environment: str
    scope: Scope
    agent_id: str
    owner_user_id: str | None
    thread_id: str
    run_id: str
    turn_offset: int
    task: str
    steps: tuple[Step, ...]
    created_at: datetime
    successes: int = 0
    thumbs_up: int = 0
    thumbs_down: int = 0
    recallable: bool = True
    skill_state: SkillState = SkillState.NONE
    deleted_at: datetime | None = None
    purge_after: datetime | None = None


@dataclass(frozen=True)
class Recalled:
    procedure: Procedure
    similarity: float


@dataclass(frozen=True)
class Recall:
    """What a task recalls, rendered; ``partial`` when the vector index could not be
    asked (only procedures not in it yet were compared)."""

    found: list[Recalled]
    rendered: str = ""
    partial: bool = False


class LearningAction(enum.StrEnum):
    SUGGEST = "suggest"
    ACCEPT = "accept"
    REJECT = "reject"
    RECORD_PROCEDURE = "record_procedure"
    DELETE_PROCEDURE = "delete_procedure"
    PURGE_PROCEDURE = "purge_procedure"
    EXTRACT = "extract"


@dataclass(frozen=True)
class LearningAudit:
    id: int
    action: LearningAction
    subject_id: UUID | None
    actor: Author
    at: datetime
    before: dict | None
    after: dict | None


@dataclass
class Report:
    """What learning did with one run (kept on its row, for operators and tests)."""

    skipped: str = ""
    facts: int = 0
    saved: int = 0
    suggested: int = 0
    supersede_suggested: int = 0
    duplicates: int = 0
    dropped: int = 0
    procedures: int = 0
    turns_not_captured: dict[str, int] = field(default_factory=dict)
    scored: int = 0
    episode: bool = False
