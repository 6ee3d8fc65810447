"""Every default and clamp of RetrieveContext, and bad input named by field."""

from __future__ import annotations

import asyncpg
import grpc
import pytest
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from agentmemory.common.v1 import principal_pb2, run_pb2
from google.protobuf import field_mask_pb2, timestamp_pb2

from testkit.journal_client import rpc_error
from tests.retrieval.conftest import who

AGENT_ROLE = principal_pb2.KEY_ROLE_AGENT

ADMIN = who(role=principal_pb2.KEY_ROLE_ADMIN)


async def _many(retrieval, count: int) -> None:
    for i in range(count):
        await retrieval.add(f"Deployment checklist item {i} for the billing service",
                            key=f"item-{i}")


async def _count(retrieval, top_n: int) -> int:
    found = await retrieval.retrieve("deployment checklist billing", raw=True, min_score=0.0,
                                     top_n=top_n)
    return len(found.results)


async def test_top_n_defaults_to_40_and_is_clamped_to_1_100(retrieval):
    await _many(retrieval, 105)
    assert await _count(retrieval, 0) == 40
    assert await _count(retrieval, 7) == 7
    assert await _count(retrieval, 500) == 100
    assert await _count(retrieval, -3) == 1


async def test_token_budget_defaults_to_the_account_setting(retrieval):
    found = await retrieval.retrieve("anything")
    assert found.compilation.token_budget == 4000
    await retrieval.memory.stub.UpdateAccountSettings(memory_pb.UpdateAccountSettingsRequest(
        principal=ADMIN, settings=memory_pb.AccountSettings(default_token_budget=900),
        update_mask=field_mask_pb2.FieldMask(paths=["default_token_budget"])))
    assert (await retrieval.retrieve("anything")).compilation.token_budget == 900
    assert (await retrieval.retrieve("anything", token_budget=256)).compilation.token_budget == 256
    found = await retrieval.retrieve("anything", token_budget=32000)
    assert found.compilation.token_budget == 32000


def _stamp(seconds: int) -> timestamp_pb2.Timestamp:
    return timestamp_pb2.Timestamp(seconds=seconds)


@pytest.mark.parametrize(("fields", "field"), [
    ({"run_id": ""}, "run_id"),
    ({"run_id": "bad id!"}, "run_id"),
    ({"token_budget": 255}, "token_budget"),
    ({"token_budget": 32001}, "token_budget"),
    ({"rerank": True}, "rerank"),
    ({"rerank": True, "mode": pb.RETRIEVAL_MODE_DETERMINISTIC}, "rerank"),
    ({"min_score": -0.1}, "min_score"),
    ({"min_score": float("nan")}, "min_score"),
    ({"semantic_query": "x" * 2001}, "semantic_query"),
    ({"tags": {"Bad Key": "x"}}, "tags['Bad Key']"),
    ({"tags": {"facet": ""}}, "tags['facet']"),
    ({"mode": 9}, "mode"),
    ({"as_of_axis": 9}, "as_of_axis"),
    ({"user_id": "not valid!"}, "user_id"),
    ({"thread_id": "x" * 200}, "thread_id"),
    ({"temporal_after": _stamp(2000), "temporal_before": _stamp(1000)}, "temporal_before"),
    ({"overrides": pb.RetrievalOverrides(leg_weights={"bm25": 1.0})},
     "overrides.leg_weights['bm25']"),
    ({"overrides": pb.RetrievalOverrides(factor_weights={"importance": -1.0})},
     "overrides.factor_weights['importance']"),
    ({"overrides": pb.RetrievalOverrides(rrf_k=0)}, "overrides.rrf_k"),
    ({"overrides": pb.RetrievalOverrides(scoring_version="v9")}, "overrides.scoring_version"),
    ({"overrides": pb.RetrievalOverrides(utility_weight=11.0)}, "overrides.utility_weight"),
])
async def test_bad_input_is_invalid_argument_naming_the_field(retrieval, fields, field):
    request = pb.RetrieveContextRequest(principal=who(), run_id="run-1", semantic_query="q")
    for name, value in fields.items():
        if isinstance(value, dict):
            getattr(request, name).update(value)
        elif hasattr(value, "DESCRIPTOR"):
            getattr(request, name).CopyFrom(value)
        else:
            setattr(request, name, value)
    error = await rpc_error(retrieval.stub.RetrieveContext(request))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert list(error.field_violations) == [field]


