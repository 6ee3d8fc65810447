"""The gateway's clients of the four internal services (``libs/clients/``).

Each address may name several replicas (``libs.clients``); the journal's calls
go to the process holding the thread's shard (``libs.clients.journal``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from libs.clients.agent_memory import AgentMemoryClient
from libs.clients.journal import JournalClient
from libs.clients.search import SearchClient
from libs.clients.thread_memory import ThreadMemoryClient
from libs.settings import Secret
from services.gateway.settings import GatewayDependencies


@dataclass
class Upstreams:
    journal: JournalClient
    thread_memory: ThreadMemoryClient
    agent_memory: AgentMemoryClient
    search: SearchClient

    @classmethod
    def connect(cls, dependencies: GatewayDependencies, token: Secret,
                interceptors: Sequence = (), agent_memory_interceptors: Sequence = ()
                ) -> Upstreams:
        """``agent_memory_interceptors``: on the agent-memory channel only, after the others."""
        return cls(
            JournalClient(dependencies.journal_address, timeout=10.0, internal_token=token,
                          interceptors=interceptors),
            ThreadMemoryClient(dependencies.thread_memory_address, timeout=10.0,
                               internal_token=token, interceptors=interceptors),
            AgentMemoryClient(dependencies.agent_memory_address, timeout=10.0,
                              internal_token=token,
                              interceptors=[*interceptors, *agent_memory_interceptors]),
            SearchClient(dependencies.search_address, timeout=60.0, internal_token=token,
                         interceptors=interceptors))

    async def close(self) -> None:
        for client in (self.journal, self.thread_memory, self.agent_memory, self.search):
            await client.close()
