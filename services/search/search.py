"""SearchMessages: BM25 over stemmed terms, computed in ClickHouse SQL.

The caller's scope is in every statement: account and agent, and for
user-owned threads the caller's user (``owner_user_id = '' OR = caller``).
Corpus statistics (document count, average length, document frequencies)
come from the same scope, so nothing about other tenants leaks even into the
scores. Scoring reads only the postings of the query's terms. Score: sum over query terms of
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


@dataclass(frozen=True)
class _Statements:
    size: str  # messages in scope and their average length
    frequencies: str  # document frequency of each query term
    ranked: str  # BM25 per message over the query terms' postings, best first
    fetch: str  # what the hits show


def _statements(database: str, current_thread: bool) -> _Statements:
    """Each statement reads a primary-key range: the scope's messages, or the postings
    of the query's own terms. ``term IN`` is what lets ClickHouse use the key."""
    scope = _SCOPE + (_THREAD if current_thread else "")
    terms = "term IN {terms:Array(UInt64)}"
    idf = ("log(1 + ({n:UInt64} - df) / (df + 0.5) + 0.5 / (df + 0.5))")
    return _Statements(
        size=f"SELECT count() AS n, avg(length) AS avgdl FROM {database}.messages FINAL"
             f" WHERE {scope}",
        frequencies=f"SELECT term, count() AS df FROM {database}.postings FINAL"
                    f" WHERE {scope} AND {terms} GROUP BY term",
        ranked=f"""SELECT thread_id, offset, max(created_at_ms) AS created_at_ms,
  sum({idf} * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / {{avgdl:Float64}}))) AS score
FROM (SELECT thread_id, offset, created_at_ms, tf, length,
             transform(term, {{df_terms:Array(UInt64)}}, {{dfs:Array(UInt64)}}, toUInt64(0)) AS df
      FROM {database}.postings FINAL WHERE {scope} AND {terms})
GROUP BY thread_id, offset
ORDER BY score DESC, created_at_ms DESC, thread_id, offset
LIMIT {{limit:UInt32}}""",
        fetch=f"SELECT thread_id, message_id, offset, role, content, created_at_ms"
              f" FROM {database}.messages FINAL WHERE {_SCOPE}"
              " AND thread_id IN {threads:Array(String)} AND offset IN {offsets:Array(UInt64)}",
    )


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
        statements = _statements(self._database, scope == Scope.CURRENT_THREAD)
        ids = analyzer.term_ids(wanted)
        params = {"account": principal.account_id, "agent": principal.agent_id,
                  "user": principal.user_id or "", "terms": ids}
        if scope == Scope.CURRENT_THREAD:
            params["thread"] = thread_id
        size, frequencies = await asyncio.gather(
            self._clickhouse.query(statements.size, params),
            self._clickhouse.query(statements.frequencies, params))
        found = {int(r["term"]): int(r["df"]) for r in frequencies}
        if int(size[0]["n"]) == 0 or not found:
            return []
        ranked = await self._clickhouse.query(statements.ranked, {
            **params, "n": int(size[0]["n"]), "avgdl": float(size[0]["avgdl"]),
            "df_terms": list(found), "dfs": list(found.values()), "limit": limit})
        if not ranked:
            return []
        shown = await self._clickhouse.query(statements.fetch, {
            **params, "threads": sorted({r["thread_id"] for r in ranked}),
            "offsets": sorted({int(r["offset"]) for r in ranked})})
        messages = {(m["thread_id"], int(m["offset"])): m for m in shown}
        hits = []
        for r in ranked:
            message = messages.get((r["thread_id"], int(r["offset"])))
            if message is not None:
                hits.append(Hit(r["thread_id"], message["message_id"], int(r["offset"]),
                                message["role"], analyzer.snippet(message["content"], wanted),
                                int(message["created_at_ms"]), float(r["score"]),
                                message["content"]))
        return hits

    async def purge(self, principal: Principal, thread_id: str) -> None:
        """Delete a thread's rows (mutations: ClickHouse applies them in the background)."""
        params = {"account": principal.account_id, "agent": principal.agent_id,
                  "user": principal.user_id or "", "thread": thread_id}
        for table in ("postings", "messages"):
            await self._clickhouse.execute(
                f"ALTER TABLE {self._database}.{table} DELETE WHERE {_SCOPE}{_THREAD}", params)

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
