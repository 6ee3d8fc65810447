"""The platform rules of agent memory: scopes, kinds and their limits, sources,
pinning, recall, decay and settings bounds.

Seed 000's three categories keep their numbers exactly; seed 002's types,
rules and blocks have limits of their own (documented in the kind table of
docs/concepts.md, which mirrors ``RULES``; the scopes each kind lives in, and who
writes it, are ``libs.memory_writers``'s, shared with the library page). None of these
is configurable per account or agent; the account settings are in ``SETTINGS_*``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import timedelta

from libs import memory_writers


class Scope(enum.StrEnum):
    """Who sees a memory."""

    PLATFORM = "platform"  # every account: platform rules, written by the operator
    ACCOUNT = "account"  # every agent and user of the account
    AGENT = "agent"  # every caller of one agent (seed 000's "shared")
    USER = "user"  # one person, across the agents that person invokes
    PRIVATE = "private"  # one person with one agent (seed 000's "private")


# Scopes that belong to a person: they need an authenticated user (libs.memory_writers).
PERSONAL_SCOPES = frozenset(Scope(name) for name in memory_writers.PERSONAL_SCOPES)


class Visibility(enum.StrEnum):
    """Seed 000's view of a scope, kept for memory_store and its entries."""

    PRIVATE = "private"
    SHARED = "shared"


class Kind(enum.StrEnum):
    USER_PROFILE = "user_profile"
    PROJECT_FACT = "project_fact"
    OBSERVATION = "observation"
    DECISION = "decision"
    CORRECTION = "correction"
    PREFERENCE = "preference"
    INSTRUCTION = "instruction"
    ARTIFACT_REF = "artifact_ref"
    PLATFORM_RULE = "platform_rule"
    TENANT_RULE = "tenant_rule"
    TENANT_FLOOR = "tenant_floor"
    BLOCK = "block"


# Seed 000's categories: what memory_store writes and memory_recall filters on.
CATEGORIES = (Kind.USER_PROFILE, Kind.PROJECT_FACT, Kind.OBSERVATION)


class SourceKind(enum.StrEnum):
    USER = "user"
    AGENT = "agent"
    ADMIN = "admin"
    EXTRACTION = "extraction"
    TOOL_RESULT = "tool_result"
    FLUSH = "flush"


# How sure a source is, unless the writer says otherwise.
DEFAULT_CONFIDENCE = {
    SourceKind.USER: 1.0, SourceKind.ADMIN: 1.0, SourceKind.AGENT: 0.8,
    SourceKind.FLUSH: 0.6, SourceKind.EXTRACTION: 0.6, SourceKind.TOOL_RESULT: 0.4,
}


@dataclass(frozen=True)
class KindRules:
    # Live memories of the kind per agent (agent + private scopes of one agent),
    # per account (account scope) and for the platform (platform scope).
    per_agent: int
    # Per person: private memories with one agent; user-scope memories.
    per_user: int
    max_content_chars: int
    expires_after: timedelta | None = None
    decays: bool = False
    # Returned by recall and search; rules and blocks reach a context by
    # their own sections, artifact references only by id (seed 002).
    recallable: bool = True


RULES: dict[Kind, KindRules] = {
    Kind.USER_PROFILE: KindRules(100, 30, 2000),
    Kind.PROJECT_FACT: KindRules(200, 50, 4000, decays=True),
    Kind.OBSERVATION: KindRules(500, 100, 2000, expires_after=timedelta(days=30), decays=True),
    Kind.DECISION: KindRules(200, 50, 4000),
    Kind.CORRECTION: KindRules(200, 50, 2000),
    Kind.PREFERENCE: KindRules(100, 30, 2000),
    Kind.INSTRUCTION: KindRules(100, 30, 2000),
    Kind.ARTIFACT_REF: KindRules(500, 100, 2000, recallable=False),
    Kind.PLATFORM_RULE: KindRules(200, 0, 2000, recallable=False),
    Kind.TENANT_RULE: KindRules(100, 0, 2000, recallable=False),
    Kind.TENANT_FLOOR: KindRules(20, 0, 1000, recallable=False),
    Kind.BLOCK: KindRules(20, 10, 2000, recallable=False),
}

RECALLABLE = tuple(kind for kind, rules in RULES.items() if rules.recallable)
DECAYING = tuple(kind for kind, rules in RULES.items() if rules.decays)
# Policies: imperative by design and written only by admins or the operator, so the
# safety screen's prose classifier (which reads imperatives as likely injections) does
# not judge them; its rules and credential checks still do.
POLICY_KINDS = frozenset({Kind.PLATFORM_RULE, Kind.TENANT_RULE, Kind.TENANT_FLOOR})

