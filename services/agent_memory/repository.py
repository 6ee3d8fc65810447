"""Every SQL statement of agent memory, on asyncpg.

Tenancy is enforced in each query: the account, environment and agent are in
every WHERE clause, and a private entry matches only its owner
(``visibility = 'shared' OR owner_user_id = <caller>``). Times come from the
service's clock, never from the database's, so expiry and decay are testable.
"""

from __future__ import annotations

import json
import re
import uuid
import zlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

import asyncpg

from libs.errors import ResourceExhausted, Unavailable
from services.agent_memory import rules
from services.agent_memory.model import (
    Entry,
    NewEntry,
    Scope,
    Source,
    StoreOutcome,
    StoreResult,
    content_hash,
)
from services.agent_memory.rules import Category, SourceKind, Visibility

_COLUMNS = """id, key, content, category, visibility, importance, content_hash, owner_user_id,
    expires_at, recall_count, last_recalled_at, created_at, updated_at, source_kind,
    source_thread_id, source_message_ids"""

# The caller sees its agent's shared entries and its own private ones, unexpired.
_VISIBLE = """account_id = $1 AND environment = $2 AND agent_id = $3
    AND (visibility = 'shared' OR owner_user_id = $4)
    AND (expires_at IS NULL OR expires_at > $5)"""


def _owner(user_id: str | None) -> str:
    # '' never matches a private entry's owner (the table forbids it).
    return user_id or ""


def _entry(row: asyncpg.Record) -> Entry:
    return Entry(
        id=row["id"],
        key=row["key"],
        content=row["content"],
        category=Category(row["category"]),
        visibility=Visibility(row["visibility"]),
        importance=row["importance"],
        content_hash=row["content_hash"],
        owner_user_id=row["owner_user_id"] or None,
        expires_at=row["expires_at"],
        recall_count=row["recall_count"],
        last_recalled_at=row["last_recalled_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        source=Source(SourceKind(row["source_kind"]), row["source_thread_id"],
                      tuple(row["source_message_ids"])),
    )


def or_query(text: str) -> str:
    """A tsquery matching any word of ``text`` (user text never reaches tsquery syntax)."""
    words = re.findall(r"\w+", text.lower())
    return " | ".join(dict.fromkeys(words))


@dataclass(frozen=True)
class OutboxItem:
    id: int
    entry_id: UUID
    account_id: str
    environment: str
    attempts: int


