"""SearchMessages: BM25 over stemmed terms, computed in ClickHouse SQL.

The caller's scope is in every statement: account and agent, and for
user-owned threads the caller's user (``owner_user_id = '' OR = caller``).
Corpus statistics (document count, average length, document frequencies)
come from the same scope, so nothing about other tenants leaks even into the
scores. Score: sum over query terms of
``idf x tf x (k1 + 1) / (tf + k1 x (1 - b + b x length / avgdl))`` with
``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, k1 = 1.2, b = 0.75; ties go to
the newer message. With ``summarize``, each matching thread gets one
utility-model call (or the labelled offline summary) about its matches.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from libs.identity import Principal
from libs.model import ChatModel, Prompt
from services.search import terms as analyzer
from services.search.clickhouse import ClickHouse

PROMPT = Prompt(Path(__file__).parent / "prompts" / "matches.v1.md")
OFFLINE_GENERATOR = "offline-extractive-v1"
SUMMARY_CONCURRENCY = 4
MAX_QUERY_TERMS = 16

_SCOPE = ("account_id = {account:String} AND agent_id = {agent:String}"
          " AND (owner_user_id = '' OR owner_user_id = {user:String})")
_THREAD = " AND thread_id = {thread:String}"


class Scope(enum.Enum):
    CURRENT_THREAD = "current_thread"
    ALL_THREADS = "all_threads"


@dataclass(frozen=True)
class Hit:
    thread_id: str
    message_id: str
    offset: int
    role: str
    snippet: str
    created_at_ms: int
    score: float
    content: str


@dataclass(frozen=True)
class ThreadSummary:
    thread_id: str
    summary: str
    generator: str


def _statements(database: str, current_thread: bool, term_count: int) -> tuple[str, str]:
    """The statistics and ranking statements for ``term_count`` query terms.

    Terms are unrolled into numbered parameters (``t0``, ``t1``, ...) rather than
    mapped with a lambda, which keeps each statement a single pass and lets old
    servers run it too."""
    scope = _SCOPE + (_THREAD if current_thread else "")
    table = f"{database}.messages FINAL"
    counts = "".join(f", countIf(has(terms, {{t{i}:UInt64}})) AS df{i}" for i in range(term_count))
    statistics = f"SELECT count() AS n, avg(length) AS avgdl{counts} FROM {table} WHERE {scope}"
    norm = "1.2 * (0.25 + 0.75 * length / {avgdl:Float64})"
    parts = [
        f"log(1 + ({{n:UInt64}} - {{df{i}:UInt64}} + 0.5) / ({{df{i}:UInt64}} + 0.5))"
        f" * countEqual(terms, {{t{i}:UInt64}}) * 2.2 / (countEqual(terms, {{t{i}:UInt64}}) + {norm})"
        for i in range(term_count)
    ]
    ranked = (f"SELECT thread_id, message_id, offset, role, content, created_at_ms,"
              f" {' + '.join(parts)} AS score FROM {table}"
              f" WHERE {scope} AND hasAny(terms, {{terms:Array(UInt64)}})"
              " ORDER BY score DESC, created_at_ms DESC, thread_id, offset"
              " LIMIT {limit:UInt32}")
    return statistics, ranked


class Searcher:
    def __init__(self, clickhouse: ClickHouse, database: str, model: ChatModel | None) -> None:
        self._clickhouse = clickhouse
        self._database = database
        self._model = model

    async def search(self, principal: Principal, query: str, scope: Scope,
                     thread_id: str | None, limit: int) -> list[Hit]:
        wanted = analyzer.query_terms(query)[:MAX_QUERY_TERMS]
        if not wanted:
            return []
        statistics_sql, ranked_sql = _statements(self._database, scope == Scope.CURRENT_THREAD,
                                                 len(wanted))
        ids = analyzer.term_ids(wanted)
        params = {"account": principal.account_id, "agent": principal.agent_id,
                  "user": principal.user_id or "", "terms": ids,
                  **{f"t{i}": term for i, term in enumerate(ids)}}
        if scope == Scope.CURRENT_THREAD:
            params["thread"] = thread_id
        statistics = (await self._clickhouse.query(statistics_sql, params))[0]
        if int(statistics["n"]) == 0:
            return []
        rows = await self._clickhouse.query(ranked_sql, {
            **params, "n": int(statistics["n"]), "avgdl": float(statistics["avgdl"]),
            **{f"df{i}": int(statistics[f"df{i}"]) for i in range(len(wanted))},
            "limit": limit})
        return [Hit(r["thread_id"], r["message_id"], int(r["offset"]), r["role"],
                    analyzer.snippet(r["content"], wanted), int(r["created_at_ms"]),
                    float(r["score"]), r["content"]) for r in rows]

    async def purge(self, principal: Principal, thread_id: str) -> None:
        """Delete a thread's rows (a mutation: ClickHouse applies it in the background)."""
        await self._clickhouse.execute(
            f"ALTER TABLE {self._database}.messages DELETE WHERE {_SCOPE}{_THREAD}",
            {"account": principal.account_id, "agent": principal.agent_id,
             "user": principal.user_id or "", "thread": thread_id})

    async def summarize(self, query: str, hits: Sequence[Hit]) -> list[ThreadSummary]:
        """One summary per matching thread, in the order threads first appear in the hits."""
        threads: dict[str, list[Hit]] = {}
        for hit in hits:
            threads.setdefault(hit.thread_id, []).append(hit)
        gate = asyncio.Semaphore(SUMMARY_CONCURRENCY)

        async def one(thread_id: str, matches: list[Hit]) -> ThreadSummary:
            ordered = sorted(matches, key=lambda h: h.offset)
            async with gate:
                return await self._summarize_thread(query, thread_id, ordered)

        return list(await asyncio.gather(*(one(t, m) for t, m in threads.items())))

    async def _summarize_thread(self, query: str, thread_id: str,
                                matches: list[Hit]) -> ThreadSummary:
        if self._model is None:
            lines = [f"{h.role} (#{h.offset}): {h.snippet}" for h in matches[:3]]
            text = f"{len(matches)} matching message(s) for '{query}'. " + " | ".join(lines)
            return ThreadSummary(thread_id, text, OFFLINE_GENERATOR)
        transcript = "\n".join(f"{h.role} (#{h.offset}): {h.content[:2000]}" for h in matches)
        reply = await self._model.complete(
            PROMPT.text, f"<query>{query}</query>\n<messages>\n{transcript}\n</messages>",
            max_tokens=200)
        return ThreadSummary(thread_id, reply, f"{self._model.name} ({PROMPT.id})")
