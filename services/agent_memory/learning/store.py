"""Every SQL statement of learning, on asyncpg: storage only (the rules are in the
modules that call it). Reads of suggestions, procedures and audit records see the
caller's agent's rows that belong to no person or to the caller's own (``_mine``).
Memories are read through the memory service (``memories.store``), but for the
suggestions' join to the memories they name."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Sequence
from datetime import datetime, timedelta
from uuid import UUID

import asyncpg

from libs import memory_writers
from libs.postgres import Connection
from libs.quotas import quota_exceeded
from services.agent_memory.learning.model import (
    FinishedRun,
    LearningAction,
    LearningAudit,
    Outcome,
    Procedure,
    Report,
    SkillState,
    Step,
    Suggestion,
    SuggestionKind,
    SuggestionStatus,
)
from services.agent_memory.memories.model import Actor, Author, Role, Source
from services.agent_memory.memories.rules import Kind, Scope, SourceKind
from services.agent_memory.memories.store.sql import Query

_SUGGESTION_COLUMNS = (
    "s.id, s.account_id, s.environment, s.scope, s.agent_id, s.owner_user_id, s.kind, s.status,"
    " s.key, s.content, s.memory_kind, s.confidence, s.source_kind, s.source_thread_id,"
    " s.source_message_ids, s.source_run_id, s.source_first_offset, s.source_last_offset,"
    " s.supersedes_memory_id, s.procedure_id, s.memory_id, s.created_at, s.decided_at,"
    " s.decided_by, coalesce(m.content, '') AS superseded_content,"
    " coalesce(made.content, '') AS stored_content")
# The memory a supersede suggestion replaces (m) and the one accepting made (made).
_SUGGESTION_FROM = (
    "learning_suggestions s LEFT JOIN memory_entries m ON m.account_id = s.account_id"
    " AND m.environment = s.environment AND m.id = s.supersedes_memory_id"
    " LEFT JOIN memory_entries made ON made.account_id = s.account_id"
    " AND made.environment = s.environment AND made.id = s.memory_id")
_PROCEDURE_COLUMNS = (
    "id, account_id, environment, scope, agent_id, owner_user_id, thread_id, run_id,"
    " turn_offset, task, steps, created_at, successes, thumbs_up, thumbs_down, recallable,"
    " skill_state, deleted_at")
_RUN_COLUMNS = ("account_id, environment, agent_id, thread_id, run_id, owner_user_id, outcome,"
                " after_offset, last_offset, finished_at, credentials_declared")


def _author_json(author: Author) -> str:
    return json.dumps({"key_id": author.key_id, "agent_id": author.agent_id,
                       "user_id": author.user_id, "role": str(author.role)})


def _author(value) -> Author | None:
    if value is None:
        return None
    data = json.loads(value) if isinstance(value, str) else value
    return Author(data["key_id"], data["agent_id"], data["user_id"], Role(data["role"]))


def _suggestion(row) -> Suggestion:
    source = None
    if row["source_kind"]:
        source = Source(SourceKind(row["source_kind"]), row["source_thread_id"],
                        tuple(row["source_message_ids"]), row["source_run_id"],
                        row["source_first_offset"], row["source_last_offset"])
    return Suggestion(
        id=row["id"], account_id=row["account_id"], environment=row["environment"],
        scope=Scope(row["scope"]), agent_id=row["agent_id"],
        owner_user_id=row["owner_user_id"] or None, kind=SuggestionKind(row["kind"]),
        status=SuggestionStatus(row["status"]), created_at=row["created_at"], key=row["key"],
        content=row["content"],
        memory_kind=Kind(row["memory_kind"]) if row["memory_kind"] else None,
        confidence=row["confidence"], source=source,
        supersedes_memory_id=row["supersedes_memory_id"],
        superseded_content=row["superseded_content"], procedure_id=row["procedure_id"],
        memory_id=row["memory_id"], stored_content=row["stored_content"],
        decided_at=row["decided_at"],
        decided_by=_author(row["decided_by"]))


def _procedure(row) -> Procedure:
    steps = json.loads(row["steps"]) if isinstance(row["steps"], str) else row["steps"]
    return Procedure(
        id=row["id"], account_id=row["account_id"], environment=row["environment"],
        scope=Scope(row["scope"]), agent_id=row["agent_id"],
        owner_user_id=row["owner_user_id"] or None, thread_id=row["thread_id"],
        run_id=row["run_id"], turn_offset=row["turn_offset"], task=row["task"],
        steps=tuple(Step.from_json(s) for s in steps), created_at=row["created_at"],
        successes=row["successes"], thumbs_up=row["thumbs_up"], thumbs_down=row["thumbs_down"],
        recallable=row["recallable"], skill_state=SkillState(row["skill_state"]),
        deleted_at=row["deleted_at"])


def _run(row) -> FinishedRun:
    return FinishedRun(row["account_id"], row["environment"], row["agent_id"], row["thread_id"],
                       row["run_id"], row["owner_user_id"] or None, Outcome(row["outcome"]),
                       row["after_offset"], row["last_offset"], row["finished_at"],
                       row["credentials_declared"])


def _mine(q: Query, actor: Actor, alias: str = "") -> str:
    """The caller's agent's rows (suggestions, procedures, learning audit always name the
    agent that learned them), no person's or the caller's own person's."""
    a = f"{alias}." if alias else ""
    return (f"{a}account_id = {q(actor.account_id)} AND {a}environment = "
            f"{q(actor.environment)} AND {a}agent_id = {q(actor.agent_id)}"
            f" AND {a}owner_user_id IN ('', {q(actor.user_id or '')})")


