"""The SQL over memories, on asyncpg: storage only. This module owns the memories'
tables (memory_entries, memory_versions, memory_audit, memory_store_requests,
memory_outbox) and hygiene's statements; ``settings`` and ``entities`` own their
families, and :class:`Repository` and :class:`Transaction` take in ``settings``' part.

The decisions (replay, expiry, replace, capacity, permissions, versions) are
the domain's (``writes``, ``service``); this module reads and writes what it is
told. Every read of memories, versions or audit records is filtered by
``sql.visible``; writes address rows by (account, environment, id). Times come
from the service's clock, never from the database's, so expiry, retention and
decay are testable.

Writes happen in a :class:`Transaction` (``async with repository.transaction()``):
short, and never open across a network call (embedding and the index are the
projector's, after commit).
"""

from __future__ import annotations

import contextlib
import json
import re
import zlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

import asyncpg

from libs import postgres
from libs.errors import AlreadyExists, Unavailable
from services.agent_memory.memories import rules
from services.agent_memory.memories.model import (
    AccountSettings,
    Action,
    Actor,
    AuditRecord,
    Author,
    Entry,
    MemoryCount,
    MemoryFilter,
    Role,
    Version,
    normal,
)
from services.agent_memory.memories.rules import Bucket, Kind, Scope
from services.agent_memory.memories.store import sql
from services.agent_memory.memories.store.settings import (
    SettingsReads,
    SettingsWrites,
    account_columns,
    account_settings_from,
)
from services.agent_memory.memories.store.sql import ENTRY_COLUMNS, Query, live, visible

# The order GetEntry and Forget resolve a key in: the caller's own first.
_SPECIFICITY = ("CASE scope WHEN 'private' THEN 0 WHEN 'user' THEN 1 WHEN 'agent' THEN 2"
                " ELSE 3 END")
_AUDIT_COLUMNS = ("id, action, memory_id, version, actor_key_id, actor_agent_id, actor_user_id,"
                  " actor_role, at, before, after")
# What purging a version takes out of the audit trail's snapshots.
_REDACTED = "'{key,content,tags,content_hash}'::text[]"

# Rows one decay statement updates at most (100k rows in one took over 10 s).
DECAY_BATCH = 5000


def or_query(text: str) -> str:
    """A tsquery matching any word of ``text`` (user text never reaches tsquery syntax)."""
    words = re.findall(r"\w+", text.lower())
    return " | ".join(dict.fromkeys(words))


def _like(text: str) -> str:
    return "%" + re.sub(r"([\\%_])", r"\\\1", text) + "%"


@dataclass(frozen=True)
class OutboxItem:
    id: int
    entry_id: UUID
    account_id: str
    environment: str
    attempts: int


@dataclass(frozen=True)
class PriorRequest:
    request_hash: str | None
    entry_id: UUID
    outcome: str


def _version(row: asyncpg.Record) -> Version:
    return Version(sql.entry(row), Action(row["action"]), row["recorded_at"],
                   row["recorded_until"])


def _audit(row: asyncpg.Record) -> AuditRecord:
    return AuditRecord(
        id=row["id"], action=Action(row["action"]), memory_id=row["memory_id"],
        version=row["version"],
        actor=Author(row["actor_key_id"], row["actor_agent_id"], row["actor_user_id"],
                     Role(row["actor_role"])),
        at=row["at"], before=_json(row["before"]), after=_json(row["after"]))


def _json(value) -> dict | None:
    return None if value is None else json.loads(value)


def _lock_key(text: str) -> int:
    return zlib.crc32(text.encode())