DEFAULT_IMPORTANCE = 0.5
MAX_KEY_CHARS = 200
MAX_TAGS = 20
MAX_TAG_KEY_CHARS = 64
MAX_TAG_VALUE_CHARS = 256

PIN_CATEGORY = Kind.USER_PROFILE
PIN_MIN_IMPORTANCE = 0.7
PIN_LIMIT = 10
BLOCK_LIMIT = RULES[Kind.BLOCK].per_agent

RECALL_DEFAULT_LIMIT = 5
RECALL_MAX_LIMIT = 20
# Ranking boost: score x (IMPORTANCE_BASE + importance x IMPORTANCE_WEIGHT).
IMPORTANCE_BASE = 0.8
IMPORTANCE_WEIGHT = 0.2

DECAY_AFTER = timedelta(days=90)
DECAY_STEP = 0.1
DECAY_FLOOR = 0.1
# A decay step applies at most once a day, however often hygiene runs.
DECAY_INTERVAL = timedelta(days=1)

# A request id is remembered this long for retries.
REQUEST_ID_TTL = timedelta(days=1)

# Account settings: defaults and bounds.
SETTINGS_RETENTION_DAYS = 30
SETTINGS_RETENTION_RANGE = (1, 3650)
SETTINGS_TOKEN_BUDGET = 4000
SETTINGS_TOKEN_BUDGET_RANGE = (256, 32000)
SETTINGS_ENVIRONMENTS = ("default",)
# Agent settings: the relevant-memories block of BuildContext (0 in an update: the default).
SETTINGS_RELEVANT_BUDGET = 1000
SETTINGS_RELEVANT_BUDGET_RANGE = (100, 8000)

# Per-account quotas (AccountQuotas): what any key can make the platform allocate.
# The platform's defaults; the operator changes them per account.
QUOTA_DEFAULTS = {"environments": 10, "memories": 100_000, "pending_suggestions": 10_000,
                  "receipts_per_day": 100_000, "runs_per_day": 10_000}
QUOTA_MAXIMUM = 2**31 - 1


class ExtractionMode(enum.StrEnum):
    IMMEDIATE = "immediate"
    SUGGESTIONS = "suggestions"
    OFF = "off"


DEFAULT_EXTRACTION_MODE = ExtractionMode.SUGGESTIONS


def boosted(score: float, importance: float) -> float:
    return score * (IMPORTANCE_BASE + importance * IMPORTANCE_WEIGHT)


# The scopes a memory of each kind may live in (platform rules: the platform's; tenant
# rules and floors: the account's; the rest: the tenant scopes), from libs.memory_writers.
_SCOPES = {kind: frozenset(Scope(name) for name in memory_writers.scopes_of(kind))
           for kind in Kind}


def scopes_of(kind: Kind) -> frozenset[Scope]:
    return _SCOPES[kind]


def visibility_of(scope: Scope) -> Visibility:
    return Visibility.PRIVATE if scope in PERSONAL_SCOPES else Visibility.SHARED


def expiry(kind: Kind, created_at):
    after = RULES[kind].expires_after
    return None if after is None else created_at + after


@dataclass(frozen=True)
class Bucket:
    """One capacity count a new live memory must fit in: the live memories of
    ``scopes`` for the agent and/or owner given (None: any)."""

    per: str  # agent | user | account | platform
    limit: int
    scopes: tuple[Scope, ...]
    agent_id: str | None = None
    owner_user_id: str | None = None


def buckets(kind: Kind, scope: Scope, agent_id: str, owner_user_id: str) -> list[Bucket]:
    """The counts a new memory of ``kind`` in ``scope`` must fit in, widest first."""
    rules = RULES[kind]
    if scope == Scope.PLATFORM:
        return [Bucket("platform", rules.per_agent, (Scope.PLATFORM,))]
    if scope == Scope.ACCOUNT:
        return [Bucket("account", rules.per_agent, (Scope.ACCOUNT,))]
    if scope == Scope.USER:
        return [Bucket("user", rules.per_user, (Scope.USER,), owner_user_id=owner_user_id)]
    agent = Bucket("agent", rules.per_agent, (Scope.AGENT, Scope.PRIVATE), agent_id=agent_id)
    if scope == Scope.AGENT:
        return [agent]
    return [agent, Bucket("user", rules.per_user, (Scope.PRIVATE,), agent_id=agent_id,
                          owner_user_id=owner_user_id)]
