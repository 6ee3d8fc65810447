"""Each leg alone finds what it should on a fixed corpus (the vector and graph legs on both
index adapters); routing of short type queries; fusion of all legs."""

from __future__ import annotations

import pytest
from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from agentmemory.common.v1 import run_pb2

from services.agent_memory.retrieval import store
from tests.retrieval.conftest import who

TEA = "Ana prefers green tea in the morning"
INVOICES = "Invoice numbers are allocated sequentially per tenant"
REVIEW = "Kowalski reviewed the database migration plan"
CLUSTER = "The Zephyr cluster runs in Frankfurt on three nodes"
UPGRADES = "Zephyr upgrades need a maintenance window approved by Priya"
PLANT = "the office plant needs water twice a week"
WEBHOOKS = "Retries back off exponentially, capped at ten minutes"


async def corpus(retrieval) -> dict[str, str]:
    ids = {}
    for key, content, kind in (("tea", TEA, "preference"), ("invoices", INVOICES, "decision"),
                               ("review", REVIEW, "project_fact"),
                               ("cluster", CLUSTER, "project_fact"),
                               ("upgrades", UPGRADES, "instruction"),
                               ("plant", PLANT, "observation")):
        ids[key] = (await retrieval.add(content, kind=kind, key=key)).id
        retrieval.clock.advance(minutes=1)
    ids["webhooks"] = (await retrieval.add(WEBHOOKS, key="webhooks", run_id="run-7",
                                           thread_id="ops")).id
    await retrieval.stub.RecordEpisode(pb.RecordEpisodeRequest(
        principal=who(), thread_id="ops", run_id="run-7", outcome=run_pb2.RUN_OUTCOME_SUCCEEDED,
        task="Move the payment webhooks to the new queue",
        summary="We migrated the payment webhooks to the new queue. Failed deliveries are "
                "retried with exponential backoff."))
    await retrieval.project()
    return ids


async def test_vector_leg_finds_a_paraphrase(retrieval_on_both):
    await corpus(retrieval_on_both)
    found = await retrieval_on_both.only("vector", "which hot drink does the customer like")
    assert found[0] == TEA


async def test_fulltext_leg_finds_the_words_and_nothing_else(retrieval):
    await corpus(retrieval)
    assert await retrieval.only("fulltext", "allocated sequentially") == [INVOICES]
    assert await retrieval.only("fulltext", "how is it") == []  # stop words only


async def test_a_write_not_yet_projected_is_found_after_the_index_hits(retrieval):
    await corpus(retrieval)
    fresh = "Invoice numbers are printed on every receipt"
    await retrieval.add(fresh, key="printed")  # not projected: PostgreSQL matches it
    weights = dict.fromkeys(("vector", "entity", "episode", "graph", "type"), 0.0)
    found = await retrieval.retrieve("invoice numbers", raw=True, min_score=0.0, explain=True,
                                     overrides=pb.RetrievalOverrides(leg_weights=weights))
    assert [r.memory.content for r in found.results] == [INVOICES, fresh]
    legs = [r.explanation.legs[0] for r in found.results]
    assert [leg.rank for leg in legs] == [0, 1]
    # ts_rank_cd is on another scale than BM25: the write counts as the index's weakest hit
    assert legs[1].raw_score == legs[0].raw_score


async def test_entity_leg_finds_a_name_asked_in_lower_case(retrieval):
    await corpus(retrieval)
    assert await retrieval.only("entity", "what did kowalski look at") == [REVIEW]
    assert set(await retrieval.only("entity", "zephyr")) == {CLUSTER, UPGRADES}


async def test_graph_leg_walks_from_vector_hits_through_shared_entities(retrieval_on_both):
    await corpus(retrieval_on_both)
    found = await retrieval_on_both.retrieve(
        "in which city is the cluster hosted", raw=True, min_score=0.0, explain=True,
        overrides=pb.RetrievalOverrides(leg_weights={
            "vector": 1.0, "fulltext": 0.0, "entity": 0.0, "episode": 0.0, "graph": 1.0,
            "type": 0.0}))
    legs = {r.memory.content: {leg.leg for leg in r.explanation.legs} for r in found.results}
    assert "Vector" in legs[CLUSTER]
    assert legs[UPGRADES] >= {"Graph"}  # reached through "Zephyr"
    assert all("Graph" not in legs.get(text, set()) for text in (PLANT, TEA, INVOICES))


async def test_graph_leg_alone_uses_vector_seeds(retrieval):
    await corpus(retrieval)
    found = await retrieval.only("graph", "in which city is the cluster hosted")
    assert UPGRADES in found  # "Zephyr", from the cluster memory (the top vector hit)
    assert not {TEA, INVOICES, REVIEW, PLANT, WEBHOOKS} & set(found)  # they share nothing


async def test_episode_leg_reaches_the_memories_of_a_matching_run(retrieval):
    await corpus(retrieval)
    assert await retrieval.only("episode", "payment webhooks queue") == [WEBHOOKS]
    found = await retrieval.retrieve("payment webhooks queue")
    assert [e.run_id for e in found.relevant_episodes] == ["run-7"]
    assert found.relevant_episodes[0].task == "Move the payment webhooks to the new queue"


async def test_a_timed_out_run_is_an_episode_too(retrieval):
    """The journal closes idle runs as timed_out; their episodes are kept like others'."""
    await retrieval.stub.RecordEpisode(pb.RecordEpisodeRequest(
        principal=who(), thread_id="ops", run_id="run-9", outcome=run_pb2.RUN_OUTCOME_TIMED_OUT,
        task="Rotate the signing keys", summary="The key rotation stalled waiting for approval."))
    found = await retrieval.retrieve("signing keys rotation")
    assert [(e.run_id, e.outcome) for e in found.relevant_episodes] == [
        ("run-9", run_pb2.RUN_OUTCOME_TIMED_OUT)]


