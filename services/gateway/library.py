"""The memory library, for every surface (gRPC here; REST and the web page call
the same handler).

Each call of ``agentmemory.gateway.v1.MemoryLibraryService`` is relayed to the
agent-memory call of the same name with the caller's principal (account and
role from the API key), by the gateway's wire relay (``relay.py``): agent memory
validates, applies scope and role, and answers.
"""

from __future__ import annotations

from typing import Any

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.gateway.v1 import memory_library_service_pb2 as pb
from google.protobuf.message import Message

from libs.clients.agent_memory import MEMORIES
from libs.identity import Principal
from services.gateway.accounts import Accounts
from services.gateway.bindings import MemoryBindings
from services.gateway.relay import Mirror
from services.gateway.upstreams import Upstreams

METHODS = tuple(pb.DESCRIPTOR.services_by_name["MemoryLibraryService"].methods_by_name)


class MemoryLibrary:
    def __init__(self, upstreams: Upstreams, bindings: MemoryBindings,
                 accounts: Accounts) -> None:
        self._agent_memory = Mirror(upstreams.agent_memory, MEMORIES, pb, memory_pb)
        self._bindings = bindings
        self._accounts = accounts

    async def call(self, method: str, principal: Principal, request: Message) -> Any:
        """Answer ``request`` (a gateway library request; its ``caller`` is ignored, the
        principal stands for it) with the gateway response of ``method``."""
        response = await self._agent_memory.call(method, principal, request)
        if method == "UpdateAgentSettings":
            self._bindings.forget_agent(principal)
        elif method == "UpdateAccountSettings":
            self._bindings.forget_account(principal.account_id)
            self._accounts.forget(principal.account_id)
        return response
