"""Routing of short type queries, and reciprocal-rank fusion of the legs, scaled by how
close each hit's own score comes to its leg's best for the query."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from uuid import UUID

from services.agent_memory.memories.rules import Kind
from services.agent_memory.retrieval import params
from services.agent_memory.retrieval.model import Hit
from services.agent_memory.retrieval.request import KIND_WORDS


def _words(query: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", query.lower())


def named_kinds(query: str) -> list[Kind]:
    """The kinds a query names ("decisions", "corrections", ...), in order."""
    return list(dict.fromkeys(KIND_WORDS[w] for w in _words(query) if w in KIND_WORDS))


def route(query: str) -> Kind | None:
    """A query of at most five words naming exactly one kind goes straight to that kind's
    list (seed: "recent decisions", "corrections")."""
    words = _words(query)
    kinds = named_kinds(query)
    if 0 < len(words) <= params.ROUTE_MAX_WORDS and len(kinds) == 1:
        return kinds[0]
    return None


@dataclass(frozen=True)
class LegRank:
    leg: str
    rank: int  # from 0
    raw_score: float
    contribution: float


@dataclass(frozen=True)
class Fused:
    id: UUID
    score: float
    legs: tuple[LegRank, ...]


def rrf(results: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int,
        powers: Mapping[str, float] | None = None) -> list[Fused]:
    """Each leg's hit at rank r (from 0) adds weight x closeness ** power / (k + r + 1);
    best first, ties by the number of legs that found it, then by id. Nothing found by
    any leg: empty.

    Closeness is the hit's score between the leg's worst and best hit of this query (1
    at the best, 0 at the worst, 1 for all when they tie): a rank alone says nothing of
    whether the hit is anywhere near the leg's best match, so a hit far below it adds
    little. ``powers`` (default ``params.CLOSENESS_POWERS``) gives it per leg; a leg
    not named there (or at 0) is plain weighted RRF."""
    powers = params.CLOSENESS_POWERS if powers is None else powers
    legs: dict[UUID, list[LegRank]] = {}
    for leg, hits in results.items():
        weight, power = weights.get(leg, 1.0), powers.get(leg, 0.0)
        best = max((h.score for h in hits), default=0.0)
        worst = min((h.score for h in hits), default=0.0)
        for rank, hit in enumerate(hits):
            closeness = (hit.score - worst) / (best - worst) if best > worst else 1.0
            legs.setdefault(hit.id, []).append(LegRank(
                leg, rank, hit.score, weight * max(0.0, closeness) ** power / (k + rank + 1)))
    fused = [Fused(i, sum(r.contribution for r in ranks), tuple(ranks))
             for i, ranks in legs.items()]
    fused.sort(key=lambda f: (-f.score, -len(f.legs), str(f.id)))
    return fused
