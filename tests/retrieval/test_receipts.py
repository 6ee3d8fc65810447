"""Receipts record exactly what was delivered; only delivered memories' usage counters
move; feedback and outcomes credit only a receipt's memories, once per request id."""

from __future__ import annotations

import grpc
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from agentmemory.common.v1 import run_pb2

from testkit.journal_client import rpc_error
from tests.retrieval.conftest import who


async def _recall_counts(retrieval, ids) -> dict[str, int]:
    found = {}
    for memory_id in ids:
        reply = await retrieval.memory.stub.GetMemory(memory_pb.GetMemoryRequest(
            principal=who(), memory_id=memory_id))
        found[memory_id] = reply.memory.recall_count
    return found


async def _budgeted(retrieval):
    """Twelve matching memories, a budget that holds only some of them."""
    ids = [(await retrieval.add(f"Release checklist step {i}: " + "verify the artifacts " * 6,
                                key=f"step-{i}")).id for i in range(12)]
    await retrieval.project()
    found = await retrieval.retrieve("release checklist step", token_budget=400)
    return ids, found


async def test_a_receipt_lists_exactly_what_was_delivered(retrieval):
    ids, found = await _budgeted(retrieval)
    usage = {s.section: s for s in found.compilation.sections}
    delivered = [m.memory.id for m in found.workspace_entries]
    assert usage["workspaceEntries"].included == len(delivered) > 0
    assert usage["workspaceEntries"].dropped > 0
    receipt = (await retrieval.stub.GetReceipt(pb.GetReceiptRequest(
        principal=who(), receipt_id=found.receipt_id))).receipt
    assert [i.memory_id for i in receipt.items] == delivered
    assert all(i.version == 1 and i.section == "workspaceEntries" for i in receipt.items)
    assert [i.tokens for i in receipt.items] == [m.tokens for m in found.workspace_entries]
    assert (receipt.run_id, receipt.semantic_query, receipt.token_budget, receipt.tokens_used) \
        == ("run-1", "release checklist step", 400, found.compilation.tokens_used)
    assert found.rendered.endswith(f"(receipt {found.receipt_id})")


async def test_only_delivered_memories_usage_counters_move(retrieval):
    ids, found = await _budgeted(retrieval)
    delivered = {m.memory.id for m in found.workspace_entries}
    counts = await _recall_counts(retrieval, ids)
    assert {i for i, n in counts.items() if n == 1} == delivered
    assert all(n == 0 for i, n in counts.items() if i not in delivered)


async def test_feedback_credits_only_the_receipts_memories_once(retrieval):
    ids, found = await _budgeted(retrieval)
    delivered = [m.memory.id for m in found.workspace_entries]
    request = pb.RecordFeedbackRequest(principal=who(), receipt_id=found.receipt_id,
                                       request_id="fb-1", helpful=True)
    first = await retrieval.stub.RecordFeedback(request)
    assert list(first.credited_memory_ids) == delivered and not first.replayed
    again = await retrieval.stub.RecordFeedback(request)
    assert list(again.credited_memory_ids) == delivered and again.replayed
    after = await retrieval.retrieve("release checklist step", token_budget=4000)
    utility = {m.memory.id: m.trust.utility for m in after.workspace_entries}
    assert all(utility[i] == 2 / 3 for i in delivered)  # (1 + 1) / (1 + 0 + 2): credited once
    assert all(u == 0.5 for i, u in utility.items() if i not in delivered)
    reused = await rpc_error(retrieval.stub.RecordFeedback(pb.RecordFeedbackRequest(
        principal=who(), receipt_id=found.receipt_id, request_id="fb-1", helpful=False)))
    assert (reused.code, reused.reason) == (grpc.StatusCode.ALREADY_EXISTS, "REQUEST_ID_REUSED")


async def test_feedback_on_a_memory_the_receipt_did_not_deliver_is_refused(retrieval):
    ids, found = await _budgeted(retrieval)
    delivered = {m.memory.id for m in found.workspace_entries}
    other = next(i for i in ids if i not in delivered)
    error = await rpc_error(retrieval.stub.RecordFeedback(pb.RecordFeedbackRequest(
        principal=who(), receipt_id=found.receipt_id, request_id="fb-2", helpful=False,
        memory_ids=[found.workspace_entries[0].memory.id, other])))
    assert (error.code, list(error.field_violations)) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                           ["memory_ids[1]"])
    one = await retrieval.stub.RecordFeedback(pb.RecordFeedbackRequest(
        principal=who(), receipt_id=found.receipt_id, request_id="fb-3", helpful=False,
        memory_ids=[found.workspace_entries[0].memory.id]))
    assert list(one.credited_memory_ids) == [found.workspace_entries[0].memory.id]


async def test_outcomes_credit_the_delivered_memories_and_feed_trust(retrieval):
    ids, found = await _budgeted(retrieval)
    delivered = [m.memory.id for m in found.workspace_entries]
    before = {m.memory.id: m.trust for m in found.workspace_entries}
    outcome = await retrieval.stub.RecordOutcome(pb.RecordOutcomeRequest(
        principal=who(), receipt_id=found.receipt_id, request_id="run-end",
        outcome=run_pb2.RUN_OUTCOME_SUCCEEDED))
    assert list(outcome.credited_memory_ids) == delivered
    cancelled = await retrieval.stub.RecordOutcome(pb.RecordOutcomeRequest(
        principal=who(), receipt_id=found.receipt_id, request_id="run-end-2",
        outcome=run_pb2.RUN_OUTCOME_CANCELLED))
    assert list(cancelled.credited_memory_ids) == []
    after = await retrieval.retrieve("release checklist step", token_budget=4000)
    trusted = {m.memory.id: m.trust for m in after.workspace_entries}
    for memory_id in delivered:
        assert trusted[memory_id].utility == 2 / 3
        assert trusted[memory_id].evidence > before[memory_id].evidence  # a success is evidence


async def test_another_callers_receipt_is_not_found(retrieval):
    found = await retrieval.retrieve("anything", principal=who(user="ana"))
    for stranger in (who(user="bob"), who(), who(account="globex", user="ana"),
                     who(agent="other", user="ana")):
        error = await rpc_error(retrieval.stub.GetReceipt(pb.GetReceiptRequest(
            principal=stranger, receipt_id=found.receipt_id)))
        assert (error.code, error.reason) == (grpc.StatusCode.NOT_FOUND, "RECEIPT_NOT_FOUND")
        error = await rpc_error(retrieval.stub.RecordOutcome(pb.RecordOutcomeRequest(
            principal=stranger, receipt_id=found.receipt_id, request_id="x",
            outcome=run_pb2.RUN_OUTCOME_FAILED)))
        assert error.code == grpc.StatusCode.NOT_FOUND
    mine = await retrieval.stub.GetReceipt(pb.GetReceiptRequest(
        principal=who(user="ana"), receipt_id=found.receipt_id))
    assert mine.receipt.id == found.receipt_id
