"""Relevant memories in every turn's context (seed 004's dispatcher), through the gateway
with every service as its own process: off by default (the context exactly as before);
on, an inert block right after the pinned facts and before the summary, within the
agent's budget, never repeating a pinned fact, never another user's private memory or a
superseded one, with a receipt that credits exactly what it delivered; a delegated
sub-agent gets none; the receipts quota or a retrieval that times out leaves the turn
intact and says so; memory_recall names each memory's source. Each test uses an account
of its own."""

from __future__ import annotations

import asyncio
import time
import uuid

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.common.v1 import message_pb2, principal_pb2, run_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from agentmemory.gateway.v1 import memory_library_service_pb2_grpc as library_grpc
from agentmemory.gateway.v1 import retrieval_service_pb2 as retrieval_pb
from agentmemory.gateway.v1 import retrieval_service_pb2_grpc as retrieval_grpc
from google.protobuf import field_mask_pb2, struct_pb2

from libs import clients
from libs.tokens import count_tokens
from services.agent_memory.retrieval.render import RELEVANT_DISCLAIMER
from services.gateway.context import SUMMARY_PREFIX
from services.gateway.tools import TOOL_DATA_NOTE
from testkit.platform import another_gateway
from testkit.waiting import eventually
from tests.surfaces.test_environments_and_quotas import operator

AGENT = "dispatcher"
USER, ASSISTANT = message_pb2.ROLE_USER, message_pb2.ROLE_ASSISTANT
QUESTION = "How do we number invoices in the billing export?"
PINNED = "Ana sends the invoices of the billing export on Fridays."
STATUS = pb.RelevantMemoriesStatus


def caller(user: str = "ana") -> pb.Caller:
    return pb.Caller(agent_id=AGENT, user_id=user, surface=principal_pb2.SURFACE_AGENT)


class Account:
    def __init__(self, platform, channel) -> None:
        self.name = f"rel-{uuid.uuid4().hex[:8]}"
        self.key = platform.key(self.name)
        platform.bind_memory(self.name, AGENT)
        self.gateway = pb_grpc.GatewayServiceStub(channel)
        self.library = library_grpc.MemoryLibraryServiceStub(channel)
        self.retrieval = retrieval_grpc.RetrievalServiceStub(channel)

    @property
    def auth(self):
        return (("authorization", f"Bearer {self.key}"),)

    async def relevant_memories(self, enabled: bool = True, budget: int = 0) -> None:
        await self.library.UpdateAgentSettings(library_pb.UpdateAgentSettingsRequest(
            caller=caller(), settings=memory_pb.AgentSettings(
                relevant_memories_enabled=enabled, relevant_memories_token_budget=budget),
            update_mask=field_mask_pb2.FieldMask(paths=[
                "relevant_memories_enabled", "relevant_memories_token_budget"])),
            metadata=self.auth)

    async def add(self, key: str, content: str, *, user: str = "ana",
                  scope=memory_pb.MEMORY_SCOPE_AGENT, kind=memory_pb.MEMORY_KIND_PROJECT_FACT,
                  source=memory_pb.SOURCE_KIND_USER, importance: float = 0.5) -> memory_pb.Entry:
        reply = await self.library.AddMemory(library_pb.AddMemoryRequest(
            caller=caller(user), memory=memory_pb.NewMemory(
                scope=scope, kind=kind, key=key, content=content, importance=importance,
                source=memory_pb.Source(kind=source))), metadata=self.auth)
        return reply.memory

    async def pin(self) -> memory_pb.Entry:
        return await self.add("invoice_day", PINNED, scope=memory_pb.MEMORY_SCOPE_PRIVATE,
                              kind=memory_pb.MEMORY_KIND_USER_PROFILE, importance=0.9)

    async def ask(self, thread: str, question: str = QUESTION, user: str = "ana",
                  filler: int = 0) -> None:
        messages = [message_pb2.Message(id=f"f{i}", role=USER if i % 2 == 0 else ASSISTANT,
                                        content=f"Filler message {i} about the weather.")
                    for i in range(filler)]
        messages.append(message_pb2.Message(id="q", role=USER, content=question))
        for start in range(0, len(messages), 20):
            await self.gateway.AppendMessages(pb.AppendMessagesRequest(
                caller=caller(user), thread_id=thread, messages=messages[start:start + 20]),
                metadata=self.auth)

    async def context(self, thread: str = "t", user: str = "ana", gateway=None,
                      **fields) -> pb.BuildContextResponse:
        return await (gateway or self.gateway).BuildContext(pb.BuildContextRequest(
            caller=caller(user), thread_id=thread, **fields), metadata=self.auth)

    async def invoice_facts(self) -> list[memory_pb.Entry]:
        return [await self.add(f"invoice_rule_{i}", f"Invoices in the billing export are "
                               f"numbered with prefix INV{i} for entity {i}.") for i in range(8)]


