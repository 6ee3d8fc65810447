"""Agent-memory domain objects."""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from libs.identity import Principal
from services.agent_memory.rules import Category, SourceKind, Visibility


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


@dataclass(frozen=True)
class Source:
    kind: SourceKind = SourceKind.AGENT_TOOL
    thread_id: str | None = None
    message_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Entry:
    id: UUID
    key: str
    content: str
    category: Category
    visibility: Visibility
    importance: float
    content_hash: str
    owner_user_id: str | None
    expires_at: datetime | None
    recall_count: int
    last_recalled_at: datetime | None
    created_at: datetime
    updated_at: datetime
    source: Source


@dataclass(frozen=True)
class NewEntry:
    """What a caller asks to store, after validation and screening."""

    key: str
    content: str
    category: Category
    visibility: Visibility
    importance: float
    source: Source = field(default_factory=Source)


class StoreOutcome(enum.StrEnum):
    CREATED = "created"
    UNCHANGED = "unchanged"
    REPLACED = "replaced"


@dataclass(frozen=True)
class StoreResult:
    entry: Entry
    outcome: StoreOutcome


@dataclass(frozen=True)
class Recalled:
    entry: Entry
    score: float


@dataclass(frozen=True)
class RecallResult:
    entries: list[Recalled]
    fallback: bool


@dataclass(frozen=True)
class Scope:
    """The slice of memory a caller works in: account, environment, agent, and user."""

    account_id: str
    environment: str
    agent_id: str
    user_id: str | None

    @classmethod
    def of(cls, principal: Principal) -> Scope:
        return cls(principal.account_id, principal.environment, principal.agent_id,
                   principal.user_id)
