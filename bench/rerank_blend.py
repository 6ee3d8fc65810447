"""Blends of the cross-encoder's scores with the fused order, scored from cached scores.

Both quality benches (``retrieval_quality``, ``search_quality``) hand this module, per
question, the fused order (as deep as the largest pool) and the cross-encoder's logits
of it, and a function that scores a final ranking; it recomputes every blend of a grid
(form x rank constant x weight x pool) without running the model again. The service's
blend is ``libs.reranker.blended``; the forms here are the candidates it was chosen from:

- ``rrf``: weight / (k + the model's rank) + (1 - weight) / (k + the fused rank);
- ``sigmoid``: weight x sigmoid(logit) + (1 - weight) x (k + 1) / (k + the fused rank);
- ``minmax``: the same with the pool's logits scaled to 0-1 (min-max over the pool).

Ranks count from 1; ties keep the fused order; the rest past the pool stays after it.
With ``RERANK_BLEND_DUMP=FILE`` each bench appends its whole grid to FILE as a JSON line:
the two benches' grids together are what the service's setting was chosen on.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from libs.reranker import blended

T = TypeVar("T", bound=Hashable)
FORMS = ("rrf", "sigmoid", "minmax")
KS = (2, 5, 10, 20, 60)
WEIGHTS = tuple(round(0.1 * i, 1) for i in range(11))


def form_scores(form: str, given: Sequence[float], weight: float, k: float) -> list[float]:
    if form == "rrf":  # the service's blend
        return blended(given, weight, k)
    prior = [(k + 1) / (k + rank) for rank in range(1, len(given) + 1)]
    if form == "sigmoid":
        normal = [1 / (1 + math.exp(-g)) for g in given]
    elif form == "minmax":
        low, high = min(given), max(given)
        normal = [(g - low) / (high - low) if high > low else 0.0 for g in given]
    else:
        raise ValueError(form)
    return [weight * normal[i] + (1 - weight) * prior[i] for i in range(len(given))]


def reorder(form: str, order: Sequence[T], given: Sequence[float], pool: int, weight: float,
            k: float) -> list[T]:
    """The first ``pool`` of ``order`` (``given``: their logits, in that order) in the
    blend's order, then the rest as they were."""
    head = list(order[:pool])
    scores = form_scores(form, given[:len(head)], weight, k)
    ranked = sorted(range(len(head)), key=lambda i: -scores[i])
    return [head[i] for i in ranked] + list(order[pool:])


@dataclass(frozen=True)
class Case:
    """One question: its fused order (as deep as the largest pool), the cross-encoder's
    logits of that order, whether it tunes, and the score of a final ranking."""

    order: list
    given: list[float]
    tuning: bool
    score: Callable[[list], float]


def mean(values) -> float:
    return statistics.fmean(values) if values else 0.0


def grid(cases: dict[str, list[Case]], pools: Sequence[int], forms: Sequence[str] = FORMS,
         ks: Sequence[float] = KS, weights: Sequence[float] = WEIGHTS,
         ) -> dict[tuple[str, float, float, int], dict[str, tuple[float, float]]]:
    """Per (form, k, weight, pool): per kind of data, the (tuning, evaluation) means."""
    found = {}
    for form in forms:
        for k in ks:
            for weight in weights:
                for pool in pools:
                    cells = {}
                    for kind, split in cases.items():
                        values = {True: [], False: []}
                        for case in split:
                            values[case.tuning].append(case.score(reorder(
                                form, case.order, case.given, pool, weight, k)))
                        cells[kind] = (mean(values[True]), mean(values[False]))
                    found[(form, k, weight, pool)] = cells
    return found


def report(found: dict[tuple[str, float, float, int], dict[str, tuple[float, float]]],
           baseline: dict[str, tuple[float, float]], top: int = 15) -> None:
    """The grid's best settings by the tuning split (the smaller gain over the fused
    baseline among the kinds, then the mean), with their evaluation figures; and per pool
    the pure rerank (weight 1) and the best blend."""
    kinds = list(baseline)
    if os.environ.get("RERANK_BLEND_DUMP"):  # the whole grid, for comparing the benches
        with open(os.environ["RERANK_BLEND_DUMP"], "a") as file:
            file.write(json.dumps({"baseline": baseline, "grid": [
                [list(name), cells] for name, cells in found.items()]}) + "\n")

    def gains(cells: dict[str, tuple[float, float]], split: int) -> list[float]:
        return [cells[kind][split] - baseline[kind][split] for kind in kinds]

    def key(name):
        tuned = gains(found[name], 0)
        return (-min(tuned), -mean(tuned))

    head = " | ".join(f"{kind} tuning | {kind} evaluation" for kind in kinds)
    print(f"\n| form, k, weight, pool | {head} |")
    print("|---" * (2 * len(kinds) + 1) + "|")
    print("| fused (no rerank) | " + " | ".join(
        f"{baseline[kind][0]:.3f} | {baseline[kind][1]:.3f}" for kind in kinds) + " |")
    for name in sorted(found, key=key)[:top]:
        form, k, weight, pool = name
        print(f"| {form}, k {k:g}, w {weight:g}, pool {pool} | " + " | ".join(
            f"{found[name][kind][0]:.3f} | {found[name][kind][1]:.3f}" for kind in kinds)
            + " |")
    pools = sorted({name[3] for name in found})
    print("\nper pool: pure rerank (weight 1), and the best blend by tuning")
    for pool in pools:
        pure = next(v for n, v in found.items() if n[3] == pool and n[2] == 1.0)
        best = min((n for n in found if n[3] == pool), key=key)
        print(f"  pool {pool}: pure " + ", ".join(
            f"{kind} {pure[kind][0]:.3f}/{pure[kind][1]:.3f}" for kind in kinds)
            + f"; best {best[0]} k {best[1]:g} w {best[2]:g}: " + ", ".join(
            f"{kind} {found[best][kind][0]:.3f}/{found[best][kind][1]:.3f}" for kind in kinds))
    for form in sorted({name[0] for name in found}):
        best = min((n for n in found if n[0] == form), key=key)
        print(f"  best {form}: k {best[1]:g} w {best[2]:g} pool {best[3]}: " + ", ".join(
            f"{kind} {found[best][kind][0]:.3f}/{found[best][kind][1]:.3f}" for kind in kinds))
