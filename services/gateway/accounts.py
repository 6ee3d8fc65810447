"""What an account allows, as the gateway enforces it: the environments its callers may
name, and its quota of runs a day. Both are account settings owned by agent memory
(``AccountSettings.environments`` and ``.quotas``, changed by UpdateAccountSettings and
audited there); every gateway replica reads them through the same cache as the Memory
binding (``GATEWAY_SETTINGS_CACHE_SECONDS``).

An unknown environment is refused on every call, before anything is read or made
(each environment of an account is an index collection in agent memory, so naming new
ones freely would let any key make the platform allocate without bound). While agent
memory cannot be asked, the last answer keeps being used; an account never read yet
may use only "default", the environment every account starts with.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, date, datetime

import asyncpg
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from cachetools import LRUCache

from libs.errors import DomainError, InvalidArgument
from libs.identity import DEFAULT_ENVIRONMENT, Principal
from libs.postgres import unavailable_when_down
from libs.quotas import quota_exceeded
from services.gateway.upstreams import Upstreams

CACHE_SIZE = 10_000  # accounts kept; the least recently used go first


@dataclass(frozen=True)
class AccountPolicy:
    environments: frozenset[str]
    runs_per_day: int
    read_at: float  # time.monotonic()


class Accounts:
    def __init__(self, upstreams: Upstreams, pool: asyncpg.Pool, *,
                 cache_seconds: float = 5.0) -> None:
        self._upstreams = upstreams
        self._pool = pool
        self._cache_seconds = cache_seconds
        self._known: LRUCache[str, AccountPolicy] = LRUCache(CACHE_SIZE)

    async def policy(self, principal: Principal) -> AccountPolicy | None:
        known = self._known.get(principal.account_id)
        if known is not None and time.monotonic() - known.read_at < self._cache_seconds:
            return known
        try:
            reply = await self._upstreams.agent_memory.get_account_settings(
                memory_pb.GetAccountSettingsRequest(principal=principal.to_proto()))
        except DomainError:
            if known is None and principal.environment != DEFAULT_ENVIRONMENT:
                raise
            return known  # stale while agent memory cannot answer
        settings = reply.settings
        policy = AccountPolicy(frozenset(settings.environments), settings.quotas.runs_per_day,
                               time.monotonic())
        self._known[principal.account_id] = policy
        return policy

    async def check_environment(self, principal: Principal) -> None:
        policy = await self.policy(principal)
        if policy is not None and principal.environment not in policy.environments:
            raise InvalidArgument(
                "caller.environment", f"unknown environment {principal.environment!r}: this "
                f"account's are {', '.join(sorted(policy.environments))} (an admin adds one with "
                "UpdateAccountSettings, field environments)", reason="ENVIRONMENT_UNKNOWN")

    def forget(self, account_id: str) -> None:
        """The account's settings changed through this replica: read them again."""
        self._known.pop(account_id, None)

    async def check_run_quota(self, principal: Principal) -> None:
        policy = await self.policy(principal)
        if policy is None:
            return
        async with unavailable_when_down():
            started = await self._pool.fetchval(
                "SELECT runs FROM run_starts WHERE account_id = $1 AND day = $2",
                principal.account_id, _today())
        if (started or 0) >= policy.runs_per_day:
            raise quota_exceeded("runs_per_day", policy.runs_per_day,
                                 f"the account started {started} runs today (UTC)")

    async def count_run(self, principal: Principal) -> None:
        """One more run started today; the account's earlier days are forgotten."""
        today = _today()
        async with unavailable_when_down():
            await self._pool.execute(
                "WITH gone AS (DELETE FROM run_starts WHERE account_id = $1 AND day < $2)"
                " INSERT INTO run_starts (account_id, day, runs) VALUES ($1, $2, 1)"
                " ON CONFLICT (account_id, day) DO UPDATE SET runs = run_starts.runs + 1",
                principal.account_id, today)


def _today() -> date:
    return datetime.now(UTC).date()
