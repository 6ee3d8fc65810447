"""Thread records: which account, agent and user a thread belongs to, and its
metadata (``config.max_working_memory_messages`` lowers its window).

A thread another account, agent or user owns is NOT_FOUND, exactly like one
that does not exist: callers learn nothing about other tenants.
"""

from __future__ import annotations

import json
from typing import Any

import asyncpg

from libs.errors import NotFound
from libs.identity import Principal

_OWNER = ("SELECT owner_user_id, metadata FROM threads WHERE account_id = $1 AND agent_id = $2"
          " AND thread_id = $3")


def _not_found(thread_id: str) -> NotFound:
    return NotFound(f"thread {thread_id} not found", reason="THREAD_NOT_FOUND")


class Threads:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def ensure(self, principal: Principal, thread_id: str,
                     metadata: dict[str, Any] | None = None) -> None:
        """Create the record (with ``metadata``) on first use; refuse a thread that is
        someone else's.

        A plain read first: after the first message of a thread, appends write nothing here."""
        row = await self._row(principal, thread_id)
        if row is None:
            await self._pool.execute(
                "INSERT INTO threads (account_id, agent_id, thread_id, owner_user_id, environment,"
                " metadata) VALUES ($1, $2, $3, $4, $5, $6::jsonb) ON CONFLICT DO NOTHING",
                principal.account_id, principal.agent_id, thread_id, principal.user_id or "",
                principal.environment, json.dumps(metadata or {}))
            row = await self._row(principal, thread_id)
        _check_owner(row, principal, thread_id)

    async def _row(self, principal: Principal, thread_id: str) -> asyncpg.Record | None:
        return await self._pool.fetchrow(_OWNER, principal.account_id, principal.agent_id,
                                         thread_id)

    async def require(self, principal: Principal, thread_id: str) -> dict[str, Any]:
        """The thread's metadata, if the thread exists and is the caller's."""
        row = await self._row(principal, thread_id)
        if row is None:
            raise _not_found(thread_id)
        _check_owner(row, principal, thread_id)
        return json.loads(row["metadata"])

    async def update_metadata(self, principal: Principal, thread_id: str,
                              metadata: dict[str, Any]) -> None:
        await self.require(principal, thread_id)
        await self._pool.execute(
            "UPDATE threads SET metadata = $4::jsonb WHERE account_id = $1 AND agent_id = $2"
            " AND thread_id = $3", principal.account_id, principal.agent_id, thread_id,
            json.dumps(metadata))

    async def delete(self, principal: Principal, thread_id: str) -> None:
        await self.require(principal, thread_id)
        await self._pool.execute(
            "DELETE FROM threads WHERE account_id = $1 AND agent_id = $2 AND thread_id = $3",
            principal.account_id, principal.agent_id, thread_id)


def _check_owner(row: asyncpg.Record | None, principal: Principal, thread_id: str) -> None:
    if row is None or (row["owner_user_id"] and row["owner_user_id"] != principal.user_id):
        raise _not_found(thread_id)
