"""Whether Memory is bound to an agent: the agent setting ``memory_bound`` in
agent memory (changed only by UpdateAgentSettings, audited there), and the
account's ``memory_enabled``. The memory tools are offered only when both hold.

Every gateway replica reads the same setting; each caches it for
``GATEWAY_SETTINGS_CACHE_SECONDS``, so a change reaches every replica within
that time (at once on the replica that made it). A caller's ``capabilities``
change nothing.
"""

from __future__ import annotations

import time

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from cachetools import TTLCache

from libs.clients import upstream
from libs.identity import Principal
from services.gateway.upstreams import Upstreams

CACHE_SIZE = 10_000  # agents' bindings kept; the least recently read go first


class MemoryBindings:
    def __init__(self, upstreams: Upstreams, *, cache_seconds: float = 5.0) -> None:
        self._upstreams = upstreams
        self._known: TTLCache[tuple[str, str, str], bool] = TTLCache(
            CACHE_SIZE, cache_seconds, timer=time.monotonic)

    @staticmethod
    def _key(principal: Principal) -> tuple[str, str, str]:
        return principal.account_id, principal.environment, principal.agent_id

    async def bound(self, principal: Principal) -> bool:
        key = self._key(principal)
        known = self._known.get(key)
        if known is not None:
            return known
        async with upstream("agent_memory"):
            reply = await self._upstreams.agent_memory.GetAgentSettings(
                memory_pb.GetAgentSettingsRequest(principal=principal.to_proto()))
        bound = reply.settings.memory_bound and reply.account_memory_enabled
        self._known[key] = bound
        return bound

    def forget_agent(self, principal: Principal) -> None:
        """The agent's settings changed through this replica: read them again."""
        self._known.pop(self._key(principal), None)

    def forget_account(self, account_id: str) -> None:
        """The account's settings changed through this replica: read every agent's again."""
        for key in [k for k in self._known if k[0] == account_id]:
            del self._known[key]
