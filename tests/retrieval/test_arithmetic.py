"""Fusion, score, threshold, trust and entity rules against hand-computed values."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from uuid import UUID

import pytest

from services.agent_memory.memories import entities
from services.agent_memory.memories.model import Entry, Source
from services.agent_memory.memories.rules import Kind, Scope, SourceKind
from services.agent_memory.retrieval import fusion, scoring, trust
from services.agent_memory.retrieval.model import Candidate, Hit, Signals
from services.agent_memory.retrieval.request import Overrides

NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
A, B, C = UUID(int=1), UUID(int=2), UUID(int=3)


def entry(id: UUID = A, *, created: datetime = NOW, importance=0.5, confidence=0.8,
          source=SourceKind.USER, kind=Kind.PROJECT_FACT, message_ids=(), updated=None,
          expires=None) -> Entry:
    return Entry(id=id, account_id="acme", environment="default", scope=Scope.AGENT,
                 agent_id="helper", owner_user_id=None, key=f"k{id.int}", content="c",
                 kind=kind, importance=importance, confidence=confidence, tags={},
                 content_hash="h", source=Source(source, message_ids=message_ids),
                 expires_at=expires, created_at=created, updated_at=updated or created)


def signals(**values) -> Signals:
    return Signals(**{"superseded": False, "contradicted": False, "recall_count": 0,
                      "last_recalled_at": None, **values})


def test_rrf_adds_weight_over_k_plus_rank_plus_one_per_leg():
    fused = fusion.rrf({"vector": [Hit(A, 0.9), Hit(B, 0.5)], "fulltext": [Hit(B, 3.0)],
                        "entity": [Hit(C, 1.0), Hit(A, 0.5)]},
                       {"vector": 1.0, "fulltext": 1.0, "entity": 2.0}, 60)
    by_id = {f.id: f for f in fused}
    assert by_id[A].score == pytest.approx(1 / 61 + 2 / 62)
    assert by_id[B].score == pytest.approx(1 / 62 + 1 / 61)
    assert by_id[C].score == pytest.approx(2 / 61)
    assert [f.id for f in fused] == [A, C, B]  # 0.04865, 0.03279, 0.03252
    a_vector = next(r for r in by_id[A].legs if r.leg == "vector")
    assert (a_vector.rank, a_vector.raw_score) == (0, 0.9)
    assert a_vector.contribution == pytest.approx(0.0164, abs=5e-5)  # the seed's example


def test_rrf_of_nothing_is_nothing_and_k_is_honoured():
    assert fusion.rrf({"vector": [], "fulltext": []}, {}, 60) == []
    fused = fusion.rrf({"vector": [Hit(A, 1.0)]}, {}, 1)
    assert fused[0].score == pytest.approx(1 / 2)


def test_a_leg_with_no_hits_changes_nothing():
    legs = {"vector": [Hit(A, 0.9), Hit(B, 0.5)], "fulltext": [Hit(B, 7.0), Hit(C, 2.0)]}
    weights = Overrides().leg_weights
    with_empty = fusion.rrf({**legs, "entity": [], "graph": []}, weights, 60)
    assert with_empty == fusion.rrf(legs, weights, 60)
    pairs = [(Candidate(entry(f.id), signals()), f) for f in with_empty]
    alone = [(Candidate(entry(f.id), signals()), f) for f in fusion.rrf(legs, weights, 60)]
    assert ([s.final for s in scoring.score(pairs, Overrides(), NOW, None)]
            == [s.final for s in scoring.score(alone, Overrides(), NOW, None)])


def test_short_queries_naming_one_kind_are_routed():
    assert fusion.route("recent decisions") == Kind.DECISION
    assert fusion.route("corrections") == Kind.CORRECTION
    assert fusion.route("what were our latest preferences") == Kind.PREFERENCE  # five words
    assert fusion.route("what were all of our latest decisions") is None  # seven words
    assert fusion.route("decisions and corrections") is None  # two kinds
    assert fusion.route("invoice numbers") is None


def test_weighted_score_matches_hand_computation():
    old = entry(B, created=NOW - timedelta(days=30), importance=0.9, confidence=1.0)
    new = entry(A, created=NOW, importance=0.2, confidence=0.5)
    fused = fusion.rrf({"vector": [Hit(A, 0.8), Hit(B, 0.7)]}, {}, 60)
    pairs = [(Candidate(new, signals(recall_count=20)), fused[0]),
             (Candidate(old, signals(recall_count=1)), fused[1])]
    scored = {s.candidate.entry.id: s for s in scoring.score(pairs, Overrides(), NOW, None)}
    # new: rrf 1, recency 1, accessFreq ln21/ln21 = 1, importance .2, confidence .5
    assert scored[A].final == pytest.approx(.35 + .15 + .10 + .3 * .2 + .1 * .5)
    # old: rrf (1/62)/(1/61), recency 0.5 (one half-life), accessFreq ln2/ln21
    expected = (.35 * 61 / 62 + .15 * .5 + .10 * math.log(2) / math.log(21) + .3 * .9 + .1 * 1.0)
    assert scored[B].final == pytest.approx(expected)
    factors = {f.name: f for f in scored[B].factors}
    assert factors["recency"].value == pytest.approx(0.5)
    assert factors["rrf"].contribution == pytest.approx(.35 * 61 / 62)


def test_value_aware_adds_utility_and_overrides_change_weights():
    fused = fusion.rrf({"vector": [Hit(A, 1.0)]}, {}, 60)
    pair = [(Candidate(entry(), signals(helpful=3)), fused[0])]
    weights = dict(Overrides().factor_weights, importance=0.0)
    overrides = Overrides(factor_weights=weights, value_aware=True, utility_weight=0.5)
    only = scoring.score(pair, overrides, NOW, None)[0]
    # utility (3 + 1) / (3 + 0 + 2) = 0.8
    assert [f.name for f in only.factors][-1] == "utility"
    assert only.final == pytest.approx(.35 + .15 + 0 + 0 + .1 * .8 + .5 * .8)


def test_temporal_anchor_measures_recency_from_the_anchor():
    created = NOW - timedelta(days=60)
    assert scoring.recency(created, NOW, None) == pytest.approx(0.25)
    assert scoring.recency(created, NOW, created + timedelta(days=30)) == pytest.approx(0.5)


def test_adaptive_threshold_is_three_tenths_of_the_best_and_min_score_wins():
    fused = fusion.rrf({"vector": [Hit(A, 1.0)]}, {}, 60)
    scored = scoring.score([(Candidate(entry(), signals()), fused[0])], Overrides(), NOW, None)
    assert scoring.threshold(scored, None) == pytest.approx(0.3 * scored[0].final)
    assert scoring.threshold(scored, 0.9) == 0.9
    assert scoring.threshold([], None) == 0.0


def test_trust_reproduces_the_seeds_example():
    found = trust.trust(entry(confidence=0.8, source=SourceKind.USER), signals(), NOW)
    assert round(found.composite, 3) == 0.738
    assert round(found.evidence, 3) == 0.289
    assert (found.freshness, found.utility, found.contradiction_risk,
            found.source_authority) == (1.0, 0.5, 0.0, 1.0)


def test_trust_parts_move_as_documented():
    used = entry(source=SourceKind.TOOL_RESULT, message_ids=("m1", "m2", "m3"),
                 created=NOW - timedelta(days=200))
    last_use = NOW - timedelta(days=60)
    found = trust.trust(used, signals(recall_count=4, last_recalled_at=last_use, helpful=2,
                                      successes=1, unhelpful=1), NOW)
    assert found.evidence == pytest.approx(math.log(1 + 3 + 2 + 1) / math.log(11))
    stability = 30 * (1 + math.log(5))
    assert found.freshness == pytest.approx(math.exp(-60 / stability))
    assert found.utility == pytest.approx((3 + 1) / (4 + 2))
    assert found.source_authority == 0.3
    assert found.contradiction_risk == 0.0  # used 60 days ago: not stale yet
    stale = trust.trust(used, signals(last_recalled_at=NOW - timedelta(days=91)), NOW)
    assert stale.contradiction_risk == 0.3
    contradicted = trust.trust(entry(), signals(contradicted=True), NOW)
    assert contradicted.contradiction_risk == 0.5
    assert contradicted.composite == pytest.approx(0.5 * 0.7378, abs=1e-3)
    superseded = trust.trust(entry(), signals(superseded=True, contradicted=True), NOW)
    assert (superseded.contradiction_risk, superseded.composite) == (1.0, 0.0)
    expiring = trust.trust(entry(expires=NOW + timedelta(days=2)), signals(), NOW)
    assert expiring.contradiction_risk == 0.3


@pytest.mark.parametrize(("text", "expected"), [
    ("The user is Ana Lopes and works at Globex in New York.",
     {"ana lopes": "name", "globex": "name", "new york": "name"}),
    ("We deploy with Terraform on AWS every Friday.", {"terraform": "name", "aws": "name"}),
    ("Ping @ana_lopes about #billing and the \"Project Phoenix\" launch.",
     {"@ana_lopes": "handle", "#billing": "hashtag", "project phoenix": "quoted",
      "ping": "name"}),
    ("Numbers come from billing.invoices.next_number in InvoiceService (see invoice_rules.py)",
     {"billing.invoices.next_number": "identifier", "invoiceservice": "identifier",
      "invoice_rules.py": "identifier", "numbers": "name"}),
    ("Ana's favourite album is 'Blue Note'; use `make release`.",
     {"ana": "name", "blue note": "quoted", "make release": "quoted"}),
    ("i think it is fine. we met yesterday.", {}),
])
def test_entities_found_by_the_rules(text, expected):
    assert {e.norm: e.kind for e in entities.extract(text)} == expected


def test_query_grams_reach_multi_word_names_in_lower_case():
    grams = entities.query_grams("where does ana lopes work?")
    assert "ana lopes" in grams and "work" in grams and "does" not in grams
