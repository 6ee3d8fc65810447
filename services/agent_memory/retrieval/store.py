"""Every SQL statement of retrieval, on asyncpg: storage only.

Reads of memories go through a :class:`View` (now, recorded as of, valid as
of), whose condition always carries the caller's visibility predicate;
episodes and receipts have scope columns and are filtered by the same
predicate. Writes (receipts, credits, episodes, entities) are single
statements or one short transaction, never open across a network call.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

import asyncpg

from libs import postgres
from libs.quotas import quota_exceeded
from services.agent_memory.memories.model import Actor
from services.agent_memory.memories.rules import Kind
from services.agent_memory.memories.store import sql
from services.agent_memory.memories.store.sql import Query, visible
from services.agent_memory.retrieval.model import (
    Candidate,
    EpisodeRow,
    Filters,
    GraphWalk,
    Hit,
    Receipt,
    ReceiptItem,
    Resolved,
    Section,
    Signals,
)
from services.agent_memory.retrieval.view import View

# Words the full-text leg does not search for: in the 'simple' configuration
# (no stemming, no stop words) they would match nearly every memory.
FULLTEXT_STOP = sorted({
    "a", "about", "all", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by",
    "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her",
    "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no", "not",
    "of", "on", "or", "our", "she", "so", "some", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "to", "us", "was", "we", "were", "what", "when",
    "where", "which", "who", "why", "will", "with", "would", "you", "your",
})


def _tsquery(q: Query, text: str, operator: str = "|") -> str:
    """The query's own lexemes (the parser's, so both sides tokenize alike) joined by
    ``operator``, stop words left out; user text never reaches tsquery syntax."""
    return (f"to_tsquery('simple', (SELECT coalesce(string_agg(quote_literal(lexeme),"
            f" ' {operator} '), '') FROM unnest(to_tsvector('simple', {q(text)})) WHERE lexeme"
            f" <> ALL({q(FULLTEXT_STOP)}::text[])))")


# The full-text leg ranks at most this many matches of each stage (memories with every
# query word, then memories with any): ts_rank_cd reads each match's tsvector, and a
# common word can match most of a large account.
FULLTEXT_RANKED = 1000
# A name more memories than this hold is too common for the entity leg to rank by.
ENTITY_PER_NAME = 100


def _select(q: Query, actor: Actor, view: View, conditions: list[str],
            label: str = "''", columns: str = "", joins: str = "") -> str:
    """Memories of the view with what scoring and trust read: use counters (always the
    current row's), credit, and whether another visible live memory holds the same key
    with other content (then ``columns``, after ``joins``)."""
    other = "o"
    rivals = (f"EXISTS (SELECT 1 FROM memory_entries {other} WHERE {visible(q, actor, other)}"
              f" AND {other}.key = m.key AND {other}.id <> m.id"
              f" AND {other}.deleted_at IS NULL AND {other}.superseded_by IS NULL"
              f" AND ({other}.expires_at IS NULL OR {other}.expires_at > {q(view.now)})"
              f" AND {other}.content_hash <> m.content_hash)")
    select = ", ".join(f"m.{c}" for c in ("id", "account_id", "environment", "version",
                                          *sql.SNAPSHOT))
    counters = "m"
    source = view.source()
    if view.versions:  # a version row has no counters: the memory's current row has
        counters = "c"
        source += (" JOIN memory_entries c ON c.account_id = m.account_id"
                   " AND c.environment = m.environment AND c.id = m.id")
    return (f"SELECT {label}::text AS section, {select}, {counters}.recall_count,"
            f" {counters}.last_recalled_at, {view.superseded(q)} AS is_superseded,"
            f" {rivals} AS contradicted, coalesce(u.helpful, 0) AS helpful,"
            f" coalesce(u.unhelpful, 0) AS unhelpful, coalesce(u.successes, 0) AS successes,"
            f" coalesce(u.failures, 0) AS failures{columns} FROM {source}{joins}"
            f" LEFT JOIN memory_utility u ON u.account_id = m.account_id"
            f" AND u.environment = m.environment AND u.memory_id = m.id"
            f" WHERE {' AND '.join(conditions)}")


def _candidate(row) -> Candidate:
    return Candidate(None, Signals(
        row["is_superseded"], row["contradicted"], row["recall_count"],
        row["last_recalled_at"], row["helpful"], row["unhelpful"], row["successes"],
        row["failures"]), row, sql.entry)


def _hits(rows) -> list[Hit]:
    return [Hit(r["id"], float(r["score"])) for r in rows]


def _distinct(hits: list[Hit], limit: int) -> list[Hit]:
    """The hits of a leg whose scores come in ties (entity and graph legs), read with one
    row more than ``limit``: when the last tie group does not fit, the leg cannot tell
    its members apart, so it ranks none of them (rather than an arbitrary few)."""
    if len(hits) <= limit:
        return hits
    cut = hits[limit].score
    return [h for h in hits[:limit] if h.score != cut]


def _graph(q: Query, actor: Actor, view: View, kinds: Sequence[Kind], account: str,
           environment: str, walk: GraphWalk) -> str:
    """The graph leg as CTEs over ``verified``: two hops from the seeds, memory -> entity
    -> another memory (each pair of seed and shared entity counts one; entities named by
    more than ``fanout`` memories are not walked), and memory -> the memories it
    superseded (counts one). ``graph``: id, score, position (from 1), one row more than
    the limit (see ``_distinct``)."""
    return (f"seeds AS (SELECT id FROM verified ORDER BY position LIMIT {q(walk.seeds)}),"
            f" named AS (SELECT e.memory_id AS seed, e.norm FROM memory_entities e"
            f" WHERE e.account_id = {account} AND e.environment = {environment}"
            f" AND e.memory_id IN (SELECT id FROM seeds)),"
            f" walked AS MATERIALIZED (SELECT n.norm FROM (SELECT DISTINCT norm FROM named) n"
            f" WHERE (SELECT"
            f" count(*) FROM (SELECT 1 FROM memory_entities f WHERE f.account_id = {account}"
            f" AND f.environment = {environment} AND f.norm = n.norm"
            f" LIMIT {q(walk.fanout + 1)}) c) <= {q(walk.fanout)}),"
            f" reached AS (SELECT e2.memory_id AS id FROM named n JOIN walked w USING (norm)"
            f" JOIN memory_entities e2 ON e2.account_id = {account}"
            f" AND e2.environment = {environment} AND e2.norm = n.norm"
            f" AND e2.memory_id <> n.seed"
            f" UNION ALL SELECT s.id FROM memory_entries s WHERE s.account_id = {account}"
            f" AND s.environment = {environment}"
            f" AND s.superseded_by IN (SELECT id FROM seeds)),"
            f" walk AS (SELECT m.id, r.score FROM (SELECT id, count(*) AS score FROM reached"
            f" GROUP BY id) r JOIN {view.source()} ON m.account_id = {account}"
            f" AND m.environment = {environment} AND m.id = r.id"
            f" WHERE {view.where(q, actor, kinds)}"
            f" ORDER BY r.score DESC, m.id LIMIT {q(walk.limit + 1)}),"
            f" graph AS (SELECT id, score, row_number() OVER (ORDER BY score DESC, id)"
            f" AS position FROM walk)")


def _episode(row, score: float = 0.0) -> EpisodeRow:
    return EpisodeRow(row["id"], row["thread_id"], row["run_id"], row["outcome"], row["task"],
                      row["summary"], row["finished_at"], score)


def _owner(actor: Actor) -> tuple[str, str]:
    """Scope and owner of what a caller's run produces (episodes, receipts)."""
    return ("private", actor.user_id) if actor.user_id else ("agent", "")


class RetrievalStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    # -- the legs ------------------------------------------------------------------

    async def fulltext(self, actor: Actor, view: View, kinds: Sequence[Kind], text: str,
                       limit: int, *, unprojected: bool = False) -> list[Hit]:
        """ts_rank_cd against the OR of the query's words; memories holding every word come
        first. Each stage ranks at most FULLTEXT_RANKED matches. The keyword leg's stand-in
        where the index cannot answer: ``unprojected``, only the memories written since the
        projector last ran (still in the outbox); the index down, all of them."""
        q = Query()
        every, some = _tsquery(q, text, "&"), _tsquery(q, text, "|")
        base = view.where(q, actor, kinds)
        if unprojected:
            base += (f" AND m.id IN (SELECT entry_id FROM memory_outbox WHERE account_id ="
                     f" {q(actor.account_id)} AND environment = {q(actor.environment)})")
        ranked = q(FULLTEXT_RANKED)
        rows = await self._pool.fetch(
            f"WITH terms AS (SELECT {every} AS every, {some} AS some),"
            f" matched AS ((SELECT m.id, m.search_simple, true AS complete"
            f" FROM {view.source()}, terms WHERE {base} AND m.search_simple @@ terms.every"
            f" LIMIT {ranked}) UNION ALL (SELECT m.id, m.search_simple, false"
            f" FROM {view.source()}, terms WHERE {base} AND m.search_simple @@ terms.some"
            f" AND NOT m.search_simple @@ terms.every LIMIT {ranked}))"
            f" SELECT x.id, ts_rank_cd(x.search_simple, terms.some) AS score"
            f" FROM matched x, terms ORDER BY x.complete DESC, score DESC, x.id"
            f" LIMIT {q(limit)}", *q.args)
        return _hits(rows)

    async def entity(self, actor: Actor, view: View, kinds: Sequence[Kind],
                     grams: Sequence[str], limit: int) -> list[Hit]:
        """Memories naming the query's entities; each matched name adds 1 / (the number of
        the account's memories naming it), so rare names weigh most. A name more than
        ENTITY_PER_NAME memories hold is too common to tell them apart (a speaker's
        name in every turn): it adds nothing, and is only counted that far; a tie the
        leg cannot fit whole is left to the other legs."""
        if not grams:
            return []
        q = Query()
        account, environment = q(actor.account_id), q(actor.environment)
        rows = await self._pool.fetch(
            f"WITH names AS (SELECT n.norm, c.df FROM unnest({q(list(dict.fromkeys(grams)))}"
            f"::text[]) AS n(norm) CROSS JOIN LATERAL (SELECT count(*) AS df FROM (SELECT 1"
            f" FROM memory_entities f WHERE f.account_id = {account} AND f.environment ="
            f" {environment} AND f.norm = n.norm LIMIT {q(ENTITY_PER_NAME + 1)}) x) c"
            f" WHERE c.df BETWEEN 1 AND {q(ENTITY_PER_NAME)}),"
            f" hits AS (SELECT n.df, e.memory_id FROM names n JOIN memory_entities e"
            f" ON e.account_id = {account} AND e.environment = {environment}"
            f" AND e.norm = n.norm)"
            f" SELECT m.id, sum(1.0 / h.df) AS score FROM hits h JOIN {view.source()}"
            f" ON m.account_id = {account} AND m.environment = {environment}"
            f" AND m.id = h.memory_id WHERE {view.where(q, actor, kinds)}"
            f" GROUP BY m.id ORDER BY score DESC, m.id LIMIT {q(limit + 1)}", *q.args)
        return _distinct(_hits(rows), limit)

    async def by_kind(self, actor: Actor, view: View, kinds: Sequence[Kind],
                      limit: int) -> list[Hit]:
        """The type leg and routed queries: newest first (score: creation time, epoch s).
        Current memories are read as one ordered index range per kind and visible part
        (memory_entries_by_kind), merged: a page costs the same however many memories
        the account holds."""
        q = Query()
        if view.versions:
            rows = await self._pool.fetch(
                f"SELECT m.id, extract(epoch FROM m.created_at) AS score FROM {view.source()}"
                f" WHERE {view.where(q, actor, kinds)}"
                f" ORDER BY m.created_at DESC, m.id LIMIT {q(limit)}", *q.args)
            return _hits(rows)
        order = "created_at DESC, id"
        pages = [sql.visible_page(q, actor, select="id, created_at", table="memory_entries",
                                  where=[*view.conditions(q, None, alias=""),
                                         f"kind = {q(str(kind))}"], order=order, limit=limit)
                 for kind in kinds]
        rows = await self._pool.fetch(
            f"SELECT id, extract(epoch FROM created_at) AS score FROM"
            f" ({' UNION ALL '.join(f'({page})' for page in pages)}) AS newest"
            f" ORDER BY {order} LIMIT {q(limit)}", *q.args)
        return _hits(rows)

    async def episodes(self, actor: Actor, view: View, kinds: Sequence[Kind], text: str,
                       episodes: int, limit: int) -> tuple[list[EpisodeRow], list[Hit]]:
        """Episodes whose summary sentences match the query (best sentence's ts_rank_cd),
        and the memories their runs produced, ranked by their episode's rank (one
        statement: the episodes' rows, then the memories', each in order)."""
        q = Query()
        query = _tsquery(q, text)
        ep = "ep"
        rows = await self._pool.fetch(
            f"WITH matched AS (SELECT {ep}.id, {ep}.thread_id, {ep}.run_id, {ep}.outcome,"
            f" {ep}.task, {ep}.summary, {ep}.finished_at, max(ts_rank_cd(s.search, query))"
            f" AS score FROM episode_sentences s JOIN episodes {ep}"
            f" ON {ep}.account_id = s.account_id AND {ep}.environment = s.environment"
            f" AND {ep}.id = s.episode_id, {query} query"
            f" WHERE s.account_id = {q(actor.account_id)} AND s.environment ="
            f" {q(actor.environment)} AND s.search @@ query AND {visible(q, actor, ep)}"
            f" AND {ep}.recorded_at <= {q(view.at)}"
            f" GROUP BY {ep}.account_id, {ep}.environment, {ep}.id"
            f" ORDER BY score DESC, {ep}.id LIMIT {q(episodes)}),"
            f" produced AS (SELECT m.id, m.importance, r.score FROM {view.source()} JOIN matched r"
            f" ON m.source_thread_id = r.thread_id AND m.source_run_id = r.run_id"
            f" WHERE {view.where(q, actor, kinds)}"
            f" ORDER BY r.score DESC, m.importance DESC, m.id LIMIT {q(limit)})"
            f" SELECT 0 AS part, row_number() OVER (ORDER BY score DESC, id) AS position, *,"
            f" NULL::uuid AS memory_id FROM matched"
            f" UNION ALL SELECT 1, row_number() OVER (ORDER BY score DESC, importance DESC, id),"
            f" NULL, NULL, NULL, NULL, NULL, NULL, NULL, score, id FROM produced", *q.args)
        rows = sorted(rows, key=lambda r: (r["part"], r["position"]))
        return ([_episode(r, float(r["score"])) for r in rows if r["part"] == 0],
                [Hit(r["memory_id"], float(r["score"])) for r in rows if r["part"] == 1])

    # -- the filter stage and what scoring reads -----------------------------------

    async def resolve(self, actor: Actor, view: View, kinds: Sequence[Kind],
                      vector: Sequence[Hit] | None, graph: GraphWalk | None,
                      others: Sequence[UUID], filters: Filters) -> Resolved:
        """One statement after the legs: the vector hits (``vector``, from the index) the
        caller may see in this view; the graph leg (``graph``: two hops from the first
        seeds of those); and the candidates: every memory found by a leg (those two and
        ``others``) with its signals, when it passes the filters (tags, application,
        creation time). Superseded ones are included and flagged."""
        q = Query()
        account, environment = q(actor.account_id), q(actor.environment)
        on = f" ON m.account_id = {account} AND m.environment = {environment}"
        parts = [f"vector(id, position) AS (SELECT * FROM unnest("
                 f"{q([h.id for h in vector or ()])}::uuid[]) WITH ORDINALITY),"
                 f" verified AS (SELECT m.id, v.position FROM vector v JOIN {view.source()}"
                 f"{on} AND m.id = v.id WHERE {view.where(q, actor, kinds)})"]
        # Each memory found, once, with its rank in the vector and graph legs.
        found = [f"SELECT unnest({q(list(others))}::uuid[]), NULL::bigint, NULL::bigint,"
                 f" NULL::bigint"]
        if vector is not None:
            found.append("SELECT id, position, NULL, NULL FROM verified")
        if graph is not None:
            parts.append(_graph(q, actor, view, kinds, account, environment, graph))
            found.append("SELECT id, NULL, score, position FROM graph")
        parts.append(f"found AS (SELECT id, min(vector_position) AS vector_position,"
                     f" min(graph_score) AS graph_score, min(graph_position) AS graph_position"
                     f" FROM ({' UNION ALL '.join(found)}) AS x(id, vector_position, graph_score,"
                     f" graph_position) GROUP BY id)")
        passes = [f"m.tags @> {q(json.dumps(filters.tags))}::jsonb" if filters.tags else None,
                  f"(m.scope IN ('account', 'user') OR m.agent_id = {q(filters.agent_id)})"
                  if filters.agent_id is not None else None,
                  f"m.created_at > {q(filters.after)}" if filters.after is not None else None,
                  f"m.created_at < {q(filters.before)}" if filters.before is not None else None]
        columns = (f", f.vector_position, f.graph_score, f.graph_position,"
                   f" {' AND '.join(p for p in passes if p) or 'true'} AS passes")
        statement = (f"WITH {', '.join(parts)} " + _select(
            q, actor, view, [view.where(q, actor, kinds), f"m.account_id = {account}",
                             f"m.environment = {environment}"], columns=columns,
            joins=" JOIN found f ON f.id = m.id"))
        rows = await self._pool.fetch(statement, *q.args)
        index_scores = {h.id: h.score for h in vector or ()}
        verified = sorted((r for r in rows if r["vector_position"] is not None),
                          key=lambda r: r["vector_position"])
        walked = sorted((r for r in rows if r["graph_position"] is not None),
                        key=lambda r: r["graph_position"])
        return Resolved(
            [Hit(r["id"], index_scores[r["id"]]) for r in verified],
            _distinct([Hit(r["id"], float(r["graph_score"])) for r in walked],
                      graph.limit if graph is not None else 0),
            {r["id"]: _candidate(r) for r in rows if r["passes"]})

    # -- the fixed sections --------------------------------------------------------

    async def sections(self, actor: Actor, view: View,
                       wanted: Sequence[Section]) -> dict[str, list[Candidate]]:
        """Live memories for the fixed sections, in one statement."""
        q = Query()
        parts = []
        for section in wanted:
            conditions = [view.where(q, actor, section.kinds, platform=section.platform),
                          f"NOT {view.superseded(q)}"]
            if section.owner is not None:
                conditions.append(f"m.owner_user_id = {q(section.owner)}")
            if section.run is not None:
                thread_id, run_id = section.run
                conditions.append(f"m.source_run_id = {q(run_id)}")
                if thread_id:
                    conditions.append(f"m.source_thread_id = {q(thread_id)}")
            select = _select(q, actor, view, conditions, label=q(section.name))
            parts.append(f"({select} ORDER BY {section.order} LIMIT {q(section.limit)})")
        rows = await self._pool.fetch(" UNION ALL ".join(parts), *q.args)
        found: dict[str, list[Candidate]] = {section.name: [] for section in wanted}
        for row in rows:
            found[row["section"]].append(_candidate(row))
        return found

    async def run_episode(self, actor: Actor, thread_id: str | None,
                          run_id: str) -> EpisodeRow | None:
        q = Query()
        condition = f"ep.run_id = {q(run_id)}"
        if thread_id:
            condition += f" AND ep.thread_id = {q(thread_id)}"
        row = await self._pool.fetchrow(
            f"SELECT ep.id, ep.thread_id, ep.run_id, ep.outcome, ep.task, ep.summary,"
            f" ep.finished_at FROM episodes ep WHERE {visible(q, actor, 'ep')} AND {condition}"
            f" ORDER BY ep.finished_at DESC LIMIT 1", *q.args)
        return None if row is None else _episode(row)

    # -- receipts and credit -------------------------------------------------------

    async def save_receipt(self, actor: Actor, receipt: Receipt, quota: int) -> None:
        """The receipt, its items, and the delivered memories' usage counters, in one
        statement (so counters move exactly when a receipt exists), if the account's
        receipts of the day are within ``quota``; RESOURCE_EXHAUSTED otherwise."""
        scope, owner = _owner(actor)
        items = receipt.items
        made = await self._pool.fetchval(
            "WITH u AS (INSERT INTO account_daily_usage (account_id, day, receipts)"
            " VALUES ($1, ($14::timestamptz AT TIME ZONE 'UTC')::date, 1)"
            " ON CONFLICT (account_id, day) DO UPDATE"
            " SET receipts = account_daily_usage.receipts + 1 RETURNING receipts),"
            " r AS (INSERT INTO retrieval_receipts (account_id, environment, id, scope,"
            " agent_id, owner_user_id, run_id, thread_id, query, mode, token_budget, tokens_used,"
            " sections, created_at) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,"
            " $13::jsonb, $14 FROM u WHERE u.receipts <= $20 RETURNING id),"
            " i AS (INSERT INTO retrieval_receipt_items (account_id, environment, receipt_id,"
            " memory_id, version, section, position, tokens) SELECT $1, $2, r.id, x.memory_id,"
            " x.version, x.section, x.position, x.tokens FROM r, unnest($15::uuid[],"
            " $16::int[], $17::text[], $18::int[], $19::int[]) AS x(memory_id, version, section,"
            " position, tokens)),"
            " c AS (UPDATE memory_entries SET recall_count = recall_count + 1,"
            " last_recalled_at = $14 WHERE account_id = $1 AND environment = $2"
            " AND id = ANY($15::uuid[]) AND EXISTS (SELECT 1 FROM r))"
            " SELECT receipts FROM u",
            actor.account_id, actor.environment, receipt.id, scope, actor.agent_id, owner,
            receipt.run_id, receipt.thread_id, receipt.query, receipt.mode, receipt.token_budget,
            receipt.tokens_used, json.dumps(receipt.sections), receipt.created_at,
            [i.memory_id for i in items], [i.version for i in items],
            [i.section for i in items], [i.position for i in items], [i.tokens for i in items],
            quota)
        if made > quota:
            raise quota_exceeded("receipts_per_day", quota,
                                 f"the account made {quota} compiled contexts today (UTC)")

    async def receipt(self, actor: Actor, receipt_id: UUID) -> Receipt | None:
        q = Query()
        row = await self._pool.fetchrow(
            f"SELECT r.* FROM retrieval_receipts r WHERE {visible(q, actor, 'r')}"
            f" AND r.id = {q(receipt_id)}", *q.args)
        if row is None:
            return None
        items = await self._pool.fetch(
            "SELECT memory_id, version, section, position, tokens FROM retrieval_receipt_items"
            " WHERE account_id = $1 AND environment = $2 AND receipt_id = $3 ORDER BY position",
            actor.account_id, actor.environment, receipt_id)
        return Receipt(row["id"], row["run_id"], row["thread_id"], row["query"], row["mode"],
                       row["token_budget"], row["tokens_used"], json.loads(row["sections"]),
                       row["created_at"],
                       [ReceiptItem(i["memory_id"], i["version"], i["section"], i["position"],
                                    i["tokens"]) for i in items])

    async def credit(self, actor: Actor, receipt_id: UUID, request_id: str, request_hash: str,
                     kind: str, value: str, memory_ids: Sequence[UUID],
                     counters: dict[str, int], now: datetime) -> tuple[str, list[UUID]] | None:
        """Record a credit once per (receipt, request id) and add ``counters`` to each
        memory's utility. Returns None when recorded now, else the earlier request's
        (hash, memory ids), untouched."""
        async with self._pool.acquire() as connection, connection.transaction():
            inserted = await connection.fetchval(
                "INSERT INTO retrieval_credits (account_id, environment, receipt_id, request_id,"
                " request_hash, kind, value, memory_ids, created_at) VALUES ($1, $2, $3, $4, $5,"
                " $6, $7, $8, $9) ON CONFLICT DO NOTHING RETURNING true",
                actor.account_id, actor.environment, receipt_id, request_id, request_hash, kind,
                value, list(memory_ids), now)
            if not inserted:
                row = postgres.one_row(await connection.fetchrow(
                    "SELECT request_hash, memory_ids FROM retrieval_credits WHERE account_id = $1"
                    " AND environment = $2 AND receipt_id = $3 AND request_id = $4",
                    actor.account_id, actor.environment, receipt_id, request_id))
                return row["request_hash"], list(row["memory_ids"])
            columns = ("helpful", "unhelpful", "successes", "failures")
            values = [counters.get(c, 0) for c in columns]
            await connection.execute(
                "INSERT INTO memory_utility (account_id, environment, memory_id, helpful,"
                " unhelpful, successes, failures, updated_at) SELECT $1, $2, m.id, $4, $5, $6, $7,"
                " $8 FROM memory_entries m WHERE m.account_id = $1 AND m.environment = $2"
                " AND m.id = ANY($3::uuid[]) ON CONFLICT (account_id, environment, memory_id) DO"
                " UPDATE SET helpful = memory_utility.helpful + $4, unhelpful ="
                " memory_utility.unhelpful + $5, successes = memory_utility.successes + $6,"
                " failures = memory_utility.failures + $7, updated_at = $8",
                actor.account_id, actor.environment, list(memory_ids), *values, now)
            return None

    # -- episodes ------------------------------------------------------------------

    async def save_episode(self, actor: Actor, episode: EpisodeRow, sentences: Sequence[str],
                           now: datetime) -> EpisodeRow:
        """Insert or replace the episode of (agent, thread, run) with its sentences."""
        scope, owner = _owner(actor)
        async with self._pool.acquire() as connection, connection.transaction():
            row = postgres.one_row(await connection.fetchrow(
                "INSERT INTO episodes (account_id, environment, id, scope, agent_id, owner_user_id,"
                " thread_id, run_id, outcome, task, summary, finished_at, recorded_at) VALUES"
                " ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
                " ON CONFLICT (account_id, environment, agent_id, thread_id, run_id) DO UPDATE"
                " SET scope = $4, owner_user_id = $6, outcome = $9, task = $10, summary = $11,"
                " finished_at = $12, recorded_at = $13"
                " RETURNING id, thread_id, run_id, outcome, task, summary, finished_at",
                actor.account_id, actor.environment, episode.id, scope, actor.agent_id, owner,
                episode.thread_id, episode.run_id, episode.outcome, episode.task,
                episode.summary, episode.finished_at, now))
            await connection.execute(
                "DELETE FROM episode_sentences WHERE account_id = $1 AND environment = $2"
                " AND episode_id = $3", actor.account_id, actor.environment, row["id"])
            await connection.execute(
                "INSERT INTO episode_sentences (account_id, environment, episode_id, position,"
                " sentence) SELECT $1, $2, $3, p, s FROM unnest($4::text[]) WITH ORDINALITY"
                " AS x(s, p)", actor.account_id, actor.environment, row["id"], list(sentences))
            return _episode(row)
