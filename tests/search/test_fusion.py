"""Reciprocal-rank fusion and the length prior, by hand."""

from __future__ import annotations

import pytest

from services.search import fusion


def test_the_length_prior_saturates():
    assert fusion.length_prior(20, 20.0) == 0.5  # an average message keeps half its score
    assert fusion.length_prior(0, 20.0) == 0.0  # stop words only: nothing said
    assert fusion.length_prior(5, 20.0) == pytest.approx(0.2)
    assert fusion.length_prior(60, 20.0) == pytest.approx(0.75)
    assert 0.99 < fusion.length_prior(10_000, 20.0) < 1.0  # a pasted document: at most all


def test_the_prior_multiplies_each_fused_score():
    lengths = {"a": 2, "b": 30, "c": 10, "d": 10}
    fused = fusion.reciprocal_rank([["a", "b", "c"], ["a", "d"]], k=10,
                                   prior=lambda key: fusion.length_prior(lengths[key], 10.0))
    expected = {"a": (1 / 11 + 1 / 11) * 2 / 12, "b": 1 / 12 * 30 / 40,
                "c": 1 / 13 * 10 / 20, "d": 1 / 12 * 10 / 20}
    # "a", first in both legs but two terms long, falls behind two longer messages.
    assert [key for key, _ in fused] == ["b", "d", "c", "a"]
    assert all(score == pytest.approx(expected[key], abs=1e-15) for key, score in fused)


def test_equal_fused_scores_keep_the_order_the_legs_named_them():
    fused = fusion.reciprocal_rank([["x", "y"], ["y", "x"]], k=10, prior=lambda key: 0.5)
    assert [key for key, _ in fused] == ["x", "y"]
    assert fused[0][1] == fused[1][1] == pytest.approx((1 / 11 + 1 / 12) / 2, abs=1e-15)
    assert fusion.reciprocal_rank([[], ["z"]], prior=lambda key: 0.0) == [("z", 0.0)]
