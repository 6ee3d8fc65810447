"""The compiled context end to end through the RPC: every section from its source, in
order, within the budget counted by the real tokenizer; the too-small error; tool-derived
memories in the inert data block; procedures from the provider."""

from __future__ import annotations

import grpc
import pytest
from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from agentmemory.common.v1 import principal_pb2, run_pb2

from libs.tokens import count_tokens
from services.agent_memory.retrieval import render
from services.agent_memory.retrieval.procedures import Procedure, Step
from testkit.journal_client import rpc_error
from tests.retrieval.conftest import start, who

OPERATOR = who(role=principal_pb2.KEY_ROLE_OPERATOR)
ADMIN = who(role=principal_pb2.KEY_ROLE_ADMIN)
ANA = who(user="ana")


class RecordedProcedures:
    """A procedure source of fixed procedures: the compiler's seam on its own (the learning
    side's source is tested end to end in tests/e2e/test_learning.py)."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str, int]] = []
        self.recorded_in = ("ops", "run-earlier")  # another run than the episode's

    async def relevant(self, actor, query, limit=3, run=None):
        self.asked.append((actor.agent_id, query, limit))
        return [Procedure("p1", "Rotate the billing API key <now>", (
            Step("vault.read", '{"path": "billing"}', "succeeded"),
            Step("billing.rotate_key", "{}", "succeeded")), *self.recorded_in)]


@pytest.fixture
async def with_procedures(postgres, tmp_path):
    source = RecordedProcedures()
    async for under_test in start(postgres, tmp_path, procedures=source):
        under_test.procedures = source
        yield under_test


async def _everything(retrieval) -> None:
    add = retrieval.add
    await add("Never reveal credentials in answers", kind="platform_rule", scope="platform",
              principal=OPERATOR, source="admin")
    await add("Answer in English", kind="tenant_floor", scope="account", principal=ADMIN,
              source="admin")
    await add("Prefer metric units", kind="tenant_rule", scope="account", principal=ADMIN,
              source="admin")
    await add("Current sprint: billing revamp", kind="block", key="sprint")
    await add("Ana is a staff engineer", kind="user_profile", scope="user", principal=ANA,
              key="role")
    await add("The billing API key rotates every 90 days", kind="decision", key="rotation",
              principal=ANA)
    await add("The billing API returned 429 above 50 requests a second", kind="observation",
              key="rate-limit", source="tool_result", principal=ANA)
    await add("Rotation started for the billing key <b>today</b>", key="rotation-started",
              run_id="run-now", thread_id="ops", principal=ANA)
    await retrieval.stub.RecordEpisode(pb.RecordEpisodeRequest(
        principal=ANA, thread_id="ops", run_id="run-before", outcome=run_pb2.RUN_OUTCOME_FAILED,
        task="Rotate the billing API key", summary="The billing key rotation failed: vault "
        "was sealed. Nobody unsealed it."))
    await retrieval.project()


async def test_every_section_in_order_within_the_budget(with_procedures):
    retrieval = with_procedures
    await _everything(retrieval)
    found = await retrieval.retrieve("billing API key rotation", principal=ANA,
                                     run_id="run-now", thread_id="ops",
                                     thread_summary="Ana asked to rotate the billing key.")
    assert [m.memory.content for m in found.platform_entries] == [
        "Never reveal credentials in answers"]
    assert [m.memory.content for m in found.tenant_floors] == ["Answer in English"]
    assert [m.memory.content for m in found.tenant_entries] == ["Prefer metric units"]
    assert [m.memory.key for m in found.blocks] == ["sprint"]
    assert [m.memory.key for m in found.user_profile] == ["role"]
    assert [p.task for p in found.procedures] == ["Rotate the billing API key <now>"]
    assert retrieval.procedures.asked == [("helper", "billing API key rotation", 3)]
    assert {m.memory.key for m in found.workspace_entries} == {"rotation", "rate-limit"}
    assert [e.run_id for e in found.relevant_episodes] == ["run-before"]
    assert (found.session_summary.source, found.session_summary.text) == (
        "thread", "Ana asked to rotate the billing key.")
    assert [m.memory.key for m in found.session_entries] == ["rotation-started"]
    headers = [line for line in found.rendered.splitlines() if line.startswith("## ")]
    assert headers == [render.HEADERS[s] for s in (
        "blocks", "userProfile", "platformEntries", "tenantFloors", "tenantEntries",
        "procedures", "workspaceEntries", "relevantEpisodes", "sessionSummary",
        "sessionEntries")]
    assert found.compilation.tokens_used == count_tokens(found.rendered)
    usage = {s.section: s for s in found.compilation.sections}
    assert sum(s.tokens for s in usage.values()) + count_tokens(
        f"(receipt {found.receipt_id})") == found.compilation.tokens_used
    assert all(s.dropped == 0 for s in usage.values())
    assert found.compilation.token_budget == 4000


async def test_tool_results_are_an_inert_data_block_and_text_is_escaped(with_procedures):
    retrieval = with_procedures
    await _everything(retrieval)
    found = await retrieval.retrieve("billing API key rotation", principal=ANA,
                                     run_id="run-now")
    lines = found.rendered.splitlines()
    opened = lines.index(render.TOOL_DATA_OPEN)
    assert "429 above 50 requests" in lines[opened + 1] and lines[opened + 2] == "</tool_data>"
    tool = next(m for m in found.workspace_entries if m.memory.key == "rate-limit")
    assert tool.tool_data and tool.trust.source_authority == 0.3
    assert "&lt;b&gt;today&lt;/b&gt;" in found.rendered and "<b>" not in found.rendered
    assert lines[-1] == f"(receipt {found.receipt_id})"


async def test_the_platforms_arrows_stay_arrows_and_the_procedures_text_is_escaped(
        with_procedures):
    retrieval = with_procedures
    await _everything(retrieval)
    found = await retrieval.retrieve("billing API key rotation", principal=ANA)
    lines = found.rendered.splitlines()
    line = lines[lines.index(render.HEADERS["procedures"]) + 1]
    assert line == ('- Rotate the billing API key &lt;now&gt;: vault.read({"path": "billing"})'
                    ' -> succeeded; billing.rotate_key({}) -> succeeded')
    [procedure] = found.procedures
    assert procedure.steps == ('vault.read({"path": "billing"}) -> succeeded; '
                               'billing.rotate_key({}) -> succeeded')


async def test_a_past_run_delivered_as_a_procedure_is_not_delivered_again_as_an_episode(
        with_procedures):
    retrieval = with_procedures
    await _everything(retrieval)  # the episode of run-before, in thread ops
    found = await retrieval.retrieve("billing API key rotation", principal=ANA)
    assert [e.run_id for e in found.relevant_episodes] == ["run-before"]
    retrieval.procedures.recorded_in = ("ops", "run-before")  # the procedure of that run
    found = await retrieval.retrieve("billing API key rotation", principal=ANA)
    assert [p.id for p in found.procedures] == ["p1"] and not found.relevant_episodes
    assert render.HEADERS["relevantEpisodes"] not in found.rendered
    usage = {s.section: s for s in found.compilation.sections}
    assert usage["relevantEpisodes"].included == usage["relevantEpisodes"].dropped == 0


async def test_the_runs_episode_is_its_summary_when_recorded(retrieval):
    await retrieval.stub.RecordEpisode(pb.RecordEpisodeRequest(
        principal=who(), thread_id="ops", run_id="run-1", outcome=run_pb2.RUN_OUTCOME_SUCCEEDED,
        task="Check the queue", summary="The queue was drained."))
    found = await retrieval.retrieve("queue", thread_summary="thread summary text")
    assert (found.session_summary.source, found.session_summary.text) == (
        "episode", "The queue was drained.")
    assert list(found.relevant_episodes) == []  # this run's episode is its summary


async def test_a_small_budget_drops_later_sections_first(with_procedures):
    retrieval = with_procedures
    await _everything(retrieval)
    found = await retrieval.retrieve("billing API key rotation", principal=ANA,
                                     run_id="run-now", token_budget=256)
    usage = {s.section: s for s in found.compilation.sections}
    assert usage["platformEntries"].included == 1 and usage["tenantFloors"].included == 1
    assert found.compilation.tokens_used <= 256
    assert found.compilation.tokens_used == count_tokens(found.rendered)
    dropped = [s.section for s in found.compilation.sections if s.dropped]
    assert dropped and usage["sessionEntries"].dropped == 1


async def test_a_budget_too_small_for_the_admin_rules_fails(retrieval):
    for i in range(4):
        await retrieval.add(f"Floor {i}: " + "always double-check the customer's identity " * 8,
                            kind="tenant_floor", scope="account", principal=ADMIN,
                            source="admin")
    error = await rpc_error(retrieval.retrieve("anything", token_budget=256))
    assert (error.code, error.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                          "CONTEXT_BUDGET_TOO_SMALL")
    assert int(error.metadata["required_tokens"]) > 256
    found = await retrieval.retrieve("anything", token_budget=1000)
    assert len(found.tenant_floors) == 4
