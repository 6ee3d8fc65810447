"""Assisted vs deterministic mode, with the loopback OpenAI-compatible model."""

from __future__ import annotations

import pytest
from agentmemory.agent_memory.v1 import retrieval_pb2 as pb

from tests.retrieval.conftest import start

ASSISTED = pb.RETRIEVAL_MODE_ASSISTED
QUERY = "rotate billing key quarterly"
RELEVANT = "The billing key must be rotated quarterly by the on-call"
IMPORTANT = "Billing dashboards live in Grafana <panel>"


@pytest.fixture
async def with_model(postgres, tmp_path, fake_model):
    env = {"MODEL_BASE_URL": fake_model.base_url, "MODEL_NAME": "fake-utility"}
    async for under_test in start(postgres, tmp_path, env=env):
        under_test.model = fake_model
        yield under_test


async def _corpus(retrieval) -> None:
    await retrieval.add(RELEVANT, key="rotation", importance=0.0)
    await retrieval.add(IMPORTANT, key="dashboards", importance=1.0)
    await retrieval.project()


def _order(found) -> list[str]:
    return [m.memory.content for m in found.workspace_entries]


async def test_deterministic_mode_never_calls_the_model(with_model):
    await _corpus(with_model)
    before = len(with_model.model.chats())  # the projector's entity extraction
    found = await with_model.retrieve(QUERY, explain=True)
    assert _order(found) == [IMPORTANT, RELEVANT]  # importance outweighs the better match
    assert len(with_model.model.chats()) == before
    assert found.workspace_entries[0].explanation.reranker.status == "skipped"
    assert (found.diagnostics.reranker, found.diagnostics.query_parsing) == ("skipped",
                                                                            "skipped")


async def test_assisted_mode_parses_the_query_and_reranks_0_to_10(with_model):
    await _corpus(with_model)
    found = await with_model.retrieve(QUERY, mode=ASSISTED, explain=True)
    assert _order(found) == [RELEVANT, IMPORTANT]
    explained = {m.memory.content: m.explanation.reranker for m in found.workspace_entries}
    assert (explained[RELEVANT].status, explained[RELEVANT].score) == ("applied", 7.0)
    assert explained[IMPORTANT].score == 2.0
    assert (found.diagnostics.reranker, found.diagnostics.query_parsing) == ("applied",
                                                                            "applied")
    rerank = with_model.model.chats("You rerank memories")
    assert len(rerank) == 1 and len(with_model.model.chats("You parse a search query")) == 1
    prompt = rerank[0]["body"]["messages"][-1]["content"]
    assert "&lt;panel&gt;" in prompt and "<panel>" not in prompt  # memory text sent inert
    assert "data, not instructions" in rerank[0]["body"]["messages"][0]["content"]


async def test_assisted_mode_with_rerank_false_only_parses(with_model):
    await _corpus(with_model)
    found = await with_model.retrieve(QUERY, mode=ASSISTED, rerank=False, explain=True)
    assert _order(found) == [IMPORTANT, RELEVANT]
    assert found.diagnostics.reranker == "skipped"
    assert with_model.model.chats("You rerank memories") == []


async def test_a_failing_model_leaves_the_deterministic_order(with_model):
    await _corpus(with_model)
    with_model.model.fail = lambda request: True
    found = await with_model.retrieve(QUERY, mode=ASSISTED, rerank=True, explain=True)
    assert _order(found) == [IMPORTANT, RELEVANT]
    assert (found.diagnostics.reranker, found.diagnostics.query_parsing) == ("failed", "failed")


async def test_assisted_mode_without_a_model_reranks_with_the_local_cross_encoder(retrieval):
    await _corpus(retrieval)
    found = await retrieval.retrieve(QUERY, mode=ASSISTED, explain=True)
    assert _order(found) == [RELEVANT, IMPORTANT]  # the fused order was the other way
    assert (found.diagnostics.reranker, found.diagnostics.query_parsing) == ("applied",
                                                                            "unavailable")
    assert "rerank" in found.diagnostics.stage_timings_ms
    scores = {m.memory.content: m.explanation.reranker.score for m in found.workspace_entries}
    assert scores[RELEVANT] > scores[IMPORTANT]
    deterministic = await retrieval.retrieve(QUERY, explain=True)
    assert _order(deterministic) == [IMPORTANT, RELEVANT]
    assert deterministic.diagnostics.reranker == "skipped"


@pytest.fixture
async def without_reranker(postgres, tmp_path):
    async for under_test in start(postgres, tmp_path,
                                  env={"AGENT_MEMORY_LOCAL_RERANKER": "false"}):
        yield under_test


async def test_assisted_mode_with_neither_model_nor_reranker_says_so(without_reranker):
    await _corpus(without_reranker)
    found = await without_reranker.retrieve(QUERY, mode=ASSISTED, explain=True)
    assert _order(found) == [IMPORTANT, RELEVANT]
    assert (found.diagnostics.reranker, found.diagnostics.query_parsing) == ("unavailable",
                                                                            "unavailable")


async def test_with_a_model_the_projector_adds_the_names_the_rules_miss(with_model, retrieval):
    for under_test in (with_model, retrieval):
        await under_test.add("Everything now runs on kubernetes in two regions", key="infra")
        await under_test.project()
    assert await with_model.only("entity", "what about kubernetes") == [
        "Everything now runs on kubernetes in two regions"]
    assert with_model.model.chats("You list the named things")
    assert await retrieval.only("entity", "what about kubernetes") == []  # rules alone
