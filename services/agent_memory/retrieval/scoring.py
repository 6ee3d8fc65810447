"""The weighted score of fused candidates (seed step 5) and the threshold.

final = sum of weight x value over the factors:

- rrf: the fused score divided by the best fused score among the candidates
  (the top candidate is 1);
- recency: 0.5 ** (age / 30 days), age from the memory's creation to the
  time read (now, or as_of); with temporal_anchor, the distance between
  creation and the anchor;
- accessFreq: ln(1 + deliveries) / ln(1 + 20), at most 1;
- importance, confidence: the memory's own, 0-1;
- utility (only when overrides.value_aware): trust's utility, weight
  overrides.utility_weight (0.10 by default).

Threshold: minScore when given; otherwise adaptive, 0.3 x the best final
score (what scores under 30% of the best result is dropped).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from services.agent_memory.retrieval import params, trust
from services.agent_memory.retrieval.fusion import Fused
from services.agent_memory.retrieval.model import Candidate
from services.agent_memory.retrieval.request import Overrides


@dataclass(frozen=True)
class Factor:
    name: str
    value: float
    weight: float

    @property
    def contribution(self) -> float:
        return self.value * self.weight


@dataclass(frozen=True)
class Scored:
    candidate: Candidate
    fused: Fused
    factors: tuple[Factor, ...]

    @functools.cached_property
    def final(self) -> float:  # read by every comparison of the sort: computed once
        return sum(f.contribution for f in self.factors)


def recency(created: datetime, at: datetime, anchor: datetime | None) -> float:
    reference = anchor or at
    age = abs((reference - created).total_seconds())
    return 0.5 ** (age / params.RECENCY_HALF_LIFE.total_seconds())


def score(candidates: list[tuple[Candidate, Fused]], overrides: Overrides, at: datetime,
          anchor: datetime | None) -> list[Scored]:
    """Best first; ties by fused score, then id."""
    best = max((f.score for _, f in candidates), default=0.0) or 1.0
    weights = overrides.factor_weights
    scored = []
    for candidate, fused in candidates:
        signals = candidate.signals
        factors = [
            Factor("rrf", fused.score / best, weights["rrf"]),
            Factor("recency", recency(candidate.created_at, at, anchor), weights["recency"]),
            Factor("accessFreq", params.saturating(signals.recall_count, params.ACCESS_SATURATION),
                   weights["accessFreq"]),
            Factor("importance", candidate.importance, weights["importance"]),
            Factor("confidence", candidate.confidence, weights["confidence"]),
        ]
        if overrides.value_aware:
            factors.append(Factor("utility", trust.utility(signals), overrides.utility_weight))
        scored.append(Scored(candidate, fused, tuple(factors)))
    scored.sort(key=lambda s: (-s.final, -s.fused.score, str(s.fused.id)))
    return scored


def threshold(scored: list[Scored], min_score: float | None) -> float:
    if min_score is not None:
        return min_score
    best = max((s.final for s in scored), default=0.0)
    return params.ADAPTIVE_FRACTION * best
