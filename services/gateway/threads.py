"""Thread records: which account, agent and user a thread belongs to, and its
metadata (``config.max_working_memory_messages`` lowers its window).

A thread another account, agent or user owns is NOT_FOUND, exactly like one
that does not exist: callers learn nothing about other tenants.

Every turn reads its thread's record, so each replica keeps the records it read
(at most ``CACHE_SIZE``, each for ``cache_seconds``). A record's owner never
changes; its metadata changes by UpdateThread and the record goes by
DeleteThread and PurgeThread. Each of those announces the change
(``services.gateway.invalidation``) in the statement that makes it, and every
replica forgets the record when the change commits. While a replica is not
listening for announcements it reads PostgreSQL every time. So another replica
serves a deleted thread, or old metadata, only between the commit and the
announcement reaching it (milliseconds), or, if its listening connection stalls
without breaking, for at most ``cache_seconds``. What it can serve then is safe:
the context of a thread the caller owned (the journal checks the owner of every
read itself), with a window that may not yet reflect new metadata.
"""

from __future__ import annotations

import json
import time
from typing import Any

import asyncpg
from cachetools import TTLCache

from libs.errors import NotFound
from libs.identity import Principal
from libs.invalidations import Invalidations
from services.gateway.invalidation import THREADS

CACHE_SIZE = 100_000

_OWNER = ("SELECT owner_user_id, metadata FROM threads WHERE account_id = $1 AND agent_id = $2"
          " AND thread_id = $3")
_ANNOUNCE = "pg_notify('" + THREADS + "', $1 || '/' || $2 || '/' || $3)"

Key = tuple[str, str, str]
Row = tuple[str, str]  # owner ('' for none), metadata (JSON text)


def _not_found(thread_id: str) -> NotFound:
    return NotFound(f"thread {thread_id} not found", reason="THREAD_NOT_FOUND")


class Threads:
    def __init__(self, pool: asyncpg.Pool, invalidations: Invalidations | None = None, *,
                 cache_seconds: float = 30.0) -> None:
        self._pool = pool
        self._invalidations = invalidations
        self._cache: TTLCache[Key, Row] = TTLCache(CACHE_SIZE, cache_seconds, timer=time.monotonic)
        if invalidations is not None:
            invalidations.on(THREADS, self._forget, self._cache.clear)

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

    async def _row(self, principal: Principal, thread_id: str) -> Row | None:
        key = (principal.account_id, principal.agent_id, thread_id)
        invalidations = self._invalidations
        if invalidations is not None and not invalidations.live:
            invalidations = None  # not listening: nothing is cached
        if invalidations is not None:
            cached = self._cache.get(key)
            if cached is not None:
                return cached
            generation = invalidations.generation
        record = await self._pool.fetchrow(_OWNER, *key)
        if record is None:
            return None  # not kept: the next append creates it
        row = (record["owner_user_id"], record["metadata"])
        if invalidations is not None and invalidations.live \
                and generation == invalidations.generation:
            self._cache[key] = row  # nothing was announced while it was read
        return row

    async def require(self, principal: Principal, thread_id: str) -> dict[str, Any]:
        """The thread's metadata, if the thread exists and is the caller's."""
        row = await self._row(principal, thread_id)
        if row is None:
            raise _not_found(thread_id)
        _check_owner(row, principal, thread_id)
        return json.loads(row[1])

    async def update_metadata(self, principal: Principal, thread_id: str,
                              metadata: dict[str, Any]) -> None:
        await self.require(principal, thread_id)
        await self._pool.execute(
            f"WITH changed AS (UPDATE threads SET metadata = $4::jsonb WHERE account_id = $1"
            f" AND agent_id = $2 AND thread_id = $3 RETURNING 1) SELECT {_ANNOUNCE}"
            " FROM changed", principal.account_id, principal.agent_id, thread_id,
            json.dumps(metadata))
        self._forget_key((principal.account_id, principal.agent_id, thread_id))

    async def delete(self, principal: Principal, thread_id: str) -> None:
        await self.require(principal, thread_id)
        await self._pool.execute(
            "WITH gone AS (DELETE FROM threads WHERE account_id = $1 AND agent_id = $2"
            f" AND thread_id = $3 RETURNING 1) SELECT {_ANNOUNCE} FROM gone",
            principal.account_id, principal.agent_id, thread_id)
        self._forget_key((principal.account_id, principal.agent_id, thread_id))

    def _forget(self, payload: str) -> None:
        account_id, agent_id, thread_id = payload.split("/", 2)
        self._forget_key((account_id, agent_id, thread_id))

    def _forget_key(self, key: Key) -> None:
        self._cache.pop(key, None)


def _check_owner(row: Row | None, principal: Principal, thread_id: str) -> None:
    if row is None or (row[0] and row[0] != principal.user_id):
        raise _not_found(thread_id)
