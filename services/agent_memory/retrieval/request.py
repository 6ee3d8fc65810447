"""A RetrieveContext request after validation, with the seed's defaults and clamps."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from libs.errors import InvalidArgument
from services.agent_memory.memories import rules
from services.agent_memory.retrieval import params
from services.agent_memory.retrieval.model import AsOfAxis


class Mode(enum.StrEnum):
    DETERMINISTIC = "deterministic"
    ASSISTED = "assisted"


@dataclass(frozen=True)
class Overrides:
    """Per-call fusion and score settings (seed: overrides)."""

    rrf_k: int = params.RRF_K
    leg_weights: dict[str, float] = field(default_factory=lambda: dict(params.LEG_WEIGHTS))
    factor_weights: dict[str, float] = field(default_factory=lambda: dict(params.FACTOR_WEIGHTS))
    utility_weight: float = params.UTILITY_WEIGHT_DEFAULT
    value_aware: bool = False
    scoring_version: str = params.SCORING_VERSIONS[-1]


@dataclass(frozen=True)
class RetrieveRequest:
    run_id: str
    query: str = ""
    thread_id: str | None = None
    agent_id: str | None = None  # seed applicationId: narrows to this agent + shared pools
    user_id: str | None = None
    top_n: int = params.TOP_N_DEFAULT
    tags: dict[str, str] = field(default_factory=dict)
    min_score: float | None = None  # None: adaptive
    token_budget: int | None = None  # None: the account's default_token_budget
    mode: Mode = Mode.DETERMINISTIC
    rerank: bool | None = None
    include_superseded: bool = False
    as_of: datetime | None = None
    as_of_axis: AsOfAxis = AsOfAxis.RECORDED
    temporal_after: datetime | None = None
    temporal_before: datetime | None = None
    temporal_anchor: datetime | None = None
    raw: bool = False
    explain: bool = False
    overrides: Overrides = field(default_factory=Overrides)
    # The thread's rolling summary, when the gateway passes one (the run summary's
    # fallback when the run has no episode yet).
    thread_summary: str | None = None

    @property
    def wants_rerank(self) -> bool:
        """Assisted mode reranks unless the call says rerank: false."""
        return self.mode == Mode.ASSISTED and self.rerank is not False


@dataclass(frozen=True)
class RelevantRequest:
    """BuildContext's relevant memories for one turn (RetrieveRelevantMemories)."""

    query: str
    token_budget: int = rules.SETTINGS_RELEVANT_BUDGET
    run_id: str = ""
    thread_id: str | None = None
    excluded: frozenset[UUID] = frozenset()  # what the turn shows already (pinned facts)

    @property
    def limit(self) -> int:
        """How many memories the block may hold."""
        return self.token_budget // params.RELEVANT_TOKENS_PER_MEMORY

    def search(self) -> RetrieveRequest:
        """RetrieveContext's request with the same query and the pipeline's defaults, for
        as many results as the block may hold besides those the turn shows already."""
        return RetrieveRequest(run_id=self.run_id, query=self.query, thread_id=self.thread_id,
                               top_n=top_n(self.limit + len(self.excluded)))


def relevant_budget(value: int) -> int:
    if value == 0:
        return rules.SETTINGS_RELEVANT_BUDGET
    low, high = rules.SETTINGS_RELEVANT_BUDGET_RANGE
    if not low <= value <= high:
        raise InvalidArgument("token_budget",
                              f"must be {low}-{high} (0: {rules.SETTINGS_RELEVANT_BUDGET})")
    return value


def top_n(value: int) -> int:
    """0 (unset) is the default, 40; anything else is clamped to 1-100."""
    if value == 0:
        return params.TOP_N_DEFAULT
    low, high = params.TOP_N_RANGE
    return max(low, min(high, value))


def token_budget(value: int, field_name: str = "token_budget") -> int | None:
    if value == 0:
        return None
    low, high = params.TOKEN_BUDGET_RANGE
    if not low <= value <= high:
        raise InvalidArgument(field_name, f"must be {low}-{high} (0 for the account's default)")
    return value


def rerank(mode: Mode, value: bool | None) -> bool | None:
    if value and mode != Mode.ASSISTED:
        raise InvalidArgument("rerank", "reranking needs mode assisted "
                                        "(RETRIEVAL_MODE_ASSISTED); this call's is deterministic")
    return value


def min_score(value: float | None) -> float | None:
    if value is not None and (math.isnan(value) or math.isinf(value) or value < 0):
        raise InvalidArgument("min_score", "must be a finite number, at least 0")
    return value


def query(value: str) -> str:
    if len(value) > params.MAX_QUERY_CHARS:
        raise InvalidArgument("semantic_query", f"at most {params.MAX_QUERY_CHARS} characters")
    if "\x00" in value:
        raise InvalidArgument("semantic_query", "must not contain NUL characters")
    return value.strip()


def temporal(after: datetime | None, before: datetime | None) -> None:
    if after is not None and before is not None and after >= before:
        raise InvalidArgument("temporal_before", "must be later than temporal_after")


def overrides(rrf_k: int | None, leg_weights: dict[str, float],
              factor_weights: dict[str, float], utility_weight: float | None,
              value_aware: bool, scoring_version: str) -> Overrides:
    """Unset values keep the defaults; given weights replace the defaults by name."""
    base = Overrides()
    if rrf_k is not None and not 1 <= rrf_k <= 1000:
        raise InvalidArgument("overrides.rrf_k", "must be 1-1000")
    legs = dict(base.leg_weights)
    for name, weight in leg_weights.items():
        key = name.lower()
        if key not in legs:
            raise InvalidArgument(f"overrides.leg_weights[{name!r}]",
                                  f"unknown leg; legs: {', '.join(params.LEGS)}")
        legs[key] = _weight(weight, f"overrides.leg_weights[{name!r}]")
    factors = dict(base.factor_weights)
    for name, weight in factor_weights.items():
        if name not in factors:
            raise InvalidArgument(f"overrides.factor_weights[{name!r}]",
                                  f"unknown factor; factors: {', '.join(factors)}")
        factors[name] = _weight(weight, f"overrides.factor_weights[{name!r}]")
    if scoring_version and scoring_version not in params.SCORING_VERSIONS:
        raise InvalidArgument("overrides.scoring_version",
                              f"supported: {', '.join(params.SCORING_VERSIONS)}")
    return Overrides(
        rrf_k=base.rrf_k if rrf_k is None else rrf_k, leg_weights=legs, factor_weights=factors,
        utility_weight=(base.utility_weight if utility_weight is None
                        else _weight(utility_weight, "overrides.utility_weight")),
        value_aware=value_aware, scoring_version=scoring_version or base.scoring_version)


def _weight(value: float, field_name: str) -> float:
    if math.isnan(value) or not 0.0 <= value <= 10.0:
        raise InvalidArgument(field_name, "must be 0-10")
    return value


# The kinds a query can name, singular and plural (routing and the type leg).
KIND_WORDS: dict[str, rules.Kind] = {}
for _kind, _words in {
    rules.Kind.DECISION: ("decision", "decisions"),
    rules.Kind.CORRECTION: ("correction", "corrections"),
    rules.Kind.PREFERENCE: ("preference", "preferences"),
    rules.Kind.INSTRUCTION: ("instruction", "instructions"),
    rules.Kind.OBSERVATION: ("observation", "observations"),
    rules.Kind.PROJECT_FACT: ("fact", "facts"),
    rules.Kind.USER_PROFILE: ("profile", "profiles"),
}.items():
    for _word in _words:
        KIND_WORDS[_word] = _kind