class Repository(SettingsReads):
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @classmethod
    async def connect(cls, dsn: str, *, min_size: int = 2, max_size: int = 10) -> Repository:
        try:
            pool = await postgres.create_pool(dsn, min_size=min_size, max_size=max_size)
        except (OSError, asyncpg.PostgresError) as exc:
            raise Unavailable(f"PostgreSQL unreachable: {exc}", reason="POSTGRES_UNAVAILABLE") from exc
        return cls(pool)

    @property
    def pool(self) -> asyncpg.Pool:
        return self._pool

    async def close(self) -> None:
        await self._pool.close()

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Transaction]:
        async with self._pool.acquire() as connection, connection.transaction():
            yield Transaction(connection)

    # -- seed-000 reads ------------------------------------------------------------

    async def get_by_key(self, actor: Actor, key: str, now: datetime) -> Entry | None:
        """The caller's live memory under ``key``, its own scope first."""
        q = Query()
        row = await self._pool.fetchrow(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE {visible(q, actor)}"
            f" AND {live(q, now)} AND key = {q(key)} ORDER BY {_SPECIFICITY} LIMIT 1", *q.args)
        return None if row is None else sql.entry(row)

    async def list_entries(self, actor: Actor, now: datetime, kinds: Sequence[Kind],
                           after: tuple[datetime, UUID] | None, limit: int) -> list[Entry]:
        q = Query()
        after_time, after_id = after or (datetime.min.replace(tzinfo=now.tzinfo), UUID(int=0))
        rows = await self._pool.fetch(sql.visible_page(
            q, actor, select=ENTRY_COLUMNS, table="memory_entries", order="created_at, id",
            limit=limit, where=[live(q, now), f"kind = ANY({q(list(kinds))}::text[])",
                                f"(created_at, id) > ({q(after_time)}, {q(after_id)})"]),
            *q.args)
        return [sql.entry(r) for r in rows]

    async def pinned(self, actor: Actor, now: datetime) -> tuple[list[Entry], list[Entry]]:
        """(pinned profile facts, blocks), both empty when the account turned memory off."""
        q = Query()
        seen, alive = visible(q, actor), live(q, now)
        enabled = (f"NOT EXISTS (SELECT 1 FROM account_settings WHERE account_id ="
                   f" {q(actor.account_id)} AND NOT memory_enabled)")
        rows = await self._pool.fetch(
            f"(SELECT 'pin' AS part, {ENTRY_COLUMNS} FROM memory_entries WHERE {seen} AND {alive}"
            f" AND {enabled} AND kind = {q(rules.PIN_CATEGORY)}"
            f" AND importance >= {q(rules.PIN_MIN_IMPORTANCE)}"
            f" ORDER BY importance DESC, updated_at DESC, id LIMIT {q(rules.PIN_LIMIT)})"
            f" UNION ALL (SELECT 'block', {ENTRY_COLUMNS} FROM memory_entries WHERE {seen}"
            f" AND {alive} AND {enabled} AND kind = {q(Kind.BLOCK)}"
            f" ORDER BY importance DESC, updated_at DESC, id LIMIT {q(rules.BLOCK_LIMIT)})",
            *q.args)
        return ([sql.entry(r) for r in rows if r["part"] == "pin"],
                [sql.entry(r) for r in rows if r["part"] == "block"])

    async def visible_by_ids(self, actor: Actor, now: datetime, ids: Sequence[UUID],
                             kinds: Sequence[Kind]) -> dict[UUID, Entry]:
        q = Query()
        rows = await self._pool.fetch(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE {visible(q, actor)}"
            f" AND {live(q, now)} AND id = ANY({q(list(ids))}::uuid[])"
            f" AND kind = ANY({q(list(kinds))}::text[])", *q.args)
        return {r["id"]: sql.entry(r) for r in rows}

    async def keyword_search(self, actor: Actor, now: datetime, query: str,
                             kinds: Sequence[Kind], limit: int,
                             only_unprojected: bool = False) -> list[tuple[Entry, float]]:
        """Full-text (any word) and trigram word similarity, best first."""
        q = Query()
        words, text = q(or_query(query)), q(query)
        where = (f"{visible(q, actor)} AND {live(q, now)}"
                 f" AND kind = ANY({q(list(kinds))}::text[])"
                 f" AND ((length({words}) > 0 AND search @@ to_tsquery('english', {words}))"
                 f" OR {text} <% content)")
        if only_unprojected:
            where += (f" AND id IN (SELECT entry_id FROM memory_outbox WHERE account_id ="
                      f" {q(actor.account_id)} AND environment = {q(actor.environment)})")
        rows = await self._pool.fetch(
            f"SELECT {ENTRY_COLUMNS}, greatest(ts_rank_cd(search, to_tsquery('english', {words})),"
            f" word_similarity({text}, content)) AS score FROM memory_entries WHERE {where}"
            f" ORDER BY score DESC, importance DESC, id LIMIT {q(limit)}", *q.args)
        return [(sql.entry(r), r["score"]) for r in rows]

    async def mark_recalled(self, actor: Actor, ids: Sequence[UUID], now: datetime) -> None:
        if ids:
            await self._pool.execute(
                "UPDATE memory_entries SET recall_count = recall_count + 1, last_recalled_at = $4"
                " WHERE account_id = $1 AND environment = $2 AND id = ANY($3::uuid[])",
                actor.account_id, actor.environment, list(ids), now)

    # -- what learning deduplicates against -----------------------------------------

    async def related(self, actor: Actor, now: datetime, keys: Sequence[str],
                      contents: Sequence[str]) -> list[Entry]:
        """Live memories the thread sees under one of ``keys`` or with one of ``contents``
        (compared case- and space-insensitively)."""
        q = Query()
        rows = await self._pool.fetch(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE {visible(q, actor)}"
            f" AND {live(q, now)} AND (key = ANY({q(list(keys))}::text[])"
            f" OR lower(regexp_replace(btrim(content), '\\s+', ' ', 'g'))"
            f" = ANY({q([normal(c) for c in contents])}::text[]))", *q.args)
        return [sql.entry(r) for r in rows]

    async def recent_keys(self, actor: Actor, now: datetime, limit: int) -> list[str]:
        q = Query()
        rows = await self._pool.fetch(
            f"SELECT key FROM memory_entries WHERE {visible(q, actor)} AND {live(q, now)}"
            f" ORDER BY updated_at DESC LIMIT {q(limit)}", *q.args)
        return [r["key"] for r in rows]

    # -- library reads -------------------------------------------------------------

    async def list_memories(self, actor: Actor, now: datetime, where: MemoryFilter,
                            before: tuple[datetime, UUID] | None, limit: int) -> list[Entry]:
        """Newest first; ``before`` is the (created_at, id) the previous page ended at."""
        q = Query()
        platform = Scope.PLATFORM in where.scopes
        conditions = self._filters(q, where, now)
        if where.as_of is not None:  # the versions recorded then (rarer: no page index)
            if before is not None:
                conditions.append(f"(created_at, memory_id) < ({q(before[0])}, {q(before[1])})")
            rows = await self._pool.fetch(
                f"SELECT {sql.VERSION_COLUMNS} FROM memory_versions WHERE"
                f" {visible(q, actor, platform=platform)} AND {' AND '.join(conditions)}"
                f" ORDER BY created_at DESC, memory_id DESC LIMIT {q(limit)}", *q.args)
            return [sql.entry(r) for r in rows]
        if before is not None:
            conditions.append(f"(created_at, id) < ({q(before[0])}, {q(before[1])})")
        rows = await self._pool.fetch(sql.visible_page(
            q, actor, select=ENTRY_COLUMNS, table="memory_entries", where=conditions,
            order="created_at DESC, id DESC", limit=limit, platform=platform), *q.args)
        return [sql.entry(r) for r in rows]

    @staticmethod
    def _filters(q: Query, where: MemoryFilter, now: datetime) -> list[str]:
        found = []
        at = where.as_of or now
        if where.as_of is not None:
            found.append(f"recorded_at <= {q(at)} AND (recorded_until IS NULL OR recorded_until >"
                         f" {q(at)})")
        if not where.include_deleted:
            found.append(f"deleted_at IS NULL AND (expires_at IS NULL OR expires_at > {q(at)})")
        if not where.include_superseded:
            found.append("superseded_by IS NULL")
        if where.scopes:
            found.append(f"scope = ANY({q([str(s) for s in where.scopes])}::text[])")
        if where.kinds:
            found.append(f"kind = ANY({q([str(k) for k in where.kinds])}::text[])")
        if where.sources:
            found.append(f"source_kind = ANY({q([str(s) for s in where.sources])}::text[])")
        if where.tags:
            found.append(f"tags @> {q(json.dumps(where.tags))}::jsonb")
        if where.text:
            like = q(_like(where.text))
            found.append(f"(content ILIKE {like} OR key ILIKE {like})")
        return found

    async def get(self, actor: Actor, memory_id: UUID) -> Entry | None:
        """Any state (deleted, superseded, expired), platform rules included."""
        q = Query()
        row = await self._pool.fetchrow(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE {visible(q, actor, platform=True)}"
            f" AND id = {q(memory_id)}", *q.args)
        return None if row is None else sql.entry(row)

    async def versions(self, actor: Actor, memory_id: UUID) -> list[Version]:
        q = Query()
        rows = await self._pool.fetch(
            f"SELECT {sql.VERSION_COLUMNS} FROM memory_versions"
            f" WHERE {visible(q, actor, platform=True)} AND memory_id = {q(memory_id)}"
            " ORDER BY version", *q.args)
        return [_version(r) for r in rows]

    async def version_at(self, actor: Actor, memory_id: UUID, at: datetime) -> Version | None:
        q = Query()
        row = await self._pool.fetchrow(
            f"SELECT {sql.VERSION_COLUMNS} FROM memory_versions"
            f" WHERE {visible(q, actor, platform=True)} AND memory_id = {q(memory_id)}"
            f" AND recorded_at <= {q(at)} AND (recorded_until IS NULL OR recorded_until > {q(at)})",
            *q.args)
        return None if row is None else _version(row)

    async def supersedes(self, actor: Actor, memory_id: UUID) -> list[UUID]:
        q = Query()
        rows = await self._pool.fetch(
            f"SELECT id FROM memory_entries WHERE {visible(q, actor, platform=True)}"
            f" AND superseded_by = {q(memory_id)} ORDER BY superseded_at, id", *q.args)
        return [r["id"] for r in rows]

    async def audit(self, actor: Actor, memory_id: UUID | None, before_id: int | None,
                    limit: int, *, oldest_first: bool = False) -> list[AuditRecord]:
        q = Query()
        conditions = [visible(q, actor, platform=memory_id is not None)]
        if memory_id is not None:
            conditions.append(f"memory_id = {q(memory_id)}")
        if before_id is not None:
            conditions.append(f"id {'>' if oldest_first else '<'} {q(before_id)}")
        rows = await self._pool.fetch(
            f"SELECT {_AUDIT_COLUMNS} FROM memory_audit WHERE {' AND '.join(conditions)}"
            f" ORDER BY id {'ASC' if oldest_first else 'DESC'} LIMIT {q(limit)}", *q.args)
        return [_audit(r) for r in rows]

    async def export_page(self, actor: Actor, after: tuple[datetime, UUID] | None,
                          limit: int) -> list[tuple[Entry, list[Version]]]:
        """The caller's memories (every state, no platform rules), oldest first, with
        their versions."""
        q = Query()
        where = [] if after is None else [f"(created_at, id) > ({q(after[0])}, {q(after[1])})"]
        rows = await self._pool.fetch(sql.visible_page(
            q, actor, select=ENTRY_COLUMNS, table="memory_entries", where=where,
            order="created_at, id", limit=limit), *q.args)
        entries = [sql.entry(r) for r in rows]
        if not entries:
            return []
        version_rows = await self._pool.fetch(
            f"SELECT {sql.VERSION_COLUMNS} FROM memory_versions WHERE account_id = $1"
            " AND environment = $2 AND memory_id = ANY($3::uuid[]) ORDER BY memory_id, version",
            actor.account_id, actor.environment, [e.id for e in entries])
        by_memory: dict[UUID, list[Version]] = {e.id: [] for e in entries}
        for row in version_rows:
            by_memory[row["id"]].append(_version(row))
        return [(e, by_memory[e.id]) for e in entries]

    async def count_memories(self, actor: Actor, agents: Sequence[str],
                             now: datetime) -> list[MemoryCount]:
        """The live memories ``actor`` sees acting as any of ``agents`` (every agent when
        empty), counted per agent, scope and kind."""
        q = Query()
        rows = await self._pool.fetch(
            f"SELECT agent_id, scope, kind, count(*) AS memories, max(updated_at) AS last"
            f" FROM memory_entries WHERE {visible(q, actor, agents=agents)} AND {live(q, now)}"
            " GROUP BY agent_id, scope, kind ORDER BY agent_id, scope, kind", *q.args)
        return [MemoryCount(r["agent_id"], Scope(r["scope"]), Kind(r["kind"]), r["memories"],
                            r["last"]) for r in rows]

    # -- projection outbox ---------------------------------------------------------

    @staticmethod
    async def claim_outbox(connection: postgres.Connection, claim: UUID, now: datetime,
                           limit: int, until: datetime) -> list[OutboxItem]:
        """Due outbox rows, leased to ``claim`` until ``until`` (others skip them
        meanwhile: rows locked by a concurrent claim too)."""
        rows = await connection.fetch(
            "UPDATE memory_outbox SET claimed_by = $1, next_attempt_at = $4 WHERE id IN"
            " (SELECT id FROM memory_outbox WHERE next_attempt_at <= $2 ORDER BY id LIMIT $3"
            " FOR UPDATE SKIP LOCKED)"
            " RETURNING id, entry_id, account_id, environment, attempts",
            claim, now, limit, until,
        )
        return sorted((OutboxItem(r["id"], r["entry_id"], r["account_id"], r["environment"],
                                  r["attempts"]) for r in rows), key=lambda item: item.id)

    @staticmethod
    async def entries_for_projection(connection: postgres.Connection,
                                     items: Sequence[OutboxItem], now: datetime
                                     ) -> dict[tuple[str, str, UUID], Entry]:
        """The live rows behind outbox items (the index holds nothing else)."""
        q = Query()
        rows = await connection.fetch(
            f"SELECT {sql.columns('e')} FROM memory_entries e JOIN unnest("
            f"{q([i.account_id for i in items])}::text[], {q([i.environment for i in items])}"
            f"::text[], {q([i.entry_id for i in items])}::uuid[]) AS o(account_id, environment,"
            " id) USING (account_id, environment, id)"
            f" WHERE {live(q, now, 'e')} AND e.scope <> 'platform'", *q.args)
        return {(r["account_id"], r["environment"], r["id"]): sql.entry(r) for r in rows}

    @staticmethod
    async def finish_outbox(connection: postgres.Connection, claim: UUID,
                            items: Sequence[OutboxItem], stale: Sequence[OutboxItem],
                            now: datetime) -> None:
        """Done with what ``claim`` still holds; the ``stale`` memories (changed since
        the claim read them) are queued again, to be projected as they are now."""
        await connection.execute(
            "DELETE FROM memory_outbox WHERE id = ANY($1) AND claimed_by = $2",
            [i.id for i in items], claim)
        if stale:
            await connection.executemany(
                "INSERT INTO memory_outbox (entry_id, account_id, environment, next_attempt_at,"
                " created_at) VALUES ($1, $2, $3, $4, $4)",
                [(i.entry_id, i.account_id, i.environment, now) for i in stale])
            await connection.execute("SELECT pg_notify('memory_outbox', '')")

    @staticmethod
    async def retry_outbox(connection: postgres.Connection, claim: UUID,
                           items: Sequence[OutboxItem], now: datetime, error: str) -> None:
        """Back off what ``claim`` still holds, to try again later."""
        for item in items:
            delay = min(300.0, 2.0 ** item.attempts)
            await connection.execute(
                "UPDATE memory_outbox SET attempts = attempts + 1, next_attempt_at = $2,"
                " last_error = $3 WHERE id = $1 AND claimed_by = $4",
                item.id, now + timedelta(seconds=delay), error[:500], claim,
            )

    async def outbox_size(self) -> int:
        return await self._pool.fetchval("SELECT count(*) FROM memory_outbox")

    async def collection_entries(self, account_id: str, environment: str, now: datetime,
                                 batch: int = 256) -> AsyncIterator[list[Entry]]:
        """Every live memory of (account, environment), in batches, for a reindex."""
        after = UUID(int=0)
        while True:
            q = Query(account_id, environment)
            rows = await self._pool.fetch(
                f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE account_id = $1"
                f" AND environment = $2 AND {live(q, now)} AND id > {q(after)}"
                f" ORDER BY id LIMIT {q(batch)}", *q.args)
            if not rows:
                return
            yield [sql.entry(r) for r in rows]
            after = rows[-1]["id"]

    async def count_collection(self, account_id: str, environment: str, now: datetime) -> int:
        q = Query(account_id, environment)
        return await self._pool.fetchval(
            f"SELECT count(*) FROM memory_entries WHERE account_id = $1 AND environment = $2"
            f" AND {live(q, now)}", *q.args)

    # -- hygiene -------------------------------------------------------------------

    async def expired_ids(self, now: datetime, limit: int) -> list[tuple[str, str, UUID]]:
        rows = await self._pool.fetch(
            "SELECT account_id, environment, id FROM memory_entries WHERE expires_at <= $1"
            " AND deleted_at IS NULL ORDER BY expires_at LIMIT $2", now, limit)
        return [(r["account_id"], r["environment"], r["id"]) for r in rows]

    async def purgeable_ids(self, now: datetime, limit: int) -> list[tuple[str, str, UUID]]:
        """Tombstones older than their account's retention window."""
        rows = await self._pool.fetch(
            "SELECT e.account_id, e.environment, e.id FROM memory_entries e"
            " LEFT JOIN account_settings s ON s.account_id = e.account_id"
            " WHERE e.deleted_at IS NOT NULL AND e.deleted_at <= $1::timestamptz - make_interval(days =>"
            " coalesce(s.retention_days, $2)) ORDER BY e.deleted_at LIMIT $3",
            now, rules.SETTINGS_RETENTION_DAYS, limit)
        return [(r["account_id"], r["environment"], r["id"]) for r in rows]

    async def prune_versions(self, now: datetime) -> int:
        """Delete replaced versions older than their account's retention window, and
        redact their content from the audit trail."""
        status = await self._pool.fetchval(
            "WITH pruned AS (DELETE FROM memory_versions v USING (SELECT v2.account_id,"
            " v2.environment, v2.memory_id, v2.version FROM memory_versions v2"
            " LEFT JOIN account_settings s ON s.account_id = v2.account_id"
            " WHERE v2.recorded_until IS NOT NULL AND v2.recorded_until <= $1::timestamptz - make_interval("
            " days => coalesce(s.retention_days, $2))) old"
            " WHERE v.account_id = old.account_id AND v.environment = old.environment"
            " AND v.memory_id = old.memory_id AND v.version = old.version"
            " RETURNING v.account_id, v.environment, v.memory_id, v.version),"
            " upto AS (SELECT account_id, environment, memory_id, max(version) AS version"
            " FROM pruned GROUP BY 1, 2, 3),"
            " redacted AS (UPDATE memory_audit a SET"
            f" before = CASE WHEN a.version <= upto.version + 1 THEN a.before - {_REDACTED}"
            " ELSE a.before END,"
            f" after = CASE WHEN a.version <= upto.version THEN a.after - {_REDACTED}"
            " ELSE a.after END"
            " FROM upto WHERE a.account_id = upto.account_id AND a.environment ="
            " upto.environment AND a.memory_id = upto.memory_id"
            " AND a.version <= upto.version + 1)"
            " SELECT count(*) FROM pruned", now, rules.SETTINGS_RETENTION_DAYS)
        return int(status)

    async def decay(self, now: datetime, batch: int = DECAY_BATCH) -> int:
        """Maintenance, not an edit: no version, no audit record. In batches, so that a
        large account never holds one statement past the pool's command timeout; a
        decayed row leaves the set (its ``last_decayed_at`` is now), so the loop ends."""
        decayed = 0
        while True:
            status = await self._pool.execute(
                "UPDATE memory_entries SET importance = greatest($1, round((importance - $2)"
                "::numeric, 6)), last_decayed_at = $3"
                " WHERE id IN (SELECT id FROM memory_entries"
                " WHERE kind = ANY($4::text[]) AND importance > $1 AND deleted_at IS NULL"
                " AND superseded_by IS NULL AND coalesce(last_recalled_at, created_at) <= $5"
                " AND (last_decayed_at IS NULL OR last_decayed_at <= $6)"
                " LIMIT $7 FOR UPDATE SKIP LOCKED)",
                rules.DECAY_FLOOR, rules.DECAY_STEP, now, [str(k) for k in rules.DECAYING],
                now - rules.DECAY_AFTER, now - rules.DECAY_INTERVAL, batch,
            )
            done = int(status.split()[-1])
            decayed += done
            if done < batch:
                return decayed

    async def forget_requests(self, before: datetime) -> None:
        await self._pool.execute("DELETE FROM memory_store_requests WHERE created_at < $1", before)

    async def purge_receipts(self, now: datetime, batch: int) -> int:
        """Receipts (and their items and credits) older than their account's retention
        window: after it, feedback on them has nothing left to credit."""
        deleted = await self._pool.fetchval(
            "WITH old AS (SELECT r.account_id, r.environment, r.id FROM retrieval_receipts r"
            " LEFT JOIN account_settings s ON s.account_id = r.account_id"
            " WHERE r.created_at < $1::timestamptz"
            " - make_interval(days => coalesce(s.retention_days, $2))"
            " LIMIT $3), gone AS (DELETE FROM retrieval_receipts r USING old"
            " WHERE (r.account_id, r.environment, r.id) = (old.account_id, old.environment,"
            " old.id) RETURNING 1),"
            # the items have no key to their receipt (migration 0012): deleted here
            " items AS (DELETE FROM retrieval_receipt_items i USING old"
            " WHERE (i.account_id, i.environment, i.receipt_id) = (old.account_id,"
            " old.environment, old.id)) SELECT count(*) FROM gone",
            now, rules.SETTINGS_RETENTION_DAYS, batch)
        await self._pool.execute("DELETE FROM account_daily_usage WHERE day < $1",
                                 (now - timedelta(days=1)).date())
        return deleted


