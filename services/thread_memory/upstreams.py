"""Thread memory's clients: the journal (messages, change feed) and agent memory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as memory_grpc
from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb
from agentmemory.journal.v1 import journal_service_pb2_grpc as journal_grpc

from libs import clients
from libs.clients import upstream
from libs.identity import Principal

PAGE = 1000


class JournalReader:
    def __init__(self, target: str, *, timeout: float = 5.0) -> None:
        self._channel = clients.channel(target, default_timeout=timeout)
        self._stub = journal_grpc.JournalServiceStub(self._channel)

    async def close(self) -> None:
        await self._channel.close()

    async def recent(self, principal: Principal, thread_id: str,
                     limit: int) -> list[message_pb2.Message]:
        async with upstream("journal"):
            reply = await self._stub.ReadRecent(journal_pb.ReadRecentRequest(
                principal=principal.to_proto(), thread_id=thread_id, limit=limit))
        return list(reply.messages)

    async def last_offset(self, principal: Principal, thread_id: str) -> int:
        async with upstream("journal"):
            reply = await self._stub.GetThreadStats(journal_pb.GetThreadStatsRequest(
                principal=principal.to_proto(), thread_id=thread_id))
        return reply.last_offset

    async def between(self, principal: Principal, thread_id: str, after: int,
                      through: int) -> list[message_pb2.Message]:
        """Messages with after < offset <= through, in order."""
        messages: list[message_pb2.Message] = []
        start = after + 1
        while start <= through:
            async with upstream("journal"):
                reply = await self._stub.ReadRange(journal_pb.ReadRangeRequest(
                    principal=principal.to_proto(), thread_id=thread_id, from_offset=start,
                    page_size=min(PAGE, through - start + 1)))
            if not reply.messages:
                break
            messages += [m for m in reply.messages if m.offset <= through]
            start = reply.messages[-1].offset + 1
        return messages

    async def shard_count(self) -> int:
        async with upstream("journal"):
            reply = await self._stub.DescribeShards(journal_pb.DescribeShardsRequest())
        return reply.shard_count

    async def follow(self, shard: int, after: int,
                     timeout: float) -> AsyncIterator[journal_pb.SubscribeResponse]:
        """The change feed after ``after``; ends after ``timeout`` (callers resubscribe)."""
        call = self._stub.Subscribe(
            journal_pb.SubscribeRequest(shard=shard, after_sequence=after), timeout=timeout)
        try:
            async for event in call:
                yield event
        finally:
            call.cancel()


@dataclass(frozen=True)
class Fact:
    key: str
    content: str
    category: str  # user_profile | project_fact | observation
    importance: float


_CATEGORIES = {"user_profile": memory_pb.CATEGORY_USER_PROFILE,
               "project_fact": memory_pb.CATEGORY_PROJECT_FACT,
               "observation": memory_pb.CATEGORY_OBSERVATION}


class AgentMemoryWriter:
    def __init__(self, target: str, *, timeout: float = 10.0) -> None:
        self._channel = clients.channel(target, default_timeout=timeout)
        self._stub = memory_grpc.AgentMemoryServiceStub(self._channel)

    async def close(self) -> None:
        await self._channel.close()

    async def memory_bound(self, principal: Principal) -> bool:
        async with upstream("agent_memory"):
            reply = await self._stub.GetAgentSettings(
                memory_pb.GetAgentSettingsRequest(principal=principal.to_proto()))
        return reply.settings.memory_bound

    async def store(self, principal: Principal, fact: Fact, thread_id: str,
                    message_ids: list[str]) -> None:
        async with upstream("agent_memory"):
            await self._stub.Store(memory_pb.StoreRequest(
                principal=principal.to_proto(), key=fact.key, content=fact.content,
                category=_CATEGORIES[fact.category], importance=fact.importance,
                source=memory_pb.Source(kind=memory_pb.SOURCE_KIND_PRE_COMPACTION_FLUSH,
                                        thread_id=thread_id, message_ids=message_ids[-100:]),
            ))


def owner(event_principal: principal_pb2.Principal) -> Principal:
    """The thread owner named by a change-feed event."""
    return Principal(event_principal.account_id, event_principal.agent_id,
                     event_principal.user_id or None, event_principal.environment or "default")
