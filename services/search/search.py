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


def _statements(database: str, current_thread: bool) -> tuple[str, str, str]:
    scope = _SCOPE + (_THREAD if current_thread else "")
    table = f"{database}.messages FINAL"
    size = f"SELECT count() AS n, avg(length) AS avgdl FROM {table} WHERE {scope}"
    frequencies = (f"SELECT qt AS term, count() AS df FROM {table}"
                   f" ARRAY JOIN {{terms:Array(String)}} AS qt"
                   f" WHERE {scope} AND has(terms, qt) GROUP BY qt")
    ranked = f"""SELECT thread_id, message_id, offset, role, content, created_at_ms,
  sum(log(1 + ({{n:UInt64}} - df + 0.5) / (df + 0.5)) * tf * 2.2
      / (tf + 1.2 * (0.25 + 0.75 * length / {{avgdl:Float64}}))) AS score
FROM (
  SELECT thread_id, message_id, offset, role, content, created_at_ms, length,
         countEqual(terms, qt) AS tf,
         arrayElement({{df:Array(UInt64)}}, indexOf({{terms:Array(String)}}, qt)) AS df
  FROM {table}
  ARRAY JOIN {{terms:Array(String)}} AS qt
  WHERE {scope} AND has(terms, qt)
)
GROUP BY thread_id, message_id, offset, role, content, created_at_ms
ORDER BY score DESC, created_at_ms DESC, thread_id, offset
LIMIT {{limit:UInt32}}"""
    return size, frequencies, ranked


class Searcher:
    def __init__(self, clickhouse: ClickHouse, database: str, model: ChatModel | None) -> None:
        self._clickhouse = clickhouse
        self._database = database
        self._model = model

    async def search(self, principal: Principal, query: str, scope: Scope,
                     thread_id: str | None, limit: int) -> list[Hit]:
        wanted = analyzer.query_terms(query)
        if not wanted:
            return []
        size_sql, frequencies_sql, ranked_sql = _statements(
            self._database, scope == Scope.CURRENT_THREAD)
        params = {"account": principal.account_id, "agent": principal.agent_id,
                  "user": principal.user_id or "", "terms": wanted}
        if scope == Scope.CURRENT_THREAD:
            params["thread"] = thread_id
        size = (await self._clickhouse.query(size_sql, params))[0]
        if int(size["n"]) == 0:
            return []
        found = {r["term"]: int(r["df"]) for r in await self._clickhouse.query(frequencies_sql,
                                                                               params)}
        rows = await self._clickhouse.query(ranked_sql, {
            **params, "n": int(size["n"]), "avgdl": float(size["avgdl"]),
            "df": [found.get(term, 0) for term in wanted], "limit": limit})
        return [Hit(r["thread_id"], r["message_id"], int(r["offset"]), r["role"],
                    analyzer.snippet(r["content"], wanted), int(r["created_at_ms"]),
                    float(r["score"]), r["content"]) for r in rows]

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
