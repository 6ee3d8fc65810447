"""SearchMessages: BM25 and the dense leg, fused by reciprocal rank; match summaries.

The keyword leg (``keyword``) ranks by BM25 over stemmed terms; the dense leg
(``dense``) by the similarity of message embeddings to the query's. Hybrid
ranking fuses each leg's ``FUSION_DEPTH`` best by reciprocal rank, times each
message's length prior (``fusion``); keyword ranking is BM25 alone. Both legs,
the statistics and the fetch of what hits show stay inside the caller's scope
(``tenancy``).

A keyword search is one ranking statement and, in a large scope, one fetch of
what the hits show (a small scope's ranking reads them; the scope's size is
cached, see ``keyword``); a hybrid one adds the dense statement, and embeds the
query while ClickHouse ranks by keywords. Each leg names its messages' lengths
(the fusion's length prior), and only the hits the ranking has not read
already are fetched, in one statement. A small scope searched lately is kept
in process (``hot_scopes``): both legs then rank there, with the same order,
and the search runs no ranking or fetch statement. A large scope searched
lately has its agent's vectors loaded in process (``hot_vectors``): the dense
leg then ranks there, with the same order, and ClickHouse runs the keyword
statement and the fetch.
When the embedder fails (or hybrid is asked of a service that does not embed),
BM25 answers alone and the result says so (``fallback``): search never fails
because of the dense leg. A query made only of stop words matches nothing in
either mode.

With ``rerank``, the local cross-encoder reorders the best of the ranking
(``Searcher.search``).

With ``summarize``, each matching thread gets one utility-model call (or the
labelled offline summary) about its matches.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from libs.errors import Unavailable
from libs.identity import Principal
from libs.model import ChatModel, Prompt
from libs.reranker import Reranking
from services.search import fusion, tenancy
from services.search import terms as analyzer
from services.search.clickhouse import ClickHouse
from services.search.dense import DenseIndex
from services.search.hot_scopes import HotScopes
from services.search.hot_vectors import HotVectors
from services.search.keyword import Key, KeywordLeg, Ranking, ScopeSizes

logger = logging.getLogger(__name__)

PROMPT = Prompt(Path(__file__).parent / "prompts" / "matches.v1.md")
OFFLINE_GENERATOR = "offline-extractive-v1"
SUMMARY_CONCURRENCY = 4
MAX_QUERY_TERMS = 16
FUSION_DEPTH = 20  # ranks each leg contributes to the fusion (tuned: bench/search_quality.py)


class Scope(enum.Enum):
    CURRENT_THREAD = "current_thread"
    ALL_THREADS = "all_threads"


class Mode(enum.Enum):
    KEYWORD = "keyword"
    HYBRID = "hybrid"


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
class Result:
    hits: list[Hit]
    fallback: bool  # hybrid was due, but BM25 answered alone
    reranked: bool = False


@dataclass(frozen=True)
class ThreadSummary:
    thread_id: str
    summary: str
    generator: str


class Searcher:
    def __init__(self, clickhouse: ClickHouse, database: str, model: ChatModel | None,
                 dense: DenseIndex | None = None,
                 hot_scope_messages: int = 0, hot_vector_messages: int = 0,
                 follows_feed: bool = True, reranking: Reranking | None = None) -> None:
        self._clickhouse = clickhouse
        self.reranking = reranking  # bench/search_quality.py --pools sizes its pool
        self._database = database
        self._model = model
        self.keyword = KeywordLeg(clickhouse, database)
        self.sizes = ScopeSizes(clickhouse, database)
        self.hot_scopes = HotScopes(clickhouse, database,
                                    dense.table if dense is not None else None,
                                    hot_scope_messages)
        self.hot_vectors = HotVectors(clickhouse, database, dense, hot_vector_messages,
                                      written_through=follows_feed) \
            if dense is not None else None
        self.dense = dense
        self.fusion_depth = FUSION_DEPTH
        self.rrf_k = fusion.K
        self.length_prior = True  # bench/search_quality.py --sweep compares without

    @property
    def default_mode(self) -> Mode:
        return Mode.HYBRID if self.dense is not None else Mode.KEYWORD

    async def search(self, principal: Principal, query: str, scope: Scope,
                     thread_id: str | None, limit: int, mode: Mode | None = None,
                     rerank: bool = False) -> Result:
        """With ``rerank`` (and the local cross-encoder), the best ``pool`` of the ranking
        are put in the cross-encoder's order before the limit is taken."""
        reranking = self.reranking if rerank else None
        ranked = await self._ranked(principal, query, scope, thread_id,
                                    max(limit, reranking.pool) if reranking else limit, mode)
        if reranking is None or not ranked.hits:
            return Result(ranked.hits[:limit], ranked.fallback)
        ordered, _ = await reranking.reorder(query, ranked.hits, lambda h: h.content)
        return Result(ordered[:limit], ranked.fallback, reranked=True)

    async def _ranked(self, principal: Principal, query: str, scope: Scope,
                      thread_id: str | None, limit: int, mode: Mode | None) -> Result:
        wanted = analyzer.query_terms(query)[:MAX_QUERY_TERMS]
        if not wanted:
            return Result([], False)
        hybrid = (mode or self.default_mode) is Mode.HYBRID
        current = scope == Scope.CURRENT_THREAD
        params = tenancy.parameters(principal, thread_id if current else None)
        embedding = (asyncio.ensure_future(self.dense.embed_query(query))
                     if hybrid and self.dense is not None else None)
        try:
            ranking, fallback, shown = await self._ranking(params, wanted, current, limit,
                                                           hybrid, embedding)
        finally:
            if embedding is not None and not embedding.done():
                embedding.cancel()
        return Result(await self._hits(params, ranking[:limit], wanted, shown), fallback)

    async def _ranking(self, params: dict[str, Any], wanted: list[str], current: bool,
                       limit: int, hybrid: bool, embedding: asyncio.Future | None,
                       ) -> tuple[list[tuple[Key, float]], bool, dict[Key, dict]]:
        size = await self.sizes.get(params, current)
        if not size.messages:
            return [], False, {}
        depth = max(limit, self.fusion_depth) if hybrid else limit
        # A hot small scope ranks in process (no ranking or fetch statement), the same
        # legs' same order: only where ClickHouse too ranks the dense leg exactly.
        exact = self.dense is None or size.messages <= self.dense.exact_up_to
        hot = await self.hot_scopes.get(params, current, size) \
            if self.keyword.is_small(size) and exact else None
        keyword_ranked = hot.keyword_ranked if hot is not None else self.keyword.ranked
        dense_ranked = hot.dense_ranked if hot is not None else \
            self.dense.ranked if self.dense is not None else None
        if hot is None and hybrid and not exact and self.hot_vectors is not None:
            # A large scope: its agent's vectors, once held here, rank the dense leg.
            vectors = self.hot_vectors.get(params, size)
            if vectors is not None:
                dense_ranked = vectors.dense_ranked
        keyword: Ranking = await keyword_ranked(params, size, analyzer.term_ids(wanted),
                                                current, depth)
        bm25 = [(r.key, r.score) for r in keyword.ranked]
        if not hybrid:
            return bm25, False, keyword.shown
        if embedding is None or dense_ranked is None:  # hybrid asked of one that does not embed
            return bm25, True, keyword.shown
        try:
            dense = await dense_ranked(params, await embedding, current, depth,
                                       size.messages)
        except Unavailable as exc:
            logger.warning("dense leg unavailable, BM25 answers alone: %s", exc.message)
            return bm25, True, keyword.shown
        legs = [[r.key for r in keyword.ranked], [r.key for r in dense]]
        lengths = {r.key: r.length for leg in (keyword.ranked, dense) for r in leg}
        average = size.average_length

        def prior(key: Key) -> float:
            return fusion.length_prior(lengths[key], average)

        return (fusion.reciprocal_rank(legs, self.rrf_k, prior if self.length_prior else None),
                False, keyword.shown)

    async def _hits(self, params: dict[str, Any], ranking: list[tuple[Key, float]],
                    wanted: list[str], shown: dict[Key, dict]) -> list[Hit]:
        """What each ranked message shows, in rank order: the rows the ranking read, and
        one fetch of the others by their exact (thread, offset) pairs, which the primary
        key prunes by (replayed rows collapse here)."""
        missing = [key for key, _ in ranking if key not in shown]
        messages = shown
        if missing:
            fetched = await self._clickhouse.query(
                "SELECT thread_id, message_id, offset, role, content, created_at_ms"
                f" FROM {self._database}.messages WHERE {tenancy.condition(False)}"
                " AND (thread_id, offset) IN {keys:Array(Tuple(String, UInt64))}",
                {**params, "keys": sorted(missing)})
            messages = shown | {(m["thread_id"], int(m["offset"])): m for m in fetched}
        hits = []
        for key, score in ranking:
            message = messages.get(key)
            if message is not None:
                hits.append(Hit(key[0], message["message_id"], key[1], message["role"],
                                analyzer.snippet(message["content"], wanted),
                                int(message["created_at_ms"]), score, message["content"]))
        return hits

    async def purge(self, principal: Principal, thread_id: str) -> None:
        """Delete a thread's rows (mutations: ClickHouse applies them in the background)
        from every table, vectors of earlier layouts and other embedders included."""
        vectors = await self._clickhouse.query(
            "SELECT name FROM system.tables WHERE database = {database:String}"
            " AND startsWith(name, 'vectors_')", {"database": self._database})
        tables = [r["name"] for r in vectors] + ["postings", "threads", "messages"]
        try:
            for table in tables:
                await self._clickhouse.execute(
                    f"ALTER TABLE {self._database}.{table} DELETE"
                    f" WHERE {tenancy.condition(True)}", tenancy.parameters(principal, thread_id))
        finally:
            self.forget(principal.account_id, principal.agent_id)

    def forget(self, account: str, agent: str) -> None:
        """After a purge in ``account``/``agent``: what this process holds of it (scope
        sizes, hot scopes, hot vectors) is read afresh."""
        self.sizes.forget(account, agent)
        self.hot_scopes.forget(account, agent)
        if self.hot_vectors is not None:
            self.hot_vectors.forget(account, agent)

    def projected(self, account: str, agent: str, rows: Sequence[tuple]) -> None:
        """The keyword projector of this process wrote message ``rows``
        (``MESSAGE_COLUMNS``) to ``account``/``agent``: the scope sizes there are read
        afresh, and the rows join the hot scopes they belong to."""
        self.sizes.forget(account, agent)
        self.hot_scopes.written(account, agent, "messages", list(rows))

    def embedded(self, account: str, agent: str, rows: Sequence[tuple]) -> None:
        """The dense projector of this process wrote ``rows`` (``VECTOR_COLUMNS``) to
        ``account``/``agent``: they join its hot scopes and hot vectors."""
        self.hot_scopes.written(account, agent, "vectors", list(rows))
        if self.hot_vectors is not None:
            self.hot_vectors.embedded(account, agent, rows)

    async def close(self) -> None:
        """Stops the hot vectors' loads and checks under way."""
        if self.hot_vectors is not None:
            await self.hot_vectors.close()

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
