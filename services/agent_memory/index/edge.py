"""The embedded index: Qdrant's engine in-process (qdrant-edge), a shard per collection."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Sequence
from pathlib import Path
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
from services.agent_memory.sparse import SparseVector


def _edge():
    import qdrant_edge

    return qdrant_edge


_SCHEMAS = {"keyword": "Keyword", "float": "Float"}


def _filter(where: IndexFilter):
    q = _edge()
    visible = [q.Filter(must=[q.FieldCondition(k, match=q.MatchValue(v)) for k, v in part.items()])
               for part in where.visible()]
    must = [q.FieldCondition("expires_at", range=q.RangeFloat(gt=where.now)),
            q.Filter(should=visible)]
    if where.kinds:
        must.append(q.FieldCondition("kind", match=q.MatchAny(list(where.kinds))))
    return q.Filter(must=must)


class EdgeIndex:
    def __init__(self, root: Path) -> None:
        self._root = root
        self._shards: dict[str, object] = {}
        self._lock = asyncio.Lock()

    async def _shard(self, name: str, dimensions: int | None = None):
        shard = self._shards.get(name)
        if shard is not None:
            return shard
        async with self._lock:
            if name not in self._shards:
                self._shards[name] = await asyncio.to_thread(self._open, name, dimensions)
            return self._shards[name]

    def _open(self, name: str, dimensions: int | None):
        q = _edge()
        path = self._root / name
        if path.exists() and any(path.iterdir()):
            return self._indexed(q.EdgeShard.load(str(path)))
        if dimensions is None:
            raise IndexUnavailable(f"collection {name} does not exist")
        config = q.EdgeConfig(
            vectors={DENSE: q.EdgeVectorParams(size=dimensions, distance=q.Distance.Cosine)},
            sparse_vectors={SPARSE: q.EdgeSparseVectorParams(modifier=q.Modifier.Idf)},
            payload_memory=q.Memory.Cached,
        )
        path.mkdir(parents=True, exist_ok=True)
        return self._indexed(q.EdgeShard.create(str(path), config))

    @staticmethod
    def _indexed(shard):
        """Without payload indexes every filtered query reads every point's payload. A
        collection of an earlier release gains the ones it lacks."""
        q = _edge()
        present = set(shard.info().payload_schema)
        for field, schema in PAYLOAD_FIELDS:
            if field not in present:
                shard.update(q.UpdateOperation.create_field_index(
                    field, getattr(q.PayloadSchemaType, _SCHEMAS[schema])))
        return shard

    async def _call(self, name: str, operation, *args):
        shard = await self._shard(name)
        try:
            return await asyncio.to_thread(operation, shard, *args)
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"qdrant-edge: {exc}") from exc

    async def ensure_collection(self, name: str, dimensions: int) -> None:
        try:
            await self._shard(name, dimensions)
        except IndexUnavailable:
            raise
        except Exception as exc:
            raise IndexUnavailable(f"qdrant-edge: {exc}") from exc

    async def upsert(self, name: str, points: Sequence[IndexPoint]) -> None:
        q = _edge()
        edge_points = [
            q.Point(str(p.id), {DENSE: p.dense, SPARSE: q.SparseVector(p.sparse.indices,
                                                                     p.sparse.values)}, p.payload)
            for p in points
        ]
        await self._call(name, lambda s: s.update(q.UpdateOperation.upsert_points(edge_points)))

    async def delete(self, name: str, ids: Sequence[UUID]) -> None:
        if not (self._root / name).exists():
            return
        q = _edge()
        await self._call(name, lambda s: s.update(
            q.UpdateOperation.delete_points([str(i) for i in ids])))

    async def query(self, name: str, dense: list[float], sparse: SparseVector,
                    where: IndexFilter, limit: int) -> list[IndexHit]:
        if not (self._root / name).exists():
            return []
        q = _edge()
        condition = _filter(where)
        depth = max(limit * 5, 50)
        request = q.QueryRequest(
            limit=limit,
            query=q.Fusion.Rrf(k=RRF_K),
            prefetches=[
                q.Prefetch(limit=depth, query=q.Query.Nearest(dense, using=DENSE), filter=condition),
                q.Prefetch(limit=depth, query=q.Query.Nearest(
                    q.SparseVector(sparse.indices, sparse.values), using=SPARSE), filter=condition),
            ],
            filter=condition,
            with_payload=False,
        )
        points = await self._call(name, lambda s: s.query(request))
        return [IndexHit(UUID(str(p.id)), p.score) for p in points]

    async def query_dense(self, name: str, dense: list[float], where: IndexFilter,
                          limit: int) -> list[IndexHit]:
        if not (self._root / name).exists():
            return []
        q = _edge()
        request = q.QueryRequest(limit=limit, query=q.Query.Nearest(dense, using=DENSE),
                                 filter=_filter(where), with_payload=False)
        points = await self._call(name, lambda s: s.query(request))
        return [IndexHit(UUID(str(p.id)), p.score) for p in points]

    async def count(self, name: str) -> int:
        if not (self._root / name).exists():
            return 0
        q = _edge()
        return await self._call(name, lambda s: s.count(q.CountRequest(exact=True)))

    async def drop(self, name: str) -> None:
        async with self._lock:
            shard = self._shards.pop(name, None)
            if shard is not None:
                await asyncio.to_thread(shard.close)
            await asyncio.to_thread(shutil.rmtree, self._root / name, True)

    async def close(self) -> None:
        async with self._lock:
            for shard in self._shards.values():
                await asyncio.to_thread(shard.close)
            self._shards.clear()