class Repository:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @classmethod
    async def connect(cls, dsn: str, *, min_size: int = 2, max_size: int = 10) -> Repository:
        try:
            pool = await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size,
                                             command_timeout=10)
        except (OSError, asyncpg.PostgresError) as exc:
            raise Unavailable(f"PostgreSQL unreachable: {exc}", reason="POSTGRES_UNAVAILABLE") from exc
        return cls(pool)

    @property
    def pool(self) -> asyncpg.Pool:
        return self._pool

    async def close(self) -> None:
        await self._pool.close()

    # -- store -------------------------------------------------------------------

    async def store(self, scope: Scope, new: NewEntry, now: datetime,
                    request_id: str | None) -> StoreResult:
        owner = _owner(scope.user_id) if new.visibility == Visibility.PRIVATE else ""
        async with self._pool.acquire() as connection, connection.transaction():
            if request_id:
                replay = await self._replay(connection, scope, request_id)
                if replay is not None:
                    return replay
            await connection.execute(
                "SELECT pg_advisory_xact_lock($1)",
                zlib.crc32(f"{scope.account_id}/{scope.environment}/{scope.agent_id}/"
                           f"{new.category}".encode()),
            )
            current = await connection.fetchrow(
                f"SELECT {_COLUMNS} FROM memory_entries WHERE account_id = $1 AND environment = $2"
                " AND scope = 'agent' AND agent_id = $3 AND owner_user_id = $4 AND key = $5"
                " FOR UPDATE",
                scope.account_id, scope.environment, scope.agent_id, owner, new.key,
            )
            if current is not None and current["expires_at"] and current["expires_at"] <= now:
                await connection.execute("DELETE FROM memory_entries WHERE id = $1", current["id"])
                current = None
            if current is not None and current["content"] == new.content:
                result = StoreResult(_entry(current), StoreOutcome.UNCHANGED)
            elif current is not None:
                result = StoreResult(
                    await self._replace(connection, current, new, now), StoreOutcome.REPLACED)
            else:
                await self._check_capacity(connection, scope, new, owner, now)
                result = StoreResult(
                    await self._insert(connection, scope, new, owner, now), StoreOutcome.CREATED)
            if result.outcome != StoreOutcome.UNCHANGED:
                await self._enqueue(connection, scope.account_id, scope.environment,
                                    result.entry.id, now)
            if request_id:
                await connection.execute(
                    "INSERT INTO memory_store_requests (account_id, request_id, response, created_at)"
                    " VALUES ($1, $2, $3, $4) ON CONFLICT (account_id, request_id)"
                    " DO UPDATE SET response = excluded.response, created_at = excluded.created_at",
                    scope.account_id, request_id,
                    json.dumps({"entry": str(result.entry.id), "outcome": result.outcome}).encode(),
                    now,
                )
            return result

    async def _replay(self, connection, scope: Scope, request_id: str) -> StoreResult | None:
        raw = await connection.fetchval(
            "SELECT response FROM memory_store_requests WHERE account_id = $1 AND request_id = $2",
            scope.account_id, request_id,
        )
        if raw is None:
            return None
        answer = json.loads(raw)
        row = await connection.fetchrow(
            f"SELECT {_COLUMNS} FROM memory_entries WHERE id = $1 AND account_id = $2",
            UUID(answer["entry"]), scope.account_id,
        )
        if row is None:  # stored, then forgotten: this is a new store
            return None
        return StoreResult(_entry(row), StoreOutcome(answer["outcome"]))

    async def _check_capacity(self, connection, scope: Scope, new: NewEntry, owner: str,
                              now: datetime) -> None:
        limits = rules.RULES[new.category]
        per_agent = await connection.fetchval(
            "SELECT count(*) FROM memory_entries WHERE account_id = $1 AND environment = $2"
            " AND agent_id = $3 AND category = $4 AND (expires_at IS NULL OR expires_at > $5)",
            scope.account_id, scope.environment, scope.agent_id, new.category, now,
        )
        if per_agent >= limits.per_agent:
            raise _capacity_error(new.category, "agent", limits.per_agent)
        if owner:
            per_user = await connection.fetchval(
                "SELECT count(*) FROM memory_entries WHERE account_id = $1 AND environment = $2"
                " AND agent_id = $3 AND category = $4 AND owner_user_id = $5"
                " AND (expires_at IS NULL OR expires_at > $6)",
                scope.account_id, scope.environment, scope.agent_id, new.category, owner, now,
            )
            if per_user >= limits.per_user:
                raise _capacity_error(new.category, "user", limits.per_user)

    async def _insert(self, connection, scope: Scope, new: NewEntry, owner: str,
                      now: datetime) -> Entry:
        row = await connection.fetchrow(
            "INSERT INTO memory_entries (id, account_id, environment, agent_id, owner_user_id,"
            " key, content, content_hash, category, visibility, importance, expires_at,"
            " source_kind, source_thread_id, source_message_ids, created_at, updated_at)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16)"
            f" RETURNING {_COLUMNS}",
            uuid.uuid4(), scope.account_id, scope.environment, scope.agent_id, owner, new.key,
            new.content, content_hash(new.content), new.category, new.visibility, new.importance,
            _expiry(new.category, now), new.source.kind, new.source.thread_id,
            list(new.source.message_ids), now,
        )
        return _entry(row)

    async def _replace(self, connection, current, new: NewEntry, now: datetime) -> Entry:
        row = await connection.fetchrow(
            "UPDATE memory_entries SET content = $2, content_hash = $3, category = $4,"
            " importance = $5, expires_at = $6, source_kind = $7, source_thread_id = $8,"
            " source_message_ids = $9, updated_at = $10, last_decayed_at = NULL"
            f" WHERE id = $1 RETURNING {_COLUMNS}",
            current["id"], new.content, content_hash(new.content), new.category, new.importance,
            _expiry(new.category, current["created_at"]), new.source.kind, new.source.thread_id,
            list(new.source.message_ids), now,
        )
        return _entry(row)

    @staticmethod
    async def _enqueue(connection, account_id: str, environment: str, entry_id: UUID,
                       now: datetime) -> None:
        await connection.execute(
            "INSERT INTO memory_outbox (entry_id, account_id, environment, next_attempt_at,"
            " created_at) VALUES ($1, $2, $3, $4, $4)",
            entry_id, account_id, environment, now,
        )
        await connection.execute("SELECT pg_notify('memory_outbox', '')")

    # -- reads -------------------------------------------------------------------

    async def get(self, scope: Scope, key: str, now: datetime) -> Entry | None:
        row = await self._pool.fetchrow(
            f"SELECT {_COLUMNS} FROM memory_entries WHERE {_VISIBLE} AND key = $6"
            " ORDER BY owner_user_id <> '' DESC LIMIT 1",
            *self._visible_args(scope, now), key,
        )
        return None if row is None else _entry(row)

    async def list(self, scope: Scope, now: datetime, categories: Sequence[Category],
                   after: tuple[datetime, UUID] | None, limit: int) -> list[Entry]:
        after_time, after_id = after or (datetime.min.replace(tzinfo=now.tzinfo), uuid.UUID(int=0))
        rows = await self._pool.fetch(
            f"SELECT {_COLUMNS} FROM memory_entries WHERE {_VISIBLE}"
            " AND (cardinality($6::text[]) = 0 OR category = ANY($6))"
            " AND (created_at, id) > ($7, $8) ORDER BY created_at, id LIMIT $9",
            *self._visible_args(scope, now), list(categories), after_time, after_id, limit,
        )
        return [_entry(r) for r in rows]

    async def pinned(self, scope: Scope, now: datetime) -> list[Entry]:
        rows = await self._pool.fetch(
            f"SELECT {_COLUMNS} FROM memory_entries WHERE {_VISIBLE}"
            " AND category = $6 AND importance >= $7"
            " ORDER BY importance DESC, updated_at DESC, id LIMIT $8",
            *self._visible_args(scope, now), rules.PIN_CATEGORY, rules.PIN_MIN_IMPORTANCE,
            rules.PIN_LIMIT,
        )
        return [_entry(r) for r in rows]

    async def visible_by_ids(self, scope: Scope, now: datetime, ids: Sequence[UUID],
                             categories: Sequence[Category]) -> dict[UUID, Entry]:
        rows = await self._pool.fetch(
            f"SELECT {_COLUMNS} FROM memory_entries WHERE {_VISIBLE} AND id = ANY($6)"
            " AND (cardinality($7::text[]) = 0 OR category = ANY($7))",
            *self._visible_args(scope, now), list(ids), list(categories),
        )
        return {r["id"]: _entry(r) for r in rows}

    async def keyword_search(self, scope: Scope, now: datetime, query: str,
                             categories: Sequence[Category], limit: int,
                             only_unprojected: bool = False) -> list[tuple[Entry, float]]:
        """Full-text (any word) and trigram word similarity, best first."""
        pending = (" AND id IN (SELECT entry_id FROM memory_outbox"
                   " WHERE account_id = $1 AND environment = $2)") if only_unprojected else ""
        rows = await self._pool.fetch(
            f"SELECT {_COLUMNS}, greatest(ts_rank_cd(search, to_tsquery('english', $6)),"
            " word_similarity($7, content)) AS score"
            f" FROM memory_entries WHERE {_VISIBLE}"
            " AND (cardinality($8::text[]) = 0 OR category = ANY($8))"
            " AND ((length($6) > 0 AND search @@ to_tsquery('english', $6)) OR $7 <% content)"
            f"{pending} ORDER BY score DESC, importance DESC, id LIMIT $9",
            *self._visible_args(scope, now), or_query(query), query, list(categories), limit,
        )
        return [(_entry(r), r["score"]) for r in rows]

    async def mark_recalled(self, ids: Sequence[UUID], now: datetime) -> None:
        if ids:
            await self._pool.execute(
                "UPDATE memory_entries SET recall_count = recall_count + 1, last_recalled_at = $2"
                " WHERE id = ANY($1)", list(ids), now,
            )

    @staticmethod
    def _visible_args(scope: Scope, now: datetime) -> tuple:
        return (scope.account_id, scope.environment, scope.agent_id, _owner(scope.user_id), now)

    # -- forget ------------------------------------------------------------------

    async def forget(self, scope: Scope, key: str, now: datetime) -> UUID | None:
        """Delete the caller's private entry under ``key``, else the agent's shared one."""
        async with self._pool.acquire() as connection, connection.transaction():
            entry_id = await connection.fetchval(
                "DELETE FROM memory_entries WHERE id = (SELECT id FROM memory_entries"
                " WHERE account_id = $1 AND environment = $2 AND agent_id = $3 AND key = $4"
                " AND (visibility = 'shared' OR owner_user_id = $5)"
                " ORDER BY owner_user_id <> '' DESC LIMIT 1) RETURNING id",
                scope.account_id, scope.environment, scope.agent_id, key, _owner(scope.user_id),
            )
            if entry_id is not None:
                await self._enqueue(connection, scope.account_id, scope.environment, entry_id, now)
            return entry_id

    # -- projection outbox -------------------------------------------------------------

    async def claim_outbox(self, connection, now: datetime, limit: int) -> list[OutboxItem]:
        """Due outbox rows, locked for this transaction (other workers skip them)."""
        rows = await connection.fetch(
            "SELECT id, entry_id, account_id, environment, attempts FROM memory_outbox"
            " WHERE next_attempt_at <= $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED",
            now, limit,
        )
        return [OutboxItem(r["id"], r["entry_id"], r["account_id"], r["environment"],
                           r["attempts"]) for r in rows]

    @staticmethod
    async def entries_for_projection(connection, ids: Sequence[UUID], now: datetime
                                     ) -> dict[UUID, tuple[str, Entry]]:
        """The current, unexpired rows behind outbox items, with their agent id."""
        rows = await connection.fetch(
            f"SELECT agent_id, {_COLUMNS} FROM memory_entries WHERE id = ANY($1)"
            " AND (expires_at IS NULL OR expires_at > $2)", list(ids), now,
        )
        return {r["id"]: (r["agent_id"], _entry(r)) for r in rows}

    @staticmethod
    async def finish_outbox(connection, ids: Sequence[int]) -> None:
        await connection.execute("DELETE FROM memory_outbox WHERE id = ANY($1)", list(ids))

    @staticmethod
    async def retry_outbox(connection, items: Sequence[OutboxItem], now: datetime,
                           error: str) -> None:
        for item in items:
            delay = min(300.0, 2.0 ** item.attempts)
            await connection.execute(
                "UPDATE memory_outbox SET attempts = attempts + 1, next_attempt_at = $2,"
                " last_error = $3 WHERE id = $1",
                item.id, now + timedelta(seconds=delay), error[:500],
            )

    async def outbox_size(self) -> int:
        return await self._pool.fetchval("SELECT count(*) FROM memory_outbox")

    async def collection_entries(self, account_id: str, environment: str, now: datetime,
                                 batch: int = 256) -> AsyncIterator[list[tuple[str, Entry]]]:
        """Every unexpired entry of (account, environment), in batches, for a reindex."""
        after = uuid.UUID(int=0)
        while True:
            rows = await self._pool.fetch(
                f"SELECT agent_id, {_COLUMNS} FROM memory_entries WHERE account_id = $1"
                " AND environment = $2 AND (expires_at IS NULL OR expires_at > $3) AND id > $4"
                " ORDER BY id LIMIT $5", account_id, environment, now, after, batch,
            )
            if not rows:
                return
            yield [(r["agent_id"], _entry(r)) for r in rows]
            after = rows[-1]["id"]

    async def count_collection(self, account_id: str, environment: str, now: datetime) -> int:
        return await self._pool.fetchval(
            "SELECT count(*) FROM memory_entries WHERE account_id = $1 AND environment = $2"
            " AND (expires_at IS NULL OR expires_at > $3)", account_id, environment, now,
        )

    # -- hygiene ------------------------------------------------------------------

    async def delete_expired(self, now: datetime) -> int:
        async with self._pool.acquire() as connection, connection.transaction():
            rows = await connection.fetch(
                "DELETE FROM memory_entries WHERE expires_at <= $1"
                " RETURNING id, account_id, environment", now,
            )
            for row in rows:
                await self._enqueue(connection, row["account_id"], row["environment"], row["id"],
                                    now)
            await connection.execute(
                "DELETE FROM memory_store_requests WHERE created_at < $1",
                now - timedelta(days=1))
            return len(rows)

    async def decay(self, now: datetime) -> int:
        decaying = [c.value for c, r in rules.RULES.items() if r.decays]
        status = await self._pool.execute(
            "UPDATE memory_entries SET importance = greatest($1, round((importance - $2)::numeric, 6)),"
            " last_decayed_at = $3"
            " WHERE category = ANY($4) AND importance > $1"
            " AND coalesce(last_recalled_at, created_at) <= $5"
            " AND (last_decayed_at IS NULL OR last_decayed_at <= $6)",
            rules.DECAY_FLOOR, rules.DECAY_STEP, now, decaying, now - rules.DECAY_AFTER,
            now - rules.DECAY_INTERVAL,
        )
        return int(status.split()[-1])

    # -- agent settings -----------------------------------------------------------

    async def memory_bound(self, scope: Scope) -> bool:
        bound = await self._pool.fetchval(
            "SELECT memory_bound FROM agent_settings WHERE account_id = $1 AND environment = $2"
            " AND agent_id = $3", scope.account_id, scope.environment, scope.agent_id,
        )
        return bool(bound)

    async def set_memory_bound(self, scope: Scope, bound: bool, now: datetime) -> None:
        await self._pool.execute(
            "INSERT INTO agent_settings (account_id, environment, agent_id, memory_bound, updated_at)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (account_id, environment, agent_id)"
            " DO UPDATE SET memory_bound = $4, updated_at = $5",
            scope.account_id, scope.environment, scope.agent_id, bound, now,
        )


def _expiry(category: Category, created_at: datetime) -> datetime | None:
    after = rules.RULES[category].expires_after
    return None if after is None else created_at + after


def _capacity_error(category: Category, per: str, limit: int) -> ResourceExhausted:
    return ResourceExhausted(
        f"{category} entries are limited to {limit} per {per}",
        reason="CAPACITY_EXCEEDED",
        metadata={"category": str(category), "per": per, "limit": str(limit)},
    )