async def test_rerank_with_assisted_mode_is_accepted(retrieval):
    found = await retrieval.retrieve("q", mode=pb.RETRIEVAL_MODE_ASSISTED, rerank=True,
                                     explain=True)
    assert found.diagnostics.reranker in ("skipped", "unavailable")


async def test_a_disabled_account_retrieves_nothing_and_records_nothing(retrieval):
    await retrieval.add("The deploy window opens on Tuesdays", key="deploys")
    await retrieval.project()
    await retrieval.memory.stub.UpdateAccountSettings(memory_pb.UpdateAccountSettingsRequest(
        principal=ADMIN, settings=memory_pb.AccountSettings(memory_enabled=False),
        update_mask=field_mask_pb2.FieldMask(paths=["memory_enabled"])))
    error = await rpc_error(retrieval.retrieve("when does the deploy window open"))
    assert (error.code, error.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "MEMORY_DISABLED")
    connection = await asyncpg.connect(retrieval.memory.dsn)
    try:
        receipts = await connection.fetchval("SELECT count(*) FROM retrieval_receipts")
        delivered = await connection.fetchval("SELECT sum(recall_count) FROM memory_entries")
    finally:
        await connection.close()
    assert (receipts, delivered) == (0, 0)


async def test_naming_another_user_needs_a_principal_that_may_act_for_users(retrieval):
    for principal in (who(user="ana", role=AGENT_ROLE), who(role=AGENT_ROLE),
                      who(role=principal_pb2.KEY_ROLE_ADMIN)):
        error = await rpc_error(retrieval.retrieve("q", principal=principal, user_id="bob"))
        assert (error.code, error.reason) == (grpc.StatusCode.PERMISSION_DENIED,
                                              "ACT_FOR_USERS_REQUIRED")
        assert error.metadata["field"] == "user_id"
    found = await retrieval.retrieve("q", principal=who(user="ana", role=AGENT_ROLE),
                                     user_id="ana")
    assert found.receipt_id
    for principal in (who(role=AGENT_ROLE, act_for_users=True), who()):  # who(): a service
        assert (await retrieval.retrieve("q", principal=principal, user_id="bob")).receipt_id


async def test_feedback_and_receipt_inputs_are_checked(retrieval):
    stub = retrieval.stub
    found = await retrieval.retrieve("q")
    cases = [
        (stub.RecordFeedback(pb.RecordFeedbackRequest(principal=who(), receipt_id="nope",
                                                      request_id="r1")), "receipt_id"),
        (stub.RecordFeedback(pb.RecordFeedbackRequest(principal=who(),
                                                      receipt_id=found.receipt_id)),
         "request_id"),
        (stub.RecordFeedback(pb.RecordFeedbackRequest(
            principal=who(), receipt_id=found.receipt_id, request_id="r1",
            memory_ids=["not-a-uuid"])), "memory_ids[0]"),
        (stub.RecordOutcome(pb.RecordOutcomeRequest(principal=who(), receipt_id=found.receipt_id,
                                                    request_id="r1")), "outcome"),
        (stub.GetReceipt(pb.GetReceiptRequest(principal=who(), receipt_id="")), "receipt_id"),
        (stub.RecordEpisode(pb.RecordEpisodeRequest(principal=who(), thread_id="t", run_id="r",
                                                    outcome=run_pb2.RUN_OUTCOME_SUCCEEDED, task="x",
                                                    summary=" ")), "summary"),
        (stub.RecordEpisode(pb.RecordEpisodeRequest(principal=who(), thread_id="t", run_id="",
                                                    outcome=run_pb2.RUN_OUTCOME_SUCCEEDED, task="x",
                                                    summary="y")), "run_id"),
        (stub.RecordEpisode(pb.RecordEpisodeRequest(principal=who(), thread_id="t", run_id="r",
                                                    task="x", summary="y")), "outcome"),
    ]
    for call, field in cases:
        error = await rpc_error(call)
        assert (error.code, list(error.field_violations)) == (
            grpc.StatusCode.INVALID_ARGUMENT, [field]), field