def blocks(reply: pb.BuildContextResponse) -> list[str]:
    return [m.content for m in reply.messages if m.content.startswith("<relevant_memories>")]


async def test_off_by_default_the_context_is_as_before(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        await acme.pin()
        await acme.invoice_facts()
        await acme.ask("t")
        reply = await acme.context()
        assert [m.role for m in reply.messages] == [message_pb2.ROLE_SYSTEM, USER]
        assert reply.messages[0].content.startswith("<remembered_facts>")
        assert reply.relevant_memories_status == STATUS.RELEVANT_MEMORIES_STATUS_OFF
        assert reply.relevant_memories_receipt_id == ""
        await acme.relevant_memories(True)
        assert blocks(await acme.context())
        await acme.relevant_memories(False)
        assert not blocks(await acme.context())


async def test_the_block_follows_the_pinned_facts_within_its_budget(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        pinned = await acme.pin()
        await acme.invoice_facts()
        old = await acme.add("invoice_scheme_old", "Invoices in the billing export were "
                             "numbered by month.")
        new = await acme.add("invoice_scheme", "Invoices in the billing export are numbered "
                             "by year.")
        await acme.library.SupersedeMemory(library_pb.SupersedeMemoryRequest(
            caller=caller(), memory_id=old.id, superseded_by=new.id), metadata=acme.auth)
        await acme.relevant_memories(True, budget=200)
        await acme.ask("t", filler=59)  # 60 messages: thread memory writes a summary
        deadline = time.monotonic() + 60
        while True:
            reply = await acme.context()
            if any(m.content.startswith(SUMMARY_PREFIX) for m in reply.messages):
                break
            assert time.monotonic() < deadline, "never summarized"
            await asyncio.sleep(0.5)
        facts, block, summary, *window = reply.messages
        assert facts.content.startswith("<remembered_facts>") and PINNED in facts.content
        assert block.role == message_pb2.ROLE_SYSTEM and blocks(reply) == [block.content]
        assert summary.content.startswith(SUMMARY_PREFIX) and window[-1].content == QUESTION
        assert block.content.endswith("</relevant_memories>\n" + RELEVANT_DISCLAIMER)
        assert "INV" in block.content and pinned.content not in block.content
        assert old.content not in block.content
        assert count_tokens(block.content) <= 200
        assert reply.relevant_memories_status == STATUS.RELEVANT_MEMORIES_STATUS_DELIVERED
        assert reply.relevant_memories_receipt_id
        # Frozen for the turn: each call retrieves once and has a receipt of its own.
        again = await acme.context()
        assert again.relevant_memories_receipt_id != reply.relevant_memories_receipt_id
        delegated = await acme.context(delegated=True)
        assert [m.content for m in delegated.messages] == [facts.content]
        assert delegated.relevant_memories_status == STATUS.RELEVANT_MEMORIES_STATUS_OFF


async def test_the_receipt_credits_exactly_what_the_block_delivered(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        facts = await acme.invoice_facts()
        await acme.relevant_memories(True, budget=300)  # three memories at most
        await acme.ask("t")
        reply = await acme.context()
        [block] = blocks(reply)
        shown = [f.id for f in facts if f.content.split(" numbered ")[1][:-1] in block]
        assert 0 < len(shown) <= 3
        receipt = (await acme.retrieval.GetReceipt(retrieval_pb.GetReceiptRequest(
            caller=caller(), receipt_id=reply.relevant_memories_receipt_id),
            metadata=acme.auth)).receipt
        assert sorted(i.memory_id for i in receipt.items) == sorted(shown)
        assert receipt.semantic_query == QUESTION
        credited = await acme.retrieval.RecordOutcome(retrieval_pb.RecordOutcomeRequest(
            caller=caller(), receipt_id=reply.relevant_memories_receipt_id,
            request_id="outcome-1", outcome=run_pb2.RUN_OUTCOME_SUCCEEDED), metadata=acme.auth)
        assert sorted(credited.credited_memory_ids) == sorted(shown)


async def test_never_another_users_private_memory(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        await acme.add("ana_invoices", "Ana numbers invoices in the billing export by "
                       "quarter.", scope=memory_pb.MEMORY_SCOPE_PRIVATE)
        await acme.add("bob_invoices", "Bob numbers invoices in the billing export by "
                       "week.", user="bob", scope=memory_pb.MEMORY_SCOPE_PRIVATE)
        await acme.relevant_memories(True)
        for user, mine, theirs in (("ana", "by quarter", "by week"),
                                   ("bob", "by week", "by quarter")):
            await acme.ask(f"t-{user}", user=user)
            [block] = blocks(await acme.context(f"t-{user}", user=user))
            assert mine in block and theirs not in block, user


async def test_the_receipts_quota_leaves_the_turn_intact_and_says_so(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        await acme.pin()
        await acme.invoice_facts()
        await acme.relevant_memories(True)
        await acme.ask("t")
        operator(platform, acme.name, "--quota", "receipts_per_day=1")
        first = await acme.context()
        assert first.relevant_memories_status == STATUS.RELEVANT_MEMORIES_STATUS_DELIVERED
        refused = await acme.context()
        assert refused.relevant_memories_status == \
            STATUS.RELEVANT_MEMORIES_STATUS_QUOTA_EXCEEDED
        assert refused.relevant_memories_receipt_id == ""
        assert list(refused.messages) == [m for m in first.messages
                                          if not m.content.startswith("<relevant_memories>")]
        assert [t.name for t in refused.tools] == [t.name for t in first.tools]


async def test_a_retrieval_that_times_out_leaves_the_turn_intact_and_says_so(platform):
    with another_gateway(platform, GATEWAY_RELEVANT_MEMORIES_TIMEOUT_SECONDS="0.000001") \
            as impatient:
        async with clients.channel(platform.gateway, default_timeout=30) as channel, \
                clients.channel(impatient.address, default_timeout=30) as other:
            acme = Account(platform, channel)
            await acme.pin()
            await acme.invoice_facts()
            await acme.relevant_memories(True)
            await acme.ask("t")
            patient = await acme.context()
            assert blocks(patient)
            hurried = await acme.context(gateway=pb_grpc.GatewayServiceStub(other))
            assert hurried.relevant_memories_status == \
                STATUS.RELEVANT_MEMORIES_STATUS_TIMED_OUT
            assert list(hurried.messages) == [m for m in patient.messages
                                              if not m.content.startswith("<relevant_memories>")]


async def test_memory_recall_names_each_memorys_source(platform):
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        acme = Account(platform, channel)
        await acme.add("invoice_owner", "Invoices of the billing export are owned by Ana.")
        await acme.add("invoice_count", "The billing export API reports 412 invoices.",
                       source=memory_pb.SOURCE_KIND_TOOL_RESULT)
        arguments = struct_pb2.Struct()
        arguments.update({"query": "invoices of the billing export", "limit": 5})
        entries = {}

        async def both_recalled() -> bool:  # once the index has them (the outbox may lag)
            reply = await acme.gateway.CallTool(pb.CallToolRequest(
                caller=caller(), tool_name="memory_recall", arguments=arguments),
                metadata=acme.auth)
            entries.update({e["key"]: e for e in reply.result["entries"]})
            return {"invoice_owner", "invoice_count"} <= entries.keys()

        await eventually(both_recalled, timeout=30)
        assert (entries["invoice_owner"]["source"], entries["invoice_count"]["source"]) == (
            "user", "tool_result")
        assert "note" not in entries["invoice_owner"]
        assert entries["invoice_count"]["note"] == TOOL_DATA_NOTE