async def test_type_leg_lists_the_kinds_a_longer_query_names(retrieval):
    await corpus(retrieval)
    found = await retrieval.only("type", "which decisions did we take about the billing service")
    assert found == [INVOICES]


async def test_type_leg_merges_every_visible_scope_and_named_kind_newest_first(retrieval):
    alice, bob = who(user="alice"), who(user="bob")
    written = [("account decision", "decision", "account", alice),
               ("alice's correction", "correction", "user", alice),
               ("bob's private decision", "decision", "private", bob),
               ("agent correction", "correction", "agent", alice),
               ("another agent's decision", "decision", "agent", who(agent="other")),
               ("alice's private decision", "decision", "private", alice),
               ("an observation", "observation", "agent", alice)]
    for number, (content, kind, scope, principal) in enumerate(written):
        await retrieval.add(content, kind=kind, scope=scope, principal=principal,
                            key=f"k{number}")
        retrieval.clock.advance(minutes=1)
    found = await retrieval.only("type", "which decisions and corrections were made",
                                 principal=alice)
    assert found == ["alice's private decision", "agent correction", "alice's correction",
                     "account decision"]


async def test_short_type_queries_are_routed_to_their_list_newest_first(retrieval):
    await corpus(retrieval)
    retrieval.clock.advance(minutes=1)
    newer = "Refunds go through the billing service only"
    await retrieval.add(newer, kind="decision", key="refunds")
    found = await retrieval.retrieve("recent decisions", raw=True, explain=True)
    assert found.diagnostics.route == "type:decision"
    assert [leg.leg for leg in found.diagnostics.legs] == ["Type"]
    assert [r.memory.content for r in found.results] == [newer, INVOICES]


async def test_all_legs_fuse_and_nothing_found_is_empty(retrieval):
    await corpus(retrieval)
    found = await retrieval.retrieve("zephyr upgrades maintenance window", explain=True)
    assert found.workspace_entries[0].memory.content == UPGRADES
    top = found.workspace_entries[0].explanation
    assert {leg.leg for leg in top.legs} >= {"Vector", "FullText", "Entity"}
    assert top.rrf_score == sum(leg.rrf_contribution for leg in top.legs)
    # Each leg's contribution is its default weight / (60 + rank + 1), times (vector and
    # keyword legs) its closeness to the leg's best hit to a power: all of it at the best.
    weights = {"Vector": 1.5, "FullText": 1.25, "Entity": 0.5, "Episode": 0.5}
    for leg in top.legs:
        plain = weights[leg.leg] / (61 + leg.rank)
        if leg.rank == 0 or leg.leg in ("Entity", "Episode"):
            assert leg.rrf_contribution == pytest.approx(plain)
        else:
            assert 0 <= leg.rrf_contribution <= plain
    legs = {leg.leg: leg.weight for leg in found.diagnostics.legs}
    assert legs == weights  # the graph leg is off by default (weight 0: not run)
    nothing = await retrieval.retrieve("xyzzy plugh", explain=True, overrides=pb.RetrievalOverrides(
        leg_weights={"vector": 0.0, "graph": 0.0}))
    assert list(nothing.workspace_entries) == [] and nothing.diagnostics.fused == 0


async def test_artifact_references_never_come_back_from_search(retrieval):
    await retrieval.add("Zephyr runbook stored at s3://ops/runbooks/zephyr.pdf",
                        kind="artifact_ref", key="runbook")
    await retrieval.add("Zephyr runs the billing jobs", key="jobs")
    await retrieval.project()
    found = await retrieval.retrieve("zephyr runbook", raw=True, min_score=0.0)
    assert [r.memory.key for r in found.results] == ["jobs"]


async def test_a_tie_the_entity_leg_cannot_fit_is_left_to_the_other_legs(retrieval):
    for i in range(25):  # top_n 10 reads 20 per leg: 25 memories naming Zephyr tie
        await retrieval.add(f"Zephyr status report number {i}", key=f"report-{i}")
    await retrieval.add("Kowalski signed off the Zephyr status", key="sign-off")
    await retrieval.project()
    found = await retrieval.only("entity", "zephyr kowalski", top_n=10)
    assert found == ["Kowalski signed off the Zephyr status"]  # 1/1 + 1/26 beats 1/26
    assert await retrieval.only("entity", "zephyr", top_n=10) == []  # 26 ties, 20 places


async def test_a_name_too_common_to_rank_by_adds_nothing(retrieval, monkeypatch):
    monkeypatch.setattr(store, "ENTITY_PER_NAME", 5)
    for i in range(6):  # more memories name Zephyr than the leg ranks by
        await retrieval.add(f"Zephyr status report number {i}", key=f"report-{i}")
    await retrieval.add("Kowalski signed off the Zephyr status", key="sign-off")
    await retrieval.add("Priya and Kowalski share the on-call rota", key="rota")
    await retrieval.project()
    assert await retrieval.only("entity", "zephyr") == []
    # Zephyr adds nothing: the rota has Priya (1/1) and Kowalski (1/2), the sign-off Kowalski
    found = await retrieval.only("entity", "zephyr kowalski priya")
    assert found == ["Priya and Kowalski share the on-call rota",
                     "Kowalski signed off the Zephyr status"]