class Transaction(SettingsWrites):
    """The write primitives, inside one short PostgreSQL transaction."""

    def __init__(self, connection: postgres.Connection) -> None:
        self._c = connection

    async def lock(self, name: str, account_id: str) -> AccountSettings:
        """Serialize writers of one capacity bucket; returns the account's settings."""
        row = await self._c.fetchrow(
            f"SELECT pg_advisory_xact_lock($1), {account_columns('s.')} FROM (SELECT 1) one"
            " LEFT JOIN account_settings s ON s.account_id = $2", _lock_key(name), account_id)
        return account_settings_from(row)

    async def live_by_key(self, account_id: str, environment: str, scope: Scope, agent_id: str,
                          owner_user_id: str, key: str) -> Entry | None:
        """The live (not deleted, not superseded) memory under a key, locked."""
        row = await self._c.fetchrow(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE account_id = $1"
            " AND environment = $2 AND scope = $3 AND agent_id = $4 AND owner_user_id = $5"
            " AND key = $6 AND deleted_at IS NULL AND superseded_by IS NULL FOR UPDATE",
            account_id, environment, scope, agent_id, owner_user_id, key)
        return None if row is None else sql.entry(row)

    async def forgettable(self, actor: Actor, key: str) -> Entry | None:
        """The caller's live private memory under ``key``, else its agent's (locked)."""
        row = await self._c.fetchrow(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE account_id = $1"
            " AND environment = $2 AND agent_id = $3 AND key = $4"
            " AND (scope = 'agent' OR (scope = 'private' AND owner_user_id = $5))"
            " AND deleted_at IS NULL AND superseded_by IS NULL"
            f" ORDER BY {_SPECIFICITY} LIMIT 1 FOR UPDATE",
            actor.account_id, actor.environment, actor.agent_id, key, actor.user_id or "")
        return None if row is None else sql.entry(row)

    async def get(self, actor: Actor, memory_id: UUID, *, lock: bool = True) -> Entry | None:
        """A memory ``actor`` can see, in any state (locked for the change by default)."""
        q = Query()
        row = await self._c.fetchrow(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE {visible(q, actor, platform=True)}"
            f" AND id = {q(memory_id)}{' FOR UPDATE' if lock else ''}", *q.args)
        return None if row is None else sql.entry(row)

    async def by_id(self, account_id: str, environment: str, memory_id: UUID) -> Entry | None:
        """For hygiene (no caller): a memory by its identity, locked."""
        row = await self._c.fetchrow(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE account_id = $1"
            " AND environment = $2 AND id = $3 FOR UPDATE SKIP LOCKED",
            account_id, environment, memory_id)
        return None if row is None else sql.entry(row)

    async def version(self, entry: Entry, version: int) -> Version | None:
        row = await self._c.fetchrow(
            f"SELECT {sql.VERSION_COLUMNS} FROM memory_versions WHERE account_id = $1"
            " AND environment = $2 AND memory_id = $3 AND version = $4",
            entry.account_id, entry.environment, entry.id, version)
        return None if row is None else _version(row)

    async def count_live(self, account_id: str, environment: str, buckets: Sequence[Bucket],
                         kind: Kind, now: datetime) -> list[int]:
        """The live memories of ``kind`` in each bucket, in one statement."""
        q = Query(account_id, environment, kind)
        counts, parts = [], []
        for bucket in buckets:
            condition = f"scope = ANY({q([str(s) for s in bucket.scopes])}::text[])"
            if bucket.agent_id is not None:
                condition += f" AND agent_id = {q(bucket.agent_id)}"
            if bucket.owner_user_id is not None:
                condition += f" AND owner_user_id = {q(bucket.owner_user_id)}"
            counts.append(f"count(*) FILTER (WHERE {condition})")
            parts.append(f"({condition})")
        row = postgres.one_row(await self._c.fetchrow(
            f"SELECT {', '.join(counts)} FROM memory_entries WHERE account_id = $1"
            f" AND environment = $2 AND kind = $3 AND ({' OR '.join(parts)})"
            f" AND {live(q, now)}", *q.args))
        return list(row)

    async def write(self, entry: Entry, *, new: bool, action: Action, author: Author,
                    before: dict | None, after: dict, now: datetime) -> Entry:
        """One change, in one statement: the memory's row (inserted, or written over as
        a new version: decay starts over), the previous version closed, the new one
        kept, the audit record, and the projection queued."""
        q = Query()
        identity = [q(entry.account_id), q(entry.environment), q(entry.id)]
        values = [q(v) for v in (entry.version, *sql.snapshot_values(entry))]
        columns = ("version", *sql.SNAPSHOT)
        if new:
            written = (f"INSERT INTO memory_entries (account_id, environment, id,"
                       f" {', '.join(columns)}, recall_count) VALUES"
                       f" ({', '.join(identity + values)}, 0)")
        else:
            assignments = ", ".join(f"{c} = {v}" for c, v in zip(columns, values, strict=True))
            written = (f"UPDATE memory_entries SET {assignments}, last_decayed_at = NULL"
                       f" WHERE account_id = {identity[0]} AND environment = {identity[1]}"
                       f" AND id = {identity[2]}")
        at, what = q(now), q(action)
        snapshot = ", ".join(sql.SNAPSHOT)
        statement = (
            f"WITH written AS ({written} RETURNING {ENTRY_COLUMNS}),"
            f" closed AS (UPDATE memory_versions SET recorded_until = {at}"
            f" WHERE account_id = {identity[0]} AND environment = {identity[1]}"
            f" AND memory_id = {identity[2]} AND recorded_until IS NULL),"
            f" kept AS (INSERT INTO memory_versions (memory_id, account_id, environment, version,"
            f" {snapshot}, action, recorded_at) SELECT id, account_id, environment, version,"
            f" {snapshot}, {what}, {at} FROM written),"
            f" audited AS (INSERT INTO memory_audit (account_id, environment, scope, agent_id,"
            f" owner_user_id, memory_id, version, action, actor_key_id, actor_agent_id,"
            f" actor_user_id, actor_role, at, before, after) SELECT account_id, environment,"
            f" scope, agent_id, owner_user_id, id, version, {what}, {q(author.key_id)},"
            f" {q(author.agent_id)}, {q(author.user_id)}, {q(author.role)}, {at},"
            f" {q(_dump(before))}::jsonb, {q(_dump(after))}::jsonb FROM written),"
            f" queued AS (INSERT INTO memory_outbox (entry_id, account_id, environment,"
            f" next_attempt_at, created_at) SELECT id, account_id, environment, {at}, {at}"
            f" FROM written)"
            f" SELECT *, pg_notify('memory_outbox', '') FROM written")
        try:
            row = postgres.one_row(await self._c.fetchrow(statement, *q.args))
        except asyncpg.UniqueViolationError as exc:
            raise _key_in_use(entry) from exc
        return sql.entry(row)

    async def get_many(self, actor: Actor, ids: Sequence[UUID]) -> dict[UUID, Entry]:
        q = Query()
        rows = await self._c.fetch(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE {visible(q, actor)}"
            f" AND id = ANY({q(list(ids))}::uuid[]) FOR UPDATE", *q.args)
        return {r["id"]: sql.entry(r) for r in rows}

    async def versions_of(self, account_id: str, environment: str, ids: Sequence[UUID]
                          ) -> dict[UUID, list[Version]]:
        found: dict[UUID, list[Version]] = {i: [] for i in ids}
        rows = await self._c.fetch(
            f"SELECT {sql.VERSION_COLUMNS} FROM memory_versions WHERE account_id = $1"
            " AND environment = $2 AND memory_id = ANY($3::uuid[]) ORDER BY memory_id, version",
            account_id, environment, list(ids))
        for row in rows:
            found[row["id"]].append(_version(row))
        return found

    async def live_keys(self, account_id: str, environment: str,
                        keys: Sequence[tuple[str, str, str, str]]) -> set[tuple[str, str, str, str]]:
        """Which of (scope, agent, owner, key) name a live memory already."""
        rows = await self._c.fetch(
            "SELECT e.scope, e.agent_id, e.owner_user_id, e.key FROM memory_entries e"
            " JOIN unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS k(scope, agent_id,"
            " owner_user_id, key) USING (scope, agent_id, owner_user_id, key)"
            " WHERE e.account_id = $1 AND e.environment = $2 AND e.deleted_at IS NULL"
            " AND e.superseded_by IS NULL", account_id, environment,
            *([k[i] for k in keys] for i in range(4)))
        return {(r["scope"], r["agent_id"], r["owner_user_id"], r["key"]) for r in rows}

    async def insert_imported(self, memories: Sequence[tuple[Entry, Sequence[Version], dict]],
                              author: Author, now: datetime) -> None:
        """Imported memories as they were, with their history, one ``import`` record each
        (its snapshot given), and their projection queued: a few statements a batch."""
        if not memories:
            return
        entries = [entry for entry, _, _ in memories]
        try:
            await self._c.copy_records_to_table(
                "memory_entries", columns=("id", "account_id", "environment", "version",
                                           *sql.SNAPSHOT, "recall_count", "last_recalled_at"),
                records=[(e.id, e.account_id, e.environment, e.version, *sql.snapshot_values(e),
                          e.recall_count, e.last_recalled_at) for e in entries])
        except asyncpg.UniqueViolationError as exc:
            raise AlreadyExists("an imported memory's key is taken", reason="KEY_IN_USE") from exc
        await self._c.copy_records_to_table(
            "memory_versions", columns=("memory_id", "account_id", "environment", "version",
                                        *sql.SNAPSHOT, "action", "recorded_at", "recorded_until"),
            records=[(e.id, e.account_id, e.environment, v.entry.version,
                      *sql.snapshot_values(v.entry), v.action, v.recorded_at, v.recorded_until)
                     for e, versions, _ in memories for v in versions])
        await self._c.copy_records_to_table(
            "memory_audit", columns=("account_id", "environment", "scope", "agent_id",
                                     "owner_user_id", "memory_id", "version", "action",
                                     "actor_key_id", "actor_agent_id", "actor_user_id",
                                     "actor_role", "at", "after"),
            records=[(e.account_id, e.environment, e.scope, e.agent_id, e.owner_user_id or "",
                      e.id, e.version, Action.IMPORT, author.key_id, author.agent_id,
                      author.user_id, author.role, now, _dump(snapshot))
                     for e, _, snapshot in memories])
        await self._c.copy_records_to_table(
            "memory_outbox", columns=("entry_id", "account_id", "environment", "next_attempt_at",
                                      "created_at"),
            records=[(e.id, e.account_id, e.environment, now, now) for e in entries])
        await self._c.execute("SELECT pg_notify('memory_outbox', '')")

    async def audit_only(self, account_id: str, environment: str, scope: Scope, agent_id: str,
                         owner_user_id: str, memory_id: UUID | None, version: int | None,
                         action: Action, actor: Author, before: dict | None, after: dict | None,
                         now: datetime) -> None:
        await self._c.execute(
            "INSERT INTO memory_audit (account_id, environment, scope, agent_id, owner_user_id,"
            " memory_id, version, action, actor_key_id, actor_agent_id, actor_user_id, actor_role,"
            " at, before, after) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,"
            " $14::jsonb, $15::jsonb)",
            account_id, environment, scope, agent_id, owner_user_id, memory_id, version, action,
            actor.key_id, actor.agent_id, actor.user_id, actor.role, now, _dump(before),
            _dump(after))

    async def enqueue(self, entry: Entry, now: datetime) -> None:
        await self._c.execute(
            "INSERT INTO memory_outbox (entry_id, account_id, environment, next_attempt_at,"
            " created_at) VALUES ($1, $2, $3, $4, $4)",
            entry.id, entry.account_id, entry.environment, now)
        await self._c.execute("SELECT pg_notify('memory_outbox', '')")

    async def purge(self, entry: Entry) -> None:
        """Delete a memory for real (its versions follow), and redact its trail."""
        await self._c.execute(
            "DELETE FROM memory_entries WHERE account_id = $1 AND environment = $2 AND id = $3",
            entry.account_id, entry.environment, entry.id)
        await self._c.execute(
            f"UPDATE memory_audit SET before = before - {_REDACTED}, after = after - {_REDACTED}"
            " WHERE account_id = $1 AND environment = $2 AND memory_id = $3",
            entry.account_id, entry.environment, entry.id)

    # -- request ids ---------------------------------------------------------------

    async def prior_request(self, actor: Actor, request_id: str) -> PriorRequest | None:
        row = await self._c.fetchrow(
            "SELECT request_hash, response FROM memory_store_requests WHERE account_id = $1"
            " AND environment = $2 AND agent_id = $3 AND user_id = $4 AND request_id = $5",
            actor.account_id, actor.environment, actor.agent_id, actor.user_id or "", request_id)
        if row is None:
            return None
        answer = json.loads(row["response"])
        return PriorRequest(row["request_hash"], UUID(answer["entry"]), answer["outcome"])

    async def save_request(self, actor: Actor, request_id: str, request_hash: str,
                           entry_id: UUID, outcome: str, now: datetime) -> None:
        await self._c.execute(
            "INSERT INTO memory_store_requests (account_id, environment, agent_id, user_id,"
            " request_id, request_hash, response, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7,"
            " $8) ON CONFLICT (account_id, environment, agent_id, user_id, request_id)"
            " DO UPDATE SET request_hash = excluded.request_hash, response = excluded.response,"
            " created_at = excluded.created_at",
            actor.account_id, actor.environment, actor.agent_id, actor.user_id or "", request_id,
            request_hash, json.dumps({"entry": str(entry_id), "outcome": outcome}).encode(), now)



def _dump(value: dict | None) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True)


def _key_in_use(entry: Entry) -> AlreadyExists:
    return AlreadyExists(f"a live {entry.scope} memory already has the key {entry.key!r}",
                         reason="KEY_IN_USE", metadata={"key": entry.key})
