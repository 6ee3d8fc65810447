"""What an agent's settings in agent memory turn on in the gateway, with the
account's ``memory_enabled``:

- the Memory binding (the agent setting ``memory_bound``, changed only by
  UpdateAgentSettings, audited there): the memory tools are offered only when
  it and the account's ``memory_enabled`` both hold;
- the relevant-memories block of BuildContext (``relevant_memories_enabled``
  and its ``relevant_memories_token_budget``), likewise only with memory
  enabled for the account.

Every gateway replica reads the same settings; each caches them for
``GATEWAY_SETTINGS_CACHE_SECONDS``, so a change reaches every replica within
that time (at once on the replica that made it). A caller's ``capabilities``
change nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from cachetools import TTLCache

from libs.identity import Principal
from services.gateway.upstreams import Upstreams

CACHE_SIZE = 10_000  # agents' settings kept; the least recently read go first


@dataclass(frozen=True)
class AgentBinding:
    memory_bound: bool
    #: The token budget of the relevant-memories block; 0: the block is off.
    relevant_memories_budget: int


class MemoryBindings:
    def __init__(self, upstreams: Upstreams, *, cache_seconds: float = 5.0) -> None:
        self._upstreams = upstreams
        self._known: TTLCache[tuple[str, str, str], AgentBinding] = TTLCache(
            CACHE_SIZE, cache_seconds, timer=time.monotonic)

    @staticmethod
    def _key(principal: Principal) -> tuple[str, str, str]:
        return principal.account_id, principal.environment, principal.agent_id

    async def binding(self, principal: Principal) -> AgentBinding:
        key = self._key(principal)
        known = self._known.get(key)
        if known is not None:
            return known
        reply = await self._upstreams.agent_memory.get_agent_settings(
            memory_pb.GetAgentSettingsRequest(principal=principal.to_proto()))
        settings, enabled = reply.settings, reply.account_memory_enabled
        binding = AgentBinding(
            memory_bound=settings.memory_bound and enabled,
            relevant_memories_budget=(settings.relevant_memories_token_budget
                                      if settings.relevant_memories_enabled and enabled else 0))
        self._known[key] = binding
        return binding

    async def bound(self, principal: Principal) -> bool:
        return (await self.binding(principal)).memory_bound

    def forget_agent(self, principal: Principal) -> None:
        """The agent's settings changed through this replica: read them again."""
        self._known.pop(self._key(principal), None)

    def forget_account(self, account_id: str) -> None:
        """The account's settings changed through this replica: read every agent's again."""
        for key in [k for k in self._known if k[0] == account_id]:
            del self._known[key]
