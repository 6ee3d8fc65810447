"""The fixed platform rules of agent memory (seed 000, "Agent memory").

None of these is configurable per account or agent.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import timedelta


class Category(enum.StrEnum):
    USER_PROFILE = "user_profile"
    PROJECT_FACT = "project_fact"
    OBSERVATION = "observation"


class Visibility(enum.StrEnum):
    PRIVATE = "private"
    SHARED = "shared"


class SourceKind(enum.StrEnum):
    AGENT_TOOL = "agent_tool"
    PRE_COMPACTION_FLUSH = "pre_compaction_flush"


@dataclass(frozen=True)
class CategoryRules:
    per_agent: int
    per_user: int
    max_content_chars: int
    expires_after: timedelta | None = None
    decays: bool = True


RULES: dict[Category, CategoryRules] = {
    Category.USER_PROFILE: CategoryRules(per_agent=100, per_user=30, max_content_chars=2000,
                                         decays=False),
    Category.PROJECT_FACT: CategoryRules(per_agent=200, per_user=50, max_content_chars=4000),
    Category.OBSERVATION: CategoryRules(per_agent=500, per_user=100, max_content_chars=2000,
                                        expires_after=timedelta(days=30)),
}

DEFAULT_IMPORTANCE = 0.5
MAX_KEY_CHARS = 200

PIN_CATEGORY = Category.USER_PROFILE
PIN_MIN_IMPORTANCE = 0.7
PIN_LIMIT = 10

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


def boosted(score: float, importance: float) -> float:
    return score * (IMPORTANCE_BASE + importance * IMPORTANCE_WEIGHT)
