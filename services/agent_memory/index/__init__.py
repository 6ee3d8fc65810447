"""The vector index: one interface, two adapters.

- ``edge.EdgeIndex``: the real Qdrant engine in-process (qdrant-edge), one
  shard directory per collection: the embedded default;
- ``server.QdrantServerIndex``: a Qdrant server through qdrant-client
  (production; in tests its local mode stands in for the server).

Both store the same points (a named dense vector ``dense`` and a BM25 sparse
vector ``bm25`` with Qdrant's IDF modifier) and answer the same hybrid query:
both legs prefetched under the same payload filter, fused by Qdrant with
reciprocal-rank fusion (k = RRF_K).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol
from uuid import UUID

from services.agent_memory.index.sparse import SparseVector

DENSE = "dense"
SPARSE = "bm25"
RRF_K = 60
NEVER = 4102444800.0  # 2100-01-01: the expiry stored for entries that never expire


class IndexUnavailable(Exception):
    """The index could not be reached or failed; callers fall back or retry."""


@dataclass(frozen=True)
class IndexPoint:
    id: UUID
    dense: list[float]
    sparse: SparseVector
    payload: dict


@dataclass(frozen=True)
class IndexFilter:
    """Who may see a point (the visibility predicate of ``sql.visible``, as a
    payload filter), unexpired at ``now``, of the given kinds (empty: any)."""

    agent_id: str
    user_id: str | None
    now: float
    kinds: tuple[str, ...] = field(default=())

    def visible(self) -> list[dict[str, str]]:
        """Each dict: payload fields that must all match; a point must match one."""
        found = [{"scope": "account"}, {"scope": "agent", "agent_id": self.agent_id}]
        if self.user_id:
            found += [{"scope": "user", "owner_user_id": self.user_id},
                      {"scope": "private", "agent_id": self.agent_id,
                       "owner_user_id": self.user_id}]
        return found


@dataclass(frozen=True)
class IndexHit:
    id: UUID
    score: float


def collection_name(account_id: str, environment: str, embedder: str) -> str:
    """Per account, per environment, per embedder; safe for a path and for Qdrant."""
    def slug(value: str) -> str:
        return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")[:40] or "x"

    digest = hashlib.sha256(f"{account_id}\0{environment}\0{embedder}".encode()).hexdigest()[:10]
    return f"mem-{slug(account_id)}-{slug(environment)}-{slug(embedder)}-{digest}"


# Payload fields with an index in every collection.
PAYLOAD_FIELDS = (("scope", "keyword"), ("agent_id", "keyword"), ("owner_user_id", "keyword"),
                  ("kind", "keyword"), ("expires_at", "float"))


def payload(*, scope: str, agent_id: str, owner_user_id: str, kind: str,
            expires_at: float | None) -> dict:
    """Only live memories are points; the payload is what filters need."""
    return {"scope": scope, "agent_id": agent_id, "owner_user_id": owner_user_id, "kind": kind,
            "expires_at": NEVER if expires_at is None else expires_at}


class VectorIndex(Protocol):
    async def ensure_collection(self, name: str, dimensions: int) -> None: ...

    async def upsert(self, name: str, points: Sequence[IndexPoint]) -> None: ...

    async def delete(self, name: str, ids: Sequence[UUID]) -> None: ...

    async def query(self, name: str, dense: list[float], sparse: SparseVector,
                    where: IndexFilter, limit: int) -> list[IndexHit]: ...

    async def query_dense(self, name: str, dense: list[float], where: IndexFilter,
                          limit: int) -> list[IndexHit]:
        """The dense leg alone, scored by cosine similarity (retrieval's vector leg)."""
        ...

    async def query_sparse(self, name: str, sparse: SparseVector, where: IndexFilter,
                           limit: int) -> list[IndexHit]:
        """The BM25 leg alone, scored by Qdrant (IDF applied; retrieval's keyword leg)."""
        ...

    async def count(self, name: str) -> int: ...

    async def drop(self, name: str) -> None: ...

    async def close(self) -> None: ...
