"""The gateway's channels and stubs to the four internal services.

Each address may name several replicas (``libs.clients``); the journal's calls
go to the process holding the thread's shard (``libs.journal_client``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as agent_memory_grpc
from agentmemory.agent_memory.v1 import learning_service_pb2_grpc as learning_grpc
from agentmemory.agent_memory.v1 import retrieval_pb2_grpc as retrieval_grpc
from agentmemory.search.v1 import search_service_pb2_grpc as search_grpc
from agentmemory.thread_memory.v1 import thread_memory_service_pb2_grpc as thread_memory_grpc

from libs import clients
from libs.journal_client import JournalShards
from libs.settings import Secret
from services.gateway.settings import GatewayDependencies


@dataclass
class Upstreams:
    journal: JournalShards
    thread_memory: thread_memory_grpc.ThreadMemoryServiceStub
    agent_memory: agent_memory_grpc.AgentMemoryServiceStub
    search: search_grpc.SearchServiceStub
    # Agent memory's LearningService and RetrievalService (on the agent-memory channel).
    learning: learning_grpc.LearningServiceStub
    retrieval: retrieval_grpc.RetrievalServiceStub
    _channels: list

    @classmethod
    def connect(cls, dependencies: GatewayDependencies, token: Secret,
                interceptors: Sequence = (), agent_memory_interceptors: Sequence = ()
                ) -> Upstreams:
        """``agent_memory_interceptors``: on the agent-memory channel only, after the others."""
        def channel(address: str, timeout: float = 10.0, extra: Sequence = ()):
            return clients.channel(address, default_timeout=timeout, internal_token=token,
                                   interceptors=[*interceptors, *extra])

        channels = [channel(dependencies.thread_memory_address),
                    channel(dependencies.agent_memory_address, extra=agent_memory_interceptors),
                    channel(dependencies.search_address, timeout=60.0)]
        journal = JournalShards(dependencies.journal_address, timeout=10.0, internal_token=token,
                                interceptors=interceptors)
        return cls(journal,
                   thread_memory_grpc.ThreadMemoryServiceStub(channels[0]),
                   agent_memory_grpc.AgentMemoryServiceStub(channels[1]),
                   search_grpc.SearchServiceStub(channels[2]),
                   learning_grpc.LearningServiceStub(channels[1]),
                   retrieval_grpc.RetrievalServiceStub(channels[1]), channels)

    async def close(self) -> None:
        await self.journal.close()
        for channel in self._channels:
            await channel.close()
