"""Agent-memory domain objects."""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from libs.identity import Principal
from services.agent_memory.memories import rules
from services.agent_memory.memories.rules import (
    CATEGORIES,
    ExtractionMode,
    Kind,
    Scope,
    SourceKind,
    Visibility,
)


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def normal(text: str) -> str:
    """What 'the same fact' compares: case and spacing aside."""
    return " ".join(text.split()).lower()


class Role(enum.StrEnum):
    """What a caller may change (see ``permissions``)."""

    AGENT = "agent"
    ADMIN = "admin"
    OPERATOR = "operator"
    # No API key: another platform service or operator tooling, reachable only
    # with the internal token. It may do what an admin may, not platform rules.
    SERVICE = "service"


@dataclass(frozen=True)
class Actor:
    """Who calls: the slice of memory they see (account, environment, agent,
    user) and what they may change (role), with the key for the audit trail."""

    account_id: str
    environment: str
    agent_id: str
    user_id: str | None
    role: Role = Role.SERVICE
    key_id: str = ""
    #: The credential may name users other than its own (platform services always may).
    act_for_users: bool = False

    @classmethod
    def of(cls, principal: Principal, role: Role = Role.SERVICE) -> Actor:
        return cls(principal.account_id, principal.environment, principal.agent_id,
                   principal.user_id, role, principal.key_id, principal.act_for_users)

    @property
    def may_name_users(self) -> bool:
        return self.act_for_users or self.role == Role.SERVICE


SYSTEM = "hygiene"  # the agent id recorded for hygiene's own changes


@dataclass(frozen=True)
class Author:
    key_id: str = ""
    agent_id: str = ""
    user_id: str = ""
    role: Role = Role.SERVICE

    @classmethod
    def of(cls, actor: Actor) -> Author:
        return cls(actor.key_id, actor.agent_id, actor.user_id or "", actor.role)


HYGIENE = Author(agent_id=SYSTEM)


@dataclass(frozen=True)
class Source:
    kind: SourceKind = SourceKind.AGENT
    thread_id: str | None = None
    message_ids: tuple[str, ...] = ()
    run_id: str | None = None
    first_offset: int | None = None
    last_offset: int | None = None


@dataclass(frozen=True)
class Entry:
    """A memory: its current version, plus the counters that are not history."""

    id: UUID
    account_id: str
    environment: str
    scope: Scope
    agent_id: str  # '' for account, user and platform scopes
    owner_user_id: str | None  # set for user and private scopes
    key: str
    content: str
    kind: Kind
    importance: float
    confidence: float
    tags: dict[str, str]
    content_hash: str
    source: Source
    expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    version: int = 1
    author: Author = field(default_factory=Author)
    deleted_at: datetime | None = None
    superseded_by: UUID | None = None
    superseded_at: datetime | None = None
    recall_count: int = 0
    last_recalled_at: datetime | None = None
    # Derived at read time: when a tombstone is purged (the retention window).
    purge_after: datetime | None = None

    @property
    def visibility(self) -> Visibility:
        return rules.visibility_of(self.scope)

    @property
    def category(self) -> Kind | None:
        return self.kind if self.kind in CATEGORIES else None

    def live(self, now: datetime) -> bool:
        return (self.deleted_at is None and self.superseded_by is None
                and not self.expired(now))

    def expired(self, now: datetime) -> bool:
        return self.expires_at is not None and self.expires_at <= now


@dataclass(frozen=True)
class Version:
    """One recorded version of a memory: a full snapshot (counters excepted)."""

    entry: Entry
    action: Action
    recorded_at: datetime
    recorded_until: datetime | None


class Action(enum.StrEnum):
    CREATE = "create"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    DELETE = "delete"
    RESTORE = "restore"
    ROLLBACK = "rollback"
    PURGE = "purge"
    IMPORT = "import"
    EXPIRE = "expire"
    ACCOUNT_SETTINGS = "account_settings"
    AGENT_SETTINGS = "agent_settings"


@dataclass(frozen=True)
class AuditRecord:
    id: int
    action: Action
    memory_id: UUID | None
    version: int | None
    actor: Author
    at: datetime
    before: dict | None
    after: dict | None


@dataclass(frozen=True)
class Quotas:
    """What any key can make the platform allocate for one account."""

    environments: int = rules.QUOTA_DEFAULTS["environments"]
    memories: int = rules.QUOTA_DEFAULTS["memories"]
    pending_suggestions: int = rules.QUOTA_DEFAULTS["pending_suggestions"]
    receipts_per_day: int = rules.QUOTA_DEFAULTS["receipts_per_day"]
    runs_per_day: int = rules.QUOTA_DEFAULTS["runs_per_day"]


@dataclass(frozen=True)
class MemoryCount:
    """The live memories of one agent ('' for account and user memories), scope and kind."""

    agent_id: str
    scope: rules.Scope
    kind: rules.Kind
    memories: int
    last_updated_at: datetime


@dataclass(frozen=True)
class AccountUsage:
    memories: int = 0
    pending_suggestions: int = 0
    receipts_today: int = 0


@dataclass(frozen=True)
class AccountSettings:
    memory_enabled: bool = True
    retention_days: int = rules.SETTINGS_RETENTION_DAYS
    default_token_budget: int = rules.SETTINGS_TOKEN_BUDGET
    updated_at: datetime | None = None
    environments: tuple[str, ...] = rules.SETTINGS_ENVIRONMENTS
    quotas: Quotas = Quotas()


@dataclass(frozen=True)
class AgentSettings:
    memory_bound: bool = False
    extraction_mode: ExtractionMode = rules.DEFAULT_EXTRACTION_MODE
    procedures_enabled: bool = True
    updated_at: datetime | None = None
    relevant_memories_enabled: bool = False
    relevant_memories_token_budget: int = rules.SETTINGS_RELEVANT_BUDGET


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
    reranked: bool = False


@dataclass(frozen=True)
class MemoryFilter:
    scopes: tuple[Scope, ...] = ()
    kinds: tuple[Kind, ...] = ()
    sources: tuple[SourceKind, ...] = ()
    tags: dict[str, str] = field(default_factory=dict)
    text: str = ""
    include_deleted: bool = False
    include_superseded: bool = False
    as_of: datetime | None = None


@dataclass(frozen=True)
class NewMemory:
    """A memory to add through the library, after validation."""

    scope: Scope
    kind: Kind
    key: str | None
    content: str
    importance: float
    confidence: float
    tags: dict[str, str]
    source: Source


@dataclass(frozen=True)
class Edit:
    """The fields of an edit; None: unchanged."""

    key: str | None = None
    content: str | None = None
    kind: Kind | None = None
    importance: float | None = None
    confidence: float | None = None
    tags: dict[str, str] | None = None


@dataclass(frozen=True)
class Explanation:
    entry: Entry
    versions: list[Version]
    audit: list[AuditRecord]
    supersedes: list[UUID]


@dataclass(frozen=True)
class ImportResult:
    created: int
    unchanged: int
    conflicts: list[UUID]
