"""Thread records: which account, agent and user a thread belongs to.

A thread another account, agent or user owns is NOT_FOUND, exactly like one
that does not exist: callers learn nothing about other tenants.
"""

from __future__ import annotations

import asyncpg

from libs.errors import NotFound
from libs.identity import Principal


def _not_found(thread_id: str) -> NotFound:
    return NotFound(f"thread {thread_id} not found", reason="THREAD_NOT_FOUND")


class Threads:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def ensure(self, principal: Principal, thread_id: str) -> None:
        """Create the record on first use; refuse a thread that is someone else's.

        A plain read first: after the first message of a thread, appends write nothing here."""
        owner = await self._owner(principal, thread_id)
        if owner is None:
            await self._pool.execute(
                "INSERT INTO threads (account_id, agent_id, thread_id, owner_user_id, environment)"
                " VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                principal.account_id, principal.agent_id, thread_id, principal.user_id or "",
                principal.environment)
            owner = await self._owner(principal, thread_id)
        if owner and owner != principal.user_id:
            raise _not_found(thread_id)

    async def _owner(self, principal: Principal, thread_id: str) -> str | None:
        return await self._pool.fetchval(
            "SELECT owner_user_id FROM threads WHERE account_id = $1 AND agent_id = $2"
            " AND thread_id = $3", principal.account_id, principal.agent_id, thread_id)

    async def require(self, principal: Principal, thread_id: str) -> None:
        owner = await self._owner(principal, thread_id)
        if owner is None or (owner and owner != principal.user_id):
            raise _not_found(thread_id)

    async def delete(self, principal: Principal, thread_id: str) -> None:
        await self.require(principal, thread_id)
        await self._pool.execute(
            "DELETE FROM threads WHERE account_id = $1 AND agent_id = $2 AND thread_id = $3",
            principal.account_id, principal.agent_id, thread_id)
