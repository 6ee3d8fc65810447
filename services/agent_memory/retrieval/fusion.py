"""Routing of short type queries, and reciprocal-rank fusion of the legs."""

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


def rrf(results: Mapping[str, Sequence[Hit]], weights: Mapping[str, float], k: int) -> list[Fused]:
    """Each leg's hit at rank r (from 0) adds weight / (k + r + 1); best first, ties by
    the number of legs that found it, then by id. Nothing found by any leg: empty."""
    legs: dict[UUID, list[LegRank]] = {}
    for leg, hits in results.items():
        weight = weights.get(leg, 1.0)
        for rank, hit in enumerate(hits):
            legs.setdefault(hit.id, []).append(
                LegRank(leg, rank, hit.score, weight / (k + rank + 1)))
    fused = [Fused(i, sum(r.contribution for r in ranks), tuple(ranks))
             for i, ranks in legs.items()]
    fused.sort(key=lambda f: (-f.score, -len(f.legs), str(f.id)))
    return fused
