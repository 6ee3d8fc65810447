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

from libs.clients import upstream
from libs.identity import Principal
from services.gateway.upstreams import Upstreams


class MemoryBindings:
    def __init__(self, upstreams: Upstreams, *, cache_seconds: float = 5.0) -> None:
        self._upstreams = upstreams
        self._cache_seconds = cache_seconds
        self._known: dict[tuple[str, str, str], tuple[bool, float]] = {}

    @staticmethod
    def _key(principal: Principal) -> tuple[str, str, str]:
        return principal.account_id, principal.environment, principal.agent_id

    async def bound(self, principal: Principal) -> bool:
        key = self._key(principal)
        known = self._known.get(key)
        if known is not None and time.monotonic() - known[1] < self._cache_seconds:
            return known[0]
        async with upstream("agent_memory"):
            reply = await self._upstreams.agent_memory.GetAgentSettings(
                memory_pb.GetAgentSettingsRequest(principal=principal.to_proto()))
        bound = reply.settings.memory_bound and reply.account_memory_enabled
        self._known[key] = (bound, time.monotonic())
        return bound

    def forget_agent(self, principal: Principal) -> None:
        """The agent's settings changed through this replica: read them again."""
        self._known.pop(self._key(principal), None)

    def forget_account(self, account_id: str) -> None:
        """The account's settings changed through this replica: read every agent's again."""
        self._known = {k: v for k, v in self._known.items() if k[0] != account_id}
