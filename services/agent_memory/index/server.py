"""The production index: a Qdrant server through qdrant-client.

The same adapter runs on qdrant-client's local mode in the congruence tests,
since no Qdrant server installs on the development machines.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

from services.agent_memory.index import (
    DENSE,
    PAYLOAD_FIELDS,
    RRF_K,
    SPARSE,
    IndexFilter,
    IndexHit,
    IndexPoint,
    IndexUnavailable,
)
from services.agent_memory.index.sparse import SparseVector


def _models():
    from qdrant_client import models

    return models


def _filter(where: IndexFilter):
    m = _models()
    visible = [m.Filter(must=[m.FieldCondition(key=k, match=m.MatchValue(value=v))
                              for k, v in part.items()]) for part in where.visible()]
    must = [m.FieldCondition(key="expires_at", range=m.Range(gt=where.now)),
            m.Filter(should=visible)]
    if where.kinds:
        must.append(m.FieldCondition(key="kind", match=m.MatchAny(any=list(where.kinds))))
    return m.Filter(must=must)


class QdrantServerIndex:
    def __init__(self, client) -> None:
        """``client``: a qdrant_client.AsyncQdrantClient (server URL, or local mode)."""
        self._client = client
        self._known: set[str] = set()  # collections that exist
        self._ensured: set[str] = set()  # ... and have every payload index

    @classmethod
    def connect(cls, url: str, api_key: str | None = None, timeout: float = 5.0) -> QdrantServerIndex:
        from qdrant_client import AsyncQdrantClient

        return cls(AsyncQdrantClient(url=url, api_key=api_key or None, timeout=int(timeout)))

    async def _guard(self, call):
        try:
            return await call
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"qdrant: {exc}") from exc

    async def _exists(self, name: str) -> bool:
        if name in self._known:
            return True
        if await self._guard(self._client.collection_exists(name)):
            self._known.add(name)
            return True
        return False

    async def ensure_collection(self, name: str, dimensions: int) -> None:
        if name in self._ensured:
            return
        m = _models()
        present: set[str] = set()
        if await self._guard(self._client.collection_exists(name)):
            info = await self._guard(self._client.get_collection(name))
            present = set(info.payload_schema or {})
        else:
            await self._guard(self._client.create_collection(
                name,
                vectors_config={DENSE: m.VectorParams(size=dimensions,
                                                      distance=m.Distance.COSINE)},
                sparse_vectors_config={SPARSE: m.SparseVectorParams(modifier=m.Modifier.IDF)},
            ))
        # A collection of an earlier release gains the payload indexes it lacks.
        for field, schema in PAYLOAD_FIELDS:
            if field not in present:
                await self._guard(self._client.create_payload_index(
                    name, field, getattr(m.PayloadSchemaType, schema.upper())))
        self._known.add(name)
        self._ensured.add(name)

    async def upsert(self, name: str, points: Sequence[IndexPoint]) -> None:
        m = _models()
        await self._guard(self._client.upsert(name, points=[
            m.PointStruct(
                id=str(p.id),
                vector={DENSE: p.dense,
                        SPARSE: m.SparseVector(indices=p.sparse.indices, values=p.sparse.values)},
                payload=p.payload,
            )
            for p in points
        ], wait=True))

    async def delete(self, name: str, ids: Sequence[UUID]) -> None:
        if not await self._exists(name):
            return
        m = _models()
        await self._guard(self._client.delete(
            name, points_selector=m.PointIdsList(points=[str(i) for i in ids]), wait=True))

    async def query(self, name: str, dense: list[float], sparse: SparseVector,
                    where: IndexFilter, limit: int) -> list[IndexHit]:
        if not await self._exists(name):
            return []
        m = _models()
        condition = _filter(where)
        depth = max(limit * 5, 50)
        reply = await self._guard(self._client.query_points(
            name,
            prefetch=[
                m.Prefetch(query=dense, using=DENSE, limit=depth, filter=condition),
                m.Prefetch(query=m.SparseVector(indices=sparse.indices, values=sparse.values),
                           using=SPARSE, limit=depth, filter=condition),
            ],
            query=m.RrfQuery(rrf=m.Rrf(k=RRF_K)),
            query_filter=condition,
            limit=limit,
            with_payload=False,
        ))
        return [IndexHit(UUID(str(p.id)), p.score) for p in reply.points]

    async def query_dense(self, name: str, dense: list[float], where: IndexFilter,
                          limit: int) -> list[IndexHit]:
        if not await self._exists(name):
            return []
        reply = await self._guard(self._client.query_points(
            name, query=dense, using=DENSE, query_filter=_filter(where), limit=limit,
            with_payload=False))
        return [IndexHit(UUID(str(p.id)), p.score) for p in reply.points]

    async def query_sparse(self, name: str, sparse: SparseVector, where: IndexFilter,
                           limit: int) -> list[IndexHit]:
        if not sparse.indices or not await self._exists(name):
            return []
        m = _models()
        reply = await self._guard(self._client.query_points(
            name, query=m.SparseVector(indices=sparse.indices, values=sparse.values),
            using=SPARSE, query_filter=_filter(where), limit=limit, with_payload=False))
        return [IndexHit(UUID(str(p.id)), p.score) for p in reply.points]

    async def count(self, name: str) -> int:
        if not await self._exists(name):
            return 0
        return (await self._guard(self._client.count(name, exact=True))).count

    async def drop(self, name: str) -> None:
        self._known.discard(name)
        self._ensured.discard(name)
        if await self._guard(self._client.collection_exists(name)):
            await self._guard(self._client.delete_collection(name))

    async def close(self) -> None:
        await self._client.close()