def _managed(q: Query, actor: Actor) -> str:
    """Procedures the caller manages: those it sees; an admin every one of the agent (the
    seed: a person's procedures are deleted by that person or an admin)."""
    if actor.role not in memory_writers.ADMIN_ROLES:
        return _mine(q, actor)
    return (f"account_id = {q(actor.account_id)} AND environment = {q(actor.environment)}"
            f" AND agent_id = {q(actor.agent_id)}")


class LearningStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        async with self._pool.acquire() as connection, connection.transaction():
            yield connection

    # -- the change-feed cursor -------------------------------------------------------

    async def load_cursor(self, shard: int) -> int:
        return await self._pool.fetchval(
            "SELECT position FROM learning_feed_cursors WHERE shard = $1", shard) or 0

    async def save_cursor(self, shard: int, position: int) -> None:
        await self._pool.execute(
            "INSERT INTO learning_feed_cursors (shard, position) VALUES ($1, $2)"
            " ON CONFLICT (shard) DO UPDATE SET position = excluded.position", shard, position)

    # -- runs to learn from -----------------------------------------------------------

    async def declare_credentials(self, actor: Actor, thread_id: str, run_id: str,
                                  owner: str | None, now: datetime) -> None:
        await self._pool.execute(
            "INSERT INTO learning_runs (account_id, environment, agent_id, thread_id, run_id,"
            " owner_user_id, state, credentials_declared, updated_at) VALUES ($1, $2, $3, $4, $5,"
            " $6, 'open', true, $7) ON CONFLICT (account_id, environment, agent_id, thread_id,"
            " run_id) DO UPDATE SET credentials_declared = true",
            actor.account_id, actor.environment, actor.agent_id, thread_id, run_id, owner or "",
            now)

    async def add_finished(self, runs: Sequence[FinishedRun], now: datetime) -> None:
        """Queue runs to learn from; a run already queued or learned from is left alone."""
        await self._pool.executemany(
            "INSERT INTO learning_runs (account_id, environment, agent_id, thread_id, run_id,"
            " owner_user_id, state, outcome, after_offset, last_offset, finished_at,"
            " next_attempt_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9,"
            " $10, $11, $11) ON CONFLICT (account_id, environment, agent_id, thread_id, run_id)"
            " DO UPDATE SET state = 'pending', outcome = excluded.outcome, after_offset ="
            " excluded.after_offset, last_offset = excluded.last_offset, finished_at ="
            " excluded.finished_at, next_attempt_at = excluded.next_attempt_at, updated_at ="
            " excluded.updated_at WHERE learning_runs.state = 'open'",
            [(r.account_id, r.environment, r.agent_id, r.thread_id, r.run_id,
              r.owner_user_id or "", r.outcome, r.after_offset, r.last_offset, r.finished_at, now)
             for r in runs])

    async def claim_run(self, now: datetime, lease: timedelta) -> FinishedRun | None:
        """A due run, leased to this worker (another worker skips it until the lease ends)."""
        row = await self._pool.fetchrow(
            "UPDATE learning_runs SET next_attempt_at = $2, attempts = attempts + 1"
            " WHERE (account_id, environment, agent_id, thread_id, run_id) = ("
            " SELECT account_id, environment, agent_id, thread_id, run_id FROM learning_runs"
            " WHERE state = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at"
            f" LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING {_RUN_COLUMNS}", now, now + lease)
        return None if row is None else _run(row)

    async def close_run(self, run: FinishedRun, report: Report, now: datetime) -> None:
        await self._pool.execute(
            "UPDATE learning_runs SET state = $6, report = $7::jsonb, last_error = NULL,"
            " updated_at = $8 WHERE account_id = $1 AND environment = $2 AND agent_id = $3"
            " AND thread_id = $4 AND run_id = $5",
            run.account_id, run.environment, run.agent_id, run.thread_id, run.run_id,
            "skipped" if report.skipped else "done", json.dumps(report.__dict__), now)

    async def retry_run(self, run: FinishedRun, error: str, at: datetime) -> None:
        await self._pool.execute(
            "UPDATE learning_runs SET next_attempt_at = $6, last_error = $7 WHERE account_id = $1"
            " AND environment = $2 AND agent_id = $3 AND thread_id = $4 AND run_id = $5",
            run.account_id, run.environment, run.agent_id, run.thread_id, run.run_id, at,
            error[:1000])

    async def run_report(self, account_id: str, agent_id: str, thread_id: str,
                         run_id: str) -> tuple[str, dict | None] | None:
        row = await self._pool.fetchrow(
            "SELECT state, report FROM learning_runs WHERE account_id = $1 AND agent_id = $2"
            " AND thread_id = $3 AND run_id = $4", account_id, agent_id, thread_id, run_id)
        return None if row is None else (row["state"],
                                         row["report"] and json.loads(row["report"]))

    # -- suggestions ---------------------------------------------------------------------

    @staticmethod
    async def check_pending_quota(c: Connection, account_id: str, quota: int) -> None:
        pending = await c.fetchval(
            "SELECT count(*) FROM (SELECT 1 FROM learning_suggestions WHERE account_id = $1"
            " AND status = 'pending' LIMIT $2) waiting", account_id, quota)
        if pending >= quota:
            raise quota_exceeded("pending_suggestions", quota,
                                 f"{pending} suggestions are waiting for review")

    async def add_suggestion(self, c: Connection, s: Suggestion,
                             content_hash: str) -> bool:
        """False when the same fact is already pending for this agent and scope owner."""
        source = s.source or Source()
        row = await c.fetchrow(
            "INSERT INTO learning_suggestions (id, account_id, environment, scope, agent_id,"
            " owner_user_id, kind, status, key, content, content_hash, memory_kind, confidence,"
            " source_kind, source_thread_id, source_message_ids, source_run_id,"
            " source_first_offset, source_last_offset, supersedes_memory_id, procedure_id,"
            " created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10, $11, $12,"
            " $13, $14, $15, $16, $17, $18, $19, $20, $21) ON CONFLICT DO NOTHING RETURNING id",
            s.id, s.account_id, s.environment, s.scope, s.agent_id, s.owner_user_id or "", s.kind,
            s.key, s.content, content_hash, s.memory_kind, s.confidence,
            s.source.kind if s.source else None, source.thread_id, list(source.message_ids),
            source.run_id, source.first_offset, source.last_offset, s.supersedes_memory_id,
            s.procedure_id, s.created_at)
        return row is not None

    async def decided_before(self, actor: Actor, scope: Scope, owner: str,
                              content_hash: str) -> bool:
        return bool(await self._pool.fetchval(
            "SELECT 1 FROM learning_suggestions WHERE account_id = $1 AND environment = $2"
            " AND agent_id = $3 AND scope = $4 AND owner_user_id = $5 AND content_hash = $6"
            " AND status <> 'pending'", actor.account_id, actor.environment, actor.agent_id,
            scope, owner, content_hash))

    async def suggestions(self, actor: Actor, status: SuggestionStatus,
                          before: tuple[datetime, UUID] | None, limit: int) -> list[Suggestion]:
        q = Query()
        where = f"{_mine(q, actor, 's')} AND s.status = {q(status)}"
        if before is not None:
            where += f" AND (s.created_at, s.id) < ({q(before[0])}, {q(before[1])})"
        rows = await self._pool.fetch(
            f"SELECT {_SUGGESTION_COLUMNS} FROM {_SUGGESTION_FROM} WHERE {where}"
            f" ORDER BY s.created_at DESC, s.id DESC LIMIT {q(limit)}", *q.args)
        return [_suggestion(r) for r in rows]

    async def suggestion(self, actor: Actor, suggestion_id: UUID) -> Suggestion | None:
        q = Query()
        row = await self._pool.fetchrow(
            f"SELECT {_SUGGESTION_COLUMNS} FROM {_SUGGESTION_FROM} WHERE {_mine(q, actor, 's')}"
            f" AND s.id = {q(suggestion_id)}", *q.args)
        return None if row is None else _suggestion(row)

    async def decide(self, c: Connection, s: Suggestion, status: SuggestionStatus,
                     memory_id: UUID | None, by: Author, now: datetime) -> bool:
        """Mark a pending suggestion decided; False when someone decided it first."""
        done = await c.execute(
            "UPDATE learning_suggestions SET status = $4, memory_id = $5, decided_at = $6,"
            " decided_by = $7::jsonb WHERE account_id = $1 AND environment = $2 AND id = $3"
            " AND status = 'pending'", s.account_id, s.environment, s.id, status, memory_id, now,
            _author_json(by))
        return done.endswith(" 1")

    # -- procedures -----------------------------------------------------------------------

    async def add_procedure(self, c: Connection, p: Procedure, signature: str,
                            embedding: bytes, embedder: str) -> bool:
        """False when this turn, or the same task and steps, is already kept."""
        row = await c.fetchrow(
            "INSERT INTO procedures (id, account_id, environment, scope, agent_id, owner_user_id,"
            " thread_id, run_id, turn_offset, task, steps, signature, task_embedding, embedder,"
            " created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13,"
            " $14, $15) ON CONFLICT DO NOTHING RETURNING id",
            p.id, p.account_id, p.environment, p.scope, p.agent_id, p.owner_user_id or "",
            p.thread_id, p.run_id, p.turn_offset, p.task,
            json.dumps([s.to_json() for s in p.steps]), signature, embedding, embedder,
            p.created_at)
        return row is not None

    async def unindexed(self, limit: int) -> list[tuple[Procedure, bytes]]:
        rows = await self._pool.fetch(
            f"SELECT {_PROCEDURE_COLUMNS}, task_embedding FROM procedures"
            " WHERE indexed_at IS NULL ORDER BY created_at LIMIT $1", limit)
        return [(_procedure(r), bytes(r["task_embedding"])) for r in rows]

    async def mark_indexed(self, procedures: Sequence[Procedure], now: datetime) -> None:
        await self._pool.executemany(
            "UPDATE procedures SET indexed_at = $4 WHERE account_id = $1 AND environment = $2"
            " AND id = $3", [(p.account_id, p.environment, p.id, now) for p in procedures])

    async def procedures(self, actor: Actor, include_deleted: bool,
                         before: tuple[datetime, UUID] | None, limit: int) -> list[Procedure]:
        q = Query()
        where = _managed(q, actor)
        if not include_deleted:
            where += " AND deleted_at IS NULL"
        if before is not None:
            where += f" AND (created_at, id) < ({q(before[0])}, {q(before[1])})"
        rows = await self._pool.fetch(
            f"SELECT {_PROCEDURE_COLUMNS} FROM procedures WHERE {where}"
            f" ORDER BY created_at DESC, id DESC LIMIT {q(limit)}", *q.args)
        return [_procedure(r) for r in rows]

    async def procedure(self, actor: Actor, procedure_id: UUID,
                        c: Connection | None = None) -> Procedure | None:
        q = Query()
        lock = " FOR UPDATE" if c is not None else ""
        row = await (c or self._pool).fetchrow(
            f"SELECT {_PROCEDURE_COLUMNS} FROM procedures WHERE {_managed(q, actor)}"
            f" AND id = {q(procedure_id)}{lock}", *q.args)
        return None if row is None else _procedure(row)

    async def delete_procedure(self, c: Connection, p: Procedure, by: Author,
                               now: datetime) -> Procedure:
        row = await c.fetchrow(
            "UPDATE procedures SET deleted_at = $4, deleted_by = $5::jsonb WHERE account_id = $1"
            f" AND environment = $2 AND id = $3 RETURNING {_PROCEDURE_COLUMNS}",
            p.account_id, p.environment, p.id, now, _author_json(by))
        return _procedure(row)

    async def set_skill_state(self, c: Connection, p: Procedure,
                              state: SkillState) -> Procedure:
        row = await c.fetchrow(
            "UPDATE procedures SET skill_state = $4 WHERE account_id = $1 AND environment = $2"
            f" AND id = $3 RETURNING {_PROCEDURE_COLUMNS}", p.account_id, p.environment, p.id,
            state)
        return _procedure(row)

    async def any_recallable(self, actor: Actor) -> bool:
        """Whether a recall could find anything: memory is on for the account and the
        caller sees a live, recallable procedure of its agent (one index probe)."""
        q = Query()
        return await self._pool.fetchval(
            f"SELECT EXISTS (SELECT 1 FROM procedures WHERE {_mine(q, actor)}"
            " AND deleted_at IS NULL AND recallable) AND NOT EXISTS (SELECT 1 FROM"
            f" account_settings WHERE account_id = {q(actor.account_id)} AND NOT memory_enabled)",
            *q.args)

    async def recall_candidates(self, actor: Actor, ids: Sequence[UUID],
                                unindexed: int) -> list[tuple[Procedure, bytes]]:
        """Live, recallable procedures the caller sees: those ``ids``, and up to
        ``unindexed`` not yet in the index."""
        q = Query()
        where = f"{_mine(q, actor)} AND deleted_at IS NULL AND recallable"
        rows = await self._pool.fetch(
            f"(SELECT {_PROCEDURE_COLUMNS}, task_embedding FROM procedures WHERE {where}"
            f" AND id = ANY({q(list(ids))}::uuid[]))"
            f" UNION (SELECT {_PROCEDURE_COLUMNS}, task_embedding FROM procedures WHERE {where}"
            f" AND indexed_at IS NULL LIMIT {q(unindexed)})", *q.args)
        return [(_procedure(r), bytes(r["task_embedding"])) for r in rows]

    async def record_uses(self, actor: Actor, thread_id: str, run_id: str,
                          ids: Sequence[UUID], now: datetime) -> None:
        await self._pool.executemany(
            "INSERT INTO procedure_uses (account_id, environment, agent_id, thread_id, run_id,"
            " procedure_id, recalled_at) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
            [(actor.account_id, actor.environment, actor.agent_id, thread_id, run_id, i, now)
             for i in ids])

    async def apply_outcome(self, c: Connection, run: FinishedRun) -> list[Procedure]:
        """The run's outcome on each procedure it recalled (once); returns them."""
        rows = await c.fetch(
            "WITH used AS (UPDATE procedure_uses SET outcome = $6 WHERE account_id = $1"
            " AND environment = $2 AND agent_id = $3 AND thread_id = $4 AND run_id = $5"
            " AND outcome IS NULL RETURNING procedure_id)"
            " UPDATE procedures p SET successes = successes + CASE WHEN $6 = 'succeeded'"
            " THEN 1 ELSE 0 END FROM used WHERE p.account_id = $1 AND p.environment = $2"
            f" AND p.id = used.procedure_id RETURNING {_PROCEDURE_COLUMNS}",
            run.account_id, run.environment, run.agent_id, run.thread_id, run.run_id,
            run.outcome)
        return [_procedure(r) for r in rows]

    async def apply_rating(self, c: Connection, actor: Actor, thread_id: str,
                           run_id: str, rating: str) -> list[UUID]:
        """The run's latest rating on each procedure it recalled; returns their ids."""
        rows = await c.fetch(
            "SELECT procedure_id, rating FROM procedure_uses WHERE account_id = $1"
            " AND environment = $2 AND agent_id = $3 AND thread_id = $4 AND run_id = $5"
            " FOR UPDATE", actor.account_id, actor.environment, actor.agent_id, thread_id, run_id)
        for row in rows:
            if row["rating"] == rating:
                continue
            up = (rating == "up") - (row["rating"] == "up")
            down = (rating == "down") - (row["rating"] == "down")
            await c.execute(
                "UPDATE procedures SET thumbs_up = thumbs_up + $4, thumbs_down = thumbs_down + $5"
                " WHERE account_id = $1 AND environment = $2 AND id = $3",
                actor.account_id, actor.environment, row["procedure_id"], up, down)
        await c.execute(
            "UPDATE procedure_uses SET rating = $6 WHERE account_id = $1 AND environment = $2"
            " AND agent_id = $3 AND thread_id = $4 AND run_id = $5",
            actor.account_id, actor.environment, actor.agent_id, thread_id, run_id, rating)
        return [r["procedure_id"] for r in rows]

    # -- audit ------------------------------------------------------------------------------

    async def audit(self, c: Connection, *, account_id: str, environment: str,
                    scope: Scope, agent_id: str, owner_user_id: str | None,
                    subject_id: UUID | None, action: LearningAction, actor: Author,
                    now: datetime, before: dict | None = None, after: dict | None = None) -> None:
        await c.execute(
            "INSERT INTO learning_audit (account_id, environment, scope, agent_id, owner_user_id,"
            " subject_id, action, actor_key_id, actor_agent_id, actor_user_id, actor_role, at,"
            " before, after) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,"
            " $13::jsonb, $14::jsonb)", account_id, environment, scope, agent_id,
            owner_user_id or "", subject_id, action, actor.key_id, actor.agent_id, actor.user_id,
            actor.role, now, before and json.dumps(before, default=str),
            after and json.dumps(after, default=str))

    async def audit_records(self, actor: Actor, before_id: int | None,
                            limit: int) -> list[LearningAudit]:
        q = Query()
        where = _mine(q, actor)
        if before_id is not None:
            where += f" AND id < {q(before_id)}"
        rows = await self._pool.fetch(
            "SELECT id, action, subject_id, actor_key_id, actor_agent_id, actor_user_id,"
            f" actor_role, at, before, after FROM learning_audit WHERE {where}"
            f" ORDER BY id DESC LIMIT {q(limit)}", *q.args)
        return [LearningAudit(
            r["id"], LearningAction(r["action"]), r["subject_id"],
            Author(r["actor_key_id"], r["actor_agent_id"], r["actor_user_id"],
                   Role(r["actor_role"])), r["at"],
            r["before"] and json.loads(r["before"]), r["after"] and json.loads(r["after"]))
            for r in rows]

    # -- retention ------------------------------------------------------------------------

    async def purgeable_procedures(self, now: datetime, limit: int) -> list[Procedure]:
        """Tombstones older than their account's retention window."""
        rows = await self._pool.fetch(
            f"SELECT {_PROCEDURE_COLUMNS} FROM procedures t WHERE deleted_at IS NOT NULL"
            " AND deleted_at <= $1::timestamptz - make_interval(days => coalesce((SELECT retention_days"
            " FROM account_settings s WHERE s.account_id = t.account_id), 30)) LIMIT $2",
            now, limit)
        return [_procedure(r) for r in rows]

    async def purge_procedure(self, c: Connection, p: Procedure) -> None:
        await c.execute("DELETE FROM procedures WHERE account_id = $1 AND environment = $2"
                        " AND id = $3", p.account_id, p.environment, p.id)

    async def purge_decided(self, now: datetime) -> int:
        """Decided suggestions and learned-from runs older than the retention window."""
        removed = 0
        retention = ("make_interval(days => coalesce((SELECT retention_days FROM account_settings"
                     " s WHERE s.account_id = t.account_id), 30))")
        for statement in (
                "DELETE FROM learning_suggestions t WHERE t.status <> 'pending'"
                f" AND t.decided_at <= $1::timestamptz - {retention}",
                "DELETE FROM learning_runs t WHERE t.state IN ('done', 'skipped')"
                f" AND t.updated_at <= $1::timestamptz - {retention}"):
            status = await self._pool.execute(statement, now)
            removed += int(status.split()[-1])
        return removed
