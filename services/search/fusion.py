"""Reciprocal-rank fusion of ranked legs (Cormack, Clarke and Büttcher, SIGIR 2009),
times a prior on each message's length.

A message at rank ``r`` (1-based) in a leg earns ``1 / (k + r)`` from it; the
sum over the legs that returned it is multiplied by its length prior
``length / (length + average length)`` (lengths in terms, the average over the
caller's scope). Only ranks count, so BM25 scores and cosine similarities never
need a common scale. Equal scores keep the order in which the legs first named
the items (the first leg wins), so the fusion is deterministic.

Why the prior: the dense leg has no length normalisation, and a short chat
turn ("What about Kate?", "haha same") embeds close to many questions while
saying little; BM25 alone already normalises length, so keyword mode goes
without. The prior saturates like BM25's term frequency: a message of average
length keeps half its score, a very long one never more than all of it, an
empty one (stop words only) nothing. It has no constant to tune.

``k`` = 10 was chosen on the tuning split of ``bench/search_quality.py`` (the
paper's 60 weighs the top ranks less and recalled less there); the prior
raised the tuning split's recall@10 from 0.551 to 0.606 and left k = 10 and
the depth of 20 where they were.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

Key = TypeVar("Key", bound=Hashable)

K = 10


def reciprocal_rank(legs: Sequence[Sequence[Key]], k: int = K,
                    prior: Callable[[Key], float] | None = None) -> list[tuple[Key, float]]:
    """Every item of every leg with its fused score (times ``prior`` of it), best first."""
    scores: dict[Key, float] = {}
    for leg in legs:
        for rank, key in enumerate(leg, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    if prior is not None:
        scores = {key: score * prior(key) for key, score in scores.items()}
    return sorted(scores.items(), key=lambda item: -item[1])


def length_prior(length: int, average_length: float) -> float:
    """How much of its fused score a message of ``length`` terms keeps, in [0, 1)."""
    return length / (length + average_length) if length > 0 else 0.0
