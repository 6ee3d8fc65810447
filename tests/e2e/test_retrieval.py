"""RetrieveContext end to end through the gateway (every service its own process): the
compiled context with its receipt, the thread's summary as the session summary, session
expansion from the journal, feedback, and what other tenants cannot reach."""

from __future__ import annotations

import asyncio
import time

import grpc
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as gateway_pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as gateway_grpc
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from agentmemory.gateway.v1 import memory_library_service_pb2_grpc as library_grpc
from agentmemory.gateway.v1 import retrieval_service_pb2 as pb
from agentmemory.gateway.v1 import retrieval_service_pb2_grpc as pb_grpc

from libs import clients
from libs.tokens import count_tokens
from testkit.journal_client import rpc_error

ANA = gateway_pb.Caller(agent_id="concierge", user_id="ana", surface=principal_pb2.SURFACE_AGENT)
BOB = gateway_pb.Caller(agent_id="concierge", user_id="bob", surface=principal_pb2.SURFACE_AGENT)
SAID = {5: "Invoices are numbered per tenant, starting at INV-1000.",
        6: "Noted: invoice numbers are per tenant, prefixed INV."}


def auth(key: str):
    return (("authorization", f"Bearer {key}"),)


def conversation() -> list[message_pb2.Message]:
    return [message_pb2.Message(
        id=f"m{i}", role=message_pb2.ROLE_USER if i % 2 else message_pb2.ROLE_ASSISTANT,
        content=SAID.get(i, f"Message {i} about the billing migration, step {i}."))
        for i in range(1, 61)]


async def test_retrieve_context_through_the_gateway(platform):
    # Accounts of its own: the other e2e tests' memories of the shared platform stay out.
    key, other = platform.key("retrieval"), platform.key("retrieval-other")
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        gateway = gateway_grpc.GatewayServiceStub(channel)
        library = library_grpc.MemoryLibraryServiceStub(channel)
        retrieval = pb_grpc.RetrievalServiceStub(channel)
        messages = conversation()
        for start in range(0, 60, 20):
            await gateway.AppendMessages(gateway_pb.AppendMessagesRequest(
                caller=ANA, thread_id="billing", messages=messages[start:start + 20]),
                metadata=auth(key))
        added = await library.AddMemory(library_pb.AddMemoryRequest(
            caller=ANA, memory=memory_pb.NewMemory(
                kind=memory_pb.MEMORY_KIND_DECISION, key="invoice-numbers",
                content="Invoice numbers are allocated per tenant with the prefix INV",
                source=memory_pb.Source(thread_id="billing", run_id="run-1", first_offset=5,
                                        last_offset=6))), metadata=auth(key))
        await library.AddMemory(library_pb.AddMemoryRequest(
            caller=ANA, memory=memory_pb.NewMemory(
                kind=memory_pb.MEMORY_KIND_PROJECT_FACT, key="current-step",
                content="The billing migration is at step 60",
                source=memory_pb.Source(thread_id="billing", run_id="run-2"))),
            metadata=auth(key))

        request = pb.RetrieveContextRequest(
            caller=ANA, run_id="run-2", thread_id="billing",
            semantic_query="how are invoice numbers allocated", expand_sessions=True,
            expand_session_window=1, explain=True)
        deadline = time.monotonic() + 90
        while True:  # the thread's summary is written in the background (60 messages)
            found = await retrieval.RetrieveContext(request, metadata=auth(key))
            if found.HasField("session_summary"):
                break
            assert time.monotonic() < deadline, "the thread was never summarized"
            await asyncio.sleep(1)

        assert [m.memory.id for m in found.workspace_entries][:1] == [added.memory.id]
        assert found.session_summary.source == "thread" and found.session_summary.text
        assert [m.memory.key for m in found.session_entries] == ["current-step"]
        assert found.rendered.endswith(f"(receipt {found.receipt_id})")
        assert found.compilation.tokens_used == count_tokens(found.rendered)
        assert found.diagnostics.legs
        expansion = found.expansions[0]
        assert (expansion.memory_id, expansion.first_offset, expansion.last_offset) == (
            added.memory.id, 4, 7)
        assert [m.content for m in expansion.messages][1:3] == [SAID[5], SAID[6]]

        receipt = await retrieval.GetReceipt(pb.GetReceiptRequest(
            caller=ANA, receipt_id=found.receipt_id), metadata=auth(key))
        assert {i.memory_id for i in receipt.receipt.items} >= {added.memory.id}
        credited = await retrieval.RecordFeedback(pb.RecordFeedbackRequest(
            caller=ANA, receipt_id=found.receipt_id, request_id="fb-1", helpful=True,
            memory_ids=[added.memory.id]), metadata=auth(key))
        assert list(credited.credited_memory_ids) == [added.memory.id]

        # Another user of the account: not Ana's thread, nor her receipt, nor her memories.
        error = await rpc_error(retrieval.RetrieveContext(pb.RetrieveContextRequest(
            caller=BOB, run_id="run-2", thread_id="billing"), metadata=auth(key)))
        assert (error.code, error.reason) == (grpc.StatusCode.NOT_FOUND, "THREAD_NOT_FOUND")
        bobs = await retrieval.RetrieveContext(pb.RetrieveContextRequest(
            caller=BOB, run_id="run-2", semantic_query="invoice numbers",
            expand_sessions=True), metadata=auth(key))
        assert list(bobs.workspace_entries) == [] and list(bobs.expansions) == []
        for caller, secret in ((BOB, key), (ANA, other)):
            error = await rpc_error(retrieval.GetReceipt(pb.GetReceiptRequest(
                caller=caller, receipt_id=found.receipt_id), metadata=auth(secret)))
            assert error.code == grpc.StatusCode.NOT_FOUND

        error = await rpc_error(retrieval.RetrieveContext(pb.RetrieveContextRequest(
            caller=ANA, run_id="run-2", rerank=True), metadata=auth(key)))
        assert (error.code, list(error.field_violations)) == (grpc.StatusCode.INVALID_ARGUMENT,
                                                               ["rerank"])
        error = await rpc_error(retrieval.RetrieveContext(pb.RetrieveContextRequest(
            caller=ANA, run_id="run-2", expand_session_window=21), metadata=auth(key)))
        assert list(error.field_violations) == ["expand_session_window"]
        error = await rpc_error(retrieval.RetrieveContext(pb.RetrieveContextRequest(
            caller=ANA, run_id="run-2"), metadata=auth("am_bogus")))
        assert error.code == grpc.StatusCode.UNAUTHENTICATED
