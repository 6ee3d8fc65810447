"""Reciprocal-rank fusion of ranked legs (Cormack, Clarke and Büttcher, SIGIR 2009).

A message at rank ``r`` (1-based) in a leg earns ``1 / (k + r)`` from it; its
fused score is the sum over the legs that returned it. Only ranks count, so
BM25 scores and cosine similarities never need a common scale. Equal scores
keep the order in which the legs first named the items (the first leg wins),
so the fusion is deterministic.

``k`` = 10 was chosen on the tuning split of ``bench/search_quality.py`` (the
paper's 60 weighs the top ranks less and recalled less there).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

Key = TypeVar("Key", bound=Hashable)

K = 10


def reciprocal_rank(legs: Sequence[Sequence[Key]], k: int = K) -> list[tuple[Key, float]]:
    """Every item of every leg with its fused score, best first."""
    scores: dict[Key, float] = {}
    for leg in legs:
        for rank, key in enumerate(leg, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: -item[1])
