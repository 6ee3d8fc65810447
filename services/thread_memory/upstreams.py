"""Thread memory's agent-memory client (the pre-compaction flush writes through it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as memory_grpc
from agentmemory.common.v1 import principal_pb2

from libs import clients, memory_names
from libs.clients import upstream
from libs.identity import Principal
from libs.settings import Secret


@dataclass(frozen=True)
class Fact:
    key: str
    content: str
    category: str  # a name of libs.memory_names.CATEGORIES (user_profile, ...)
    importance: float


class AgentMemoryWriter:
    def __init__(self, target: str, *, timeout: float = 10.0,
                 internal_token: Secret | None = None, interceptors: Sequence = ()) -> None:
        self._channel = clients.channel(target, default_timeout=timeout,
                                        internal_token=internal_token, interceptors=interceptors)
        self._stub = memory_grpc.AgentMemoryServiceStub(self._channel)

    async def close(self) -> None:
        await self._channel.close()

    async def memory_bound(self, principal: Principal) -> bool:
        """The agent setting, and memory enabled for the account: the flush needs both."""
        async with upstream("agent_memory"):
            reply = await self._stub.GetAgentSettings(
                memory_pb.GetAgentSettingsRequest(principal=principal.to_proto()))
        return reply.settings.memory_bound and reply.account_memory_enabled

    async def store(self, principal: Principal, fact: Fact, thread_id: str,
                    message_ids: list[str]) -> None:
        async with upstream("agent_memory"):
            await self._stub.Store(memory_pb.StoreRequest(
                principal=principal.to_proto(), key=fact.key, content=fact.content,
                category=memory_names.category(fact.category), importance=fact.importance,
                source=memory_pb.Source(kind=memory_pb.SOURCE_KIND_PRE_COMPACTION_FLUSH,
                                        thread_id=thread_id, message_ids=message_ids[-100:]),
            ))


def owner(named: principal_pb2.Principal) -> Principal:
    """The thread owner the journal names (in a change-feed event or thread stats)."""
    return Principal(named.account_id, named.agent_id, named.user_id or None,
                     named.environment or "default")
