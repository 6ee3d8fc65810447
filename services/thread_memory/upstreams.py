"""What thread memory sends agent memory (``libs.clients.agent_memory``): the
pre-compaction flush's facts, and the settings it needs to flush at all."""

from __future__ import annotations

from dataclasses import dataclass

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.common.v1 import principal_pb2

from libs import memory_names
from libs.clients.agent_memory import AgentMemoryClient
from libs.identity import Principal


@dataclass(frozen=True)
class Fact:
    key: str
    content: str
    category: str  # a name of libs.memory_names.CATEGORIES (user_profile, ...)
    importance: float


async def memory_bound(agent_memory: AgentMemoryClient, principal: Principal) -> bool:
    """The agent setting, and memory enabled for the account: the flush needs both."""
    reply = await agent_memory.get_agent_settings(
        memory_pb.GetAgentSettingsRequest(principal=principal.to_proto()))
    return reply.settings.memory_bound and reply.account_memory_enabled


def flushed(principal: Principal, fact: Fact, thread_id: str,
            message_ids: list[str]) -> memory_pb.StoreRequest:
    """The store of a fact the flush found in ``message_ids`` (the last 100 named)."""
    return memory_pb.StoreRequest(
        principal=principal.to_proto(), key=fact.key, content=fact.content,
        category=memory_names.category(fact.category), importance=fact.importance,
        source=memory_pb.Source(kind=memory_pb.SOURCE_KIND_PRE_COMPACTION_FLUSH,
                                thread_id=thread_id, message_ids=message_ids[-100:]))


def owner(named: principal_pb2.Principal) -> Principal:
    """The thread owner the journal names (in a change-feed event or thread stats)."""
    return Principal(named.account_id, named.agent_id, named.user_id or None,
                     named.environment or "default")
