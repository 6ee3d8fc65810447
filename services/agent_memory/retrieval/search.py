"""Search (seed steps 1-6): route or run the legs, fuse, filter, score, threshold, rerank.

Legs run concurrently (``asyncio.gather``), each timed:

- vector: the query's dense embedding (recent queries' vectors are cached by
  the embedder) against the Qdrant index (dense leg only, cosine), under the
  caller's visibility as a payload filter, then re-checked in PostgreSQL
  (visibility and the view);
- fulltext (the keyword leg): BM25 from the index, over the same sparse
  vectors ``memory_recall`` keeps (lower-cased, English stop words out,
  Snowball-stemmed, Qdrant's IDF), under the same payload filter; memories
  written since the projector last ran are matched in PostgreSQL
  (``ts_rank_cd``) and ranked after them; PostgreSQL answers alone when the
  index cannot, and for reads as of a past time (the index holds only live
  memories);
- entity: memories naming the query's entities (extracted at write time);
- episode: sentences of past runs' summaries matching the query, mapped to
  the memories those runs produced;
- graph: two hops from the top 5 vector hits (memory -> entity -> memory, and
  the memories they superseded);
- type: the newest memories of the kinds the query names.

The vector leg's re-check, the graph leg (which needs it) and the loading of
every candidate with the filters applied are one statement, run once the
other legs and the index have answered: the steps after the index cost one
round trip to PostgreSQL, not three.

A query of at most five words naming one kind skips the legs: routed to that
kind's list, newest first. An empty query searches nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from uuid import UUID

from libs.embeddings import Embedder
from libs.model import ChatModel
from libs.reranker import Reranking
from services.agent_memory import index as vector_index
from services.agent_memory.index import IndexFilter, IndexHit, VectorIndex, sparse
from services.agent_memory.memories import entities, rules
from services.agent_memory.memories.model import Actor
from services.agent_memory.memories.recall import rerank_text
from services.agent_memory.retrieval import fusion, params, rerank, scoring
from services.agent_memory.retrieval.model import Candidate, EpisodeRow, Filters, GraphWalk, Hit
from services.agent_memory.retrieval.request import Mode, RetrieveRequest
from services.agent_memory.retrieval.store import RetrievalStore
from services.agent_memory.retrieval.view import View

logger = logging.getLogger(__name__)

SEARCHED = tuple(k for k in rules.RECALLABLE if k != rules.Kind.ARTIFACT_REF)


@dataclass(frozen=True)
class LegReport:
    leg: str
    candidates: int
    elapsed_ms: float
    weight: float


@dataclass(frozen=True)
class Reranked:
    status: str  # skipped | unavailable | applied | failed
    scores: dict[UUID, float] = field(default_factory=dict)


@dataclass(frozen=True)
class VectorSearch:
    hits: list[Hit]  # the index's, in its order, not yet checked against PostgreSQL
    elapsed_ms: float  # embedding and index query


@dataclass(frozen=True)
class Collected:
    """Each leg's hits (by leg name) and the candidates among them that pass the filters."""

    results: dict[str, list[Hit]]
    candidates: dict[UUID, Candidate]


@dataclass
class SearchOutcome:
    kept: list[scoring.Scored] = field(default_factory=list)
    hidden_superseded: int = 0
    threshold: float = 0.0
    adaptive: bool = True
    route: str = ""
    legs: list[LegReport] = field(default_factory=list)
    fused: int = 0
    filtered: int = 0
    episodes: list[EpisodeRow] = field(default_factory=list)
    reranked: Reranked = field(default_factory=lambda: Reranked("skipped"))
    query_parsing: str = "skipped"
    timings: dict[str, float] = field(default_factory=dict)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


