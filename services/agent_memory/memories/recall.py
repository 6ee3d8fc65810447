"""Two-phase recall.

(a) Qdrant: a hybrid query (dense embedding + BM25 sparse vector, fused by
reciprocal-rank fusion in Qdrant) under the caller's visibility filter;
(b) PostgreSQL: the returned ids are fetched and visibility, liveness (not
deleted, superseded or expired) and filters re-applied, so a lagging or stale
index can never leak or resurrect an entry. Entries written since the
projector last ran are matched by keyword and ranked as a third RRF leg, so a
write is recallable at once. When Qdrant is unreachable or has nothing,
PostgreSQL keyword search (full text and trigram) answers instead. Every
score is multiplied by (0.8 + importance x 0.2). With ``rerank`` (and the local
cross-encoder configured), the best ``pool`` of those are put in the
cross-encoder's order before the limit is taken; scores stay the fused ones.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from libs.embeddings import Embedder
from libs.reranker import Reranking
from services.agent_memory import index as vector_index
from services.agent_memory.index import IndexFilter, IndexHit, IndexUnavailable, VectorIndex, sparse
from services.agent_memory.memories import rules
from services.agent_memory.memories.model import Actor, Entry, Recalled, RecallResult
from services.agent_memory.memories.rules import Kind
from services.agent_memory.memories.store.entries import Repository

logger = logging.getLogger(__name__)

# Ask the index for more than the limit: phase (b) may drop some hits.
_OVERSAMPLE = 3


def rerank_text(entry: Entry) -> str:
    """What a reranker reads of a memory (here and in retrieval): its key (words, not
    snake case) and content."""
    return f"{entry.key.replace('_', ' ')}: {entry.content}"


class Recaller:
    def __init__(self, repository: Repository, index: VectorIndex, embedder: Embedder,
                 reranking: Reranking | None = None) -> None:
        self._repository = repository
        self._index = index
        self._embedder = embedder
        self._reranking = reranking

    async def recall(self, actor: Actor, query: str, limit: int, kinds: Sequence[Kind],
                     now, *, rerank: bool = False) -> RecallResult:
        if not (rerank and self._reranking is not None):
            return await self._fused(actor, query, limit, kinds, now)
        found = await self._fused(actor, query, max(limit, self._reranking.pool), kinds, now)
        ordered, _ = await self._reranking.reorder(query, found.entries,
                                                   lambda r: rerank_text(r.entry))
        return RecallResult(ordered[:limit], found.fallback, reranked=True)

    async def _fused(self, actor: Actor, query: str, limit: int, kinds: Sequence[Kind],
                     now) -> RecallResult:
        hits = await self._index_hits(actor, query, limit, kinds, now)
        if not hits:
            found = await self._repository.keyword_search(actor, now, query, kinds, limit)
            ranked = _rank([(e, rules.boosted(score, e.importance)) for e, score in found], limit)
            return RecallResult(ranked, fallback=True)
        entries = await self._repository.visible_by_ids(actor, now, [h.id for h in hits], kinds)
        scored = [(entries[h.id], rules.boosted(h.score, entries[h.id].importance))
                  for h in hits if h.id in entries]
        unprojected = await self._repository.keyword_search(
            actor, now, query, kinds, limit, only_unprojected=True)
        seen = {entry.id for entry, _ in scored}
        for rank, (entry, _) in enumerate(unprojected):
            if entry.id not in seen:
                fused = 1.0 / (vector_index.RRF_K + rank)  # Qdrant's RRF: 1 / (k + rank from 0)
                scored.append((entry, rules.boosted(fused, entry.importance)))
        return RecallResult(_rank(scored, limit), fallback=False)

    async def _index_hits(self, actor: Actor, query: str, limit: int, kinds: Sequence[Kind],
                          now) -> list[IndexHit]:
        name = vector_index.collection_name(actor.account_id, actor.environment, self._embedder.name)
        where = IndexFilter(actor.agent_id, actor.user_id, now.timestamp(),
                            tuple(str(k) for k in kinds))
        try:
            dense = await self._embedder.embed_query(query)
            return await self._index.query(name, dense, sparse.query_vector(query), where,
                                           limit * _OVERSAMPLE)
        except IndexUnavailable as exc:
            logger.warning("index unavailable, recalling by keyword: %s", exc)
        except Exception as exc:  # the embedding API failed: keyword search still answers
            logger.warning("query embedding failed, recalling by keyword: %s", exc)
        return []


def _rank(scored: list[tuple[Entry, float]], limit: int) -> list[Recalled]:
    # Ties go to the more important, then the more recently updated entry.
    scored.sort(key=lambda pair: (-pair[1], -pair[0].importance,
                                  -pair[0].updated_at.timestamp(), str(pair[0].id)))
    return [Recalled(entry, score) for entry, score in scored[:limit]]