class Searcher:
    def __init__(self, store: RetrievalStore, index: VectorIndex, embedder: Embedder,
                 model: ChatModel | None, local_rerank: Reranking | None = None) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder
        self._model = model
        self._local = local_rerank

    async def search(self, actor: Actor, request: RetrieveRequest, view: View) -> SearchOutcome:
        outcome = SearchOutcome(adaptive=request.min_score is None)
        if not request.query:
            return outcome
        found = await self.collect(actor, request, view, outcome)
        started = time.perf_counter()
        fused = fusion.rrf(found.results, request.overrides.leg_weights,
                           request.overrides.rrf_k)
        outcome.timings["fusion"] = _ms(started)
        outcome.fused = len(fused)
        started = time.perf_counter()
        local = self._local if request.wants_rerank and self._model is None else None
        rank(fused, found.candidates, request, view, outcome,
             keep=max(request.top_n, local.pool) if local is not None else None)
        outcome.timings["score"] = _ms(started)
        if local is not None:
            await self._rerank_locally(local, request, outcome)
        elif request.wants_rerank:
            await self._rerank(request, outcome)
        return outcome

    async def collect(self, actor: Actor, request: RetrieveRequest, view: View,
                      outcome: SearchOutcome) -> Collected:
        """Every leg's hits (routed: the type list alone) and the candidates they name."""
        depth = params.leg_depth(request.top_n)
        weights = request.overrides.leg_weights
        filters = Filters(request.tags, request.agent_id, request.temporal_after,
                          request.temporal_before)
        routed = fusion.route(request.query)
        if routed is not None:
            outcome.route = f"type:{routed}"
            results = await self._legs(outcome, {"type": lambda: self._store.by_kind(
                actor, view, [routed], depth)}, weights)
            return await self._resolve(actor, view, results, None, None, filters, outcome,
                                       weights)
        text, grams, kinds = request.query, entities.query_grams(request.query), \
            fusion.named_kinds(request.query)
        if request.mode == Mode.ASSISTED:
            parsed = await self._parse(request.query, outcome)
            if parsed is not None:
                text = " ".join([text, *parsed.keywords])
                grams += [g for name in parsed.entities for g in entities.query_grams(name)]
                kinds = list(dict.fromkeys([*kinds, *(k for k in parsed.kinds if k in SEARCHED)]))

        async def episode() -> list[Hit]:
            found, hits = await self._store.episodes(actor, view, SEARCHED, text,
                                                     params.EPISODES_MATCHED, depth)
            outcome.episodes = found
            return hits

        legs: dict[str, Callable[[], Awaitable[list[Hit]]]] = {
            "fulltext": lambda: self._keyword(actor, view, text, depth),
            "entity": lambda: self._store.entity(actor, view, SEARCHED, grams, depth),
            "episode": episode,
        }
        if kinds:
            legs["type"] = lambda: self._store.by_kind(actor, view, kinds, depth)
        # One vector search feeds the vector leg and seeds the graph leg (which uses it
        # even when the vector leg itself is weighted out); both are checked against the
        # view in the statement that loads the candidates.
        vector_search = None
        if weights.get("vector", 1.0) > 0 or weights.get("graph", 1.0) > 0:
            vector_search = asyncio.ensure_future(self._vector(actor, view, request.query,
                                                               depth))
        walk = (GraphWalk(params.GRAPH_SEEDS, params.GRAPH_MAX_ENTITY_FANOUT, depth)
                if weights.get("graph", 1.0) > 0 else None)
        try:
            results = await self._legs(outcome, legs, weights)
            vector = await vector_search if vector_search is not None else None
        finally:
            if vector_search is not None and not vector_search.done():
                vector_search.cancel()
        return await self._resolve(actor, view, results, vector, walk, filters, outcome,
                                   weights)

    async def _legs(self, outcome: SearchOutcome,
                    legs: dict[str, Callable[[], Awaitable[list[Hit]]]],
                    weights: dict[str, float]) -> dict[str, list[Hit]]:
        """The legs not weighted out, concurrently, each timed and reported."""
        async def timed(name: str, run) -> list[Hit]:
            started = time.perf_counter()
            hits = await run()
            outcome.legs.append(LegReport(params.LEG_LABELS[name], len(hits), _ms(started),
                                          weights.get(name, 1.0)))
            return hits

        chosen = {name: run for name, run in legs.items() if weights.get(name, 1.0) > 0}
        started = time.perf_counter()
        found = await asyncio.gather(*(timed(n, r) for n, r in chosen.items()))
        outcome.timings["legs"] = _ms(started)
        return dict(zip(chosen, found, strict=True))

    async def _resolve(self, actor: Actor, view: View, results: dict[str, list[Hit]],
                       vector: VectorSearch | None, walk: GraphWalk | None, filters: Filters,
                       outcome: SearchOutcome, weights: dict[str, float]) -> Collected:
        """The vector hits the caller may see, the graph leg, and the candidates of every
        leg, in one statement (the filter stage); the vector and graph legs are reported
        with what it found."""
        started = time.perf_counter()
        others = list(dict.fromkeys(h.id for hits in results.values() for h in hits))
        resolved = await self._store.resolve(actor, view, SEARCHED,
                                             vector.hits if vector is not None else None,
                                             walk, others, filters)
        outcome.timings["filter"] = _ms(started)
        if vector is not None and weights.get("vector", 1.0) > 0:
            results["vector"] = resolved.vector
            outcome.legs.append(LegReport(params.LEG_LABELS["vector"], len(resolved.vector),
                                          vector.elapsed_ms, weights.get("vector", 1.0)))
        if walk is not None:
            results["graph"] = resolved.graph
            outcome.legs.append(LegReport(params.LEG_LABELS["graph"], len(resolved.graph),
                                          outcome.timings["filter"], weights.get("graph", 1.0)))
        order = list(params.LEGS)
        outcome.legs.sort(key=lambda r: order.index(r.leg.lower()))
        return Collected({name: results[name] for name in order if name in results},
                         resolved.candidates)

    async def _vector(self, actor: Actor, view: View, query: str, limit: int) -> VectorSearch:
        """The index's nearest memories (checked against PostgreSQL by ``_resolve``)."""
        started = time.perf_counter()
        name = vector_index.collection_name(actor.account_id, actor.environment,
                                            self._embedder.name)
        where = IndexFilter(actor.agent_id, actor.user_id, view.at.timestamp(),
                            tuple(str(k) for k in SEARCHED))
        try:
            dense = await self._embedder.embed_query(query)
            hits: list[IndexHit] = await self._index.query_dense(name, dense, where, limit)
        except Exception as exc:  # the index or embedding API is down: the other legs answer
            logger.warning("vector leg unavailable: %s", exc)
            hits = []
        return VectorSearch([Hit(h.id, h.score) for h in hits], _ms(started))

    async def _keyword(self, actor: Actor, view: View, text: str, limit: int) -> list[Hit]:
        """BM25 hits from the index (those at least KEYWORD_FLOOR of the best), then the
        unindexed memories PostgreSQL matches (room is kept for them: a write is found at
        once). A read as of a past time is PostgreSQL's alone: the index holds only
        the memories live now."""
        if view.as_of is not None:
            return await self._store.fulltext(actor, view, SEARCHED, text, limit)
        name = vector_index.collection_name(actor.account_id, actor.environment,
                                            self._embedder.name)
        where = IndexFilter(actor.agent_id, actor.user_id, view.at.timestamp(),
                            tuple(str(k) for k in SEARCHED))
        indexed, fresh = await asyncio.gather(
            self._index.query_sparse(name, sparse.query_vector(text), where, limit),
            self._store.fulltext(actor, view, SEARCHED, text, limit, unprojected=True),
            return_exceptions=True)
        if isinstance(fresh, BaseException):
            raise fresh
        if isinstance(indexed, BaseException):  # the index is down: PostgreSQL answers
            logger.warning("keyword leg: index unavailable, full text answers: %s", indexed)
            return await self._store.fulltext(actor, view, SEARCHED, text, limit)
        if indexed:
            indexed = [h for h in indexed if h.score >= params.KEYWORD_FLOOR * indexed[0].score]
        known = {h.id for h in indexed}
        fresh = [h for h in fresh if h.id not in known]
        return [*indexed[:limit - len(fresh)], *fresh]

    async def _parse(self, query: str, outcome: SearchOutcome) -> rerank.ParsedQuery | None:
        if self._model is None:
            outcome.query_parsing = "unavailable"
            return None
        started = time.perf_counter()
        try:
            parsed = await rerank.parse_query(self._model, query)
        except Exception as exc:
            logger.warning("query parsing failed: %s", exc)
            outcome.query_parsing = "failed"
            return None
        finally:
            outcome.timings["query_parsing"] = _ms(started)
        outcome.query_parsing = "applied"
        return parsed

    async def _rerank_locally(self, local: Reranking, request: RetrieveRequest,
                              outcome: SearchOutcome) -> None:
        """The pool's best fused candidates in the cross-encoder's order, then cut to top N
        (no utility model: the cross-encoder stands in for its 0-10 scores)."""
        if not outcome.kept:
            return
        started = time.perf_counter()
        try:
            ordered, given = await local.reorder(
                request.query, outcome.kept, lambda s: rerank_text(s.candidate.entry))
        except Exception as exc:
            logger.warning("local reranking failed: %s", exc)
            outcome.reranked = Reranked("failed")
            outcome.kept = outcome.kept[:request.top_n]
            return
        finally:
            outcome.timings["rerank"] = _ms(started)
        outcome.reranked = Reranked("applied", {s.fused.id: g for s, g in zip(
            outcome.kept, given, strict=False)})
        outcome.kept = ordered[:request.top_n]

    async def _rerank(self, request: RetrieveRequest, outcome: SearchOutcome) -> None:
        if self._model is None:
            outcome.reranked = Reranked("unavailable")
            return
        head = outcome.kept[:rerank.RERANK_LIMIT]
        if not head:
            return
        started = time.perf_counter()
        try:
            given = await rerank.scores(self._model, request.query, [
                rerank_text(s.candidate.entry) for s in head])
        except Exception as exc:
            logger.warning("reranking failed: %s", exc)
            outcome.reranked = Reranked("failed")
            return
        finally:
            outcome.timings["rerank"] = _ms(started)
        by_score = sorted(zip(head, given, strict=True), key=lambda p: -p[1])  # stable: ties
        outcome.kept = [s for s, _ in by_score] + outcome.kept[rerank.RERANK_LIMIT:]
        outcome.reranked = Reranked("applied", {s.fused.id: g for s, g in zip(head, given,
                                                                             strict=True)})


def rank(fused: list[fusion.Fused], found: dict[UUID, Candidate], request: RetrieveRequest,
         view: View, outcome: SearchOutcome, keep: int | None = None) -> None:
    """The filter stage's verdicts (superseded hidden and counted), the weighted score and
    the threshold: ``outcome.kept``, best first, at most ``keep`` (default top N)."""
    pairs = []
    for item in fused:
        candidate = found.get(item.id)
        if candidate is None:
            continue
        if candidate.signals.superseded and not request.include_superseded:
            outcome.hidden_superseded += 1
            continue
        pairs.append((candidate, item))
    outcome.filtered = len(pairs)
    scored = scoring.score(pairs, request.overrides, view.at, request.temporal_anchor)
    if outcome.route:  # a routed query keeps its list's order: newest first
        scored.sort(key=lambda s: s.fused.legs[0].rank)
    outcome.threshold = scoring.threshold(scored, request.min_score)
    outcome.kept = [s for s in scored if s.final >= outcome.threshold][:keep or request.top_n]
