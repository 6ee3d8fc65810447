"""Projection of PostgreSQL entries into the vector index, through the outbox.

Every change to a memory adds an outbox row in the same transaction. The
projector claims due rows (``FOR UPDATE SKIP LOCKED``, so replicas share the
work) under a lease, looks at each memory's *current* row, and upserts it into
its collection when it is live, or deletes it from the index when it is gone,
deleted, superseded or expired: the index holds live memories only.
Acting on current state makes the projection idempotent and order-free. When
the index or the embedder fails, the rows stay, with a backoff, and are
retried; nothing is lost.

Claim, work, finish: the claim and the finish are two short transactions, and
the embedding and the index calls run between them, outside any. So a worker
may crash between the steps (its rows come due again when the lease ends), and
several workers may hold rows of the same memory: the finish compares each
memory's version with the one projected, and queues a memory changed meanwhile
again, since an older version may have reached the index after a newer one.

A write in this process, or a NOTIFY from another, starts a pass at once; the
projector also looks by itself (for retries come due, or a missed notice) a
second after a pass that found work, then less and less often while it finds
none, at least every IDLE_POLL_SECONDS.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta
from uuid import UUID

from libs import postgres
from libs.embeddings import Embedder
from libs.model import ChatModel
from libs.pacing import IdleBackoff
from services.agent_memory import index as vector_index
from services.agent_memory.index import IndexPoint, VectorIndex, sparse
from services.agent_memory.memories import entities
from services.agent_memory.memories.clock import Clock
from services.agent_memory.memories.model import Entry
from services.agent_memory.memories.store.entities import add_entities, refresh_entities
from services.agent_memory.memories.store.entries import OutboxItem, Repository

logger = logging.getLogger(__name__)

IDLE_POLL_SECONDS = 30.0
# A claim's lease: well beyond the slowest batch (the remote embedder's 10 s timeout, retried
# twice, plus the index), since a worker whose lease ends while it works has its rows taken
# by another; short enough that a dead worker's rows wait two minutes at most.
LEASE_SECONDS = 120.0

Projection = dict[tuple[str, str, UUID], Entry]  # the live memories behind a batch


def indexed_text(entry: Entry) -> str:
    return f"{entry.key.replace('_', ' ')}: {entry.content}"


async def points_for(embedder: Embedder, rows: Sequence[Entry]) -> list[IndexPoint]:
    texts = [indexed_text(entry) for entry in rows]
    dense = await embedder.embed_documents(texts)
    return [
        IndexPoint(
            id=entry.id,
            dense=vector,
            sparse=sparse.document_vector(text),
            payload=vector_index.payload(
                scope=entry.scope, agent_id=entry.agent_id,
                owner_user_id=entry.owner_user_id or "", kind=entry.kind,
                expires_at=entry.expires_at.timestamp() if entry.expires_at else None,
            ),
        )
        for entry, text, vector in zip(rows, texts, dense, strict=True)
    ]


def changed_since(items: Sequence[OutboxItem], projected: Projection,
                  current: Projection) -> list[OutboxItem]:
    """One item per memory whose version (or liveness) is no longer the one projected:
    another worker may have projected the newer one before this worker's older one
    reached the index."""
    def version(projection: Projection, key) -> int | None:
        entry = projection.get(key)
        return None if entry is None else entry.version

    changed: dict[tuple, OutboxItem] = {}
    for item in items:
        key = (item.account_id, item.environment, item.entry_id)
        if version(projected, key) != version(current, key):
            changed.setdefault(key, item)
    return list(changed.values())


class Projector:
    def __init__(self, repository: Repository, index: VectorIndex, embedder: Embedder,
                 clock: Clock, *, batch: int = 64, poll_seconds: float = 1.0,
                 entity_model: ChatModel | None = None) -> None:
        self._repository = repository
        self._entity_model = entity_model
        self._index = index
        self._embedder = embedder
        self._clock = clock
        self._batch = batch
        self._poll = IdleBackoff(poll_seconds, IDLE_POLL_SECONDS)

    def kick(self) -> None:
        """Something was written: drain now rather than at the next poll."""
        self._poll.wake()

    async def drain(self) -> int:
        """Project everything due now; returns the outbox rows handled."""
        handled = 0
        while True:
            done, progressed = await self.run_once()
            handled += done
            if not progressed:
                return handled

    async def run_once(self) -> tuple[int, bool]:
        """One batch: (rows handled, whether they were projected rather than deferred).

        Three steps, so that no transaction stays open across the embedder's and the
        index's network calls: claim (a short transaction), work (no transaction),
        finish (a second one). A worker that dies after its claim leaves leased rows
        that come due again when the lease ends; one that dies after its work leaves
        them too, and projecting the current state again is harmless."""
        now = self._clock.now()
        claim = uuid.uuid4()
        async with self._transaction() as connection:
            items = await self._repository.claim_outbox(
                connection, claim, now, self._batch, now + timedelta(seconds=LEASE_SECONDS))
            if not items:
                return 0, False
            current = await self._repository.entries_for_projection(connection, items, now)
            # Entities (retrieval's entity and graph legs): local, in this transaction.
            await refresh_entities(connection, [(i.account_id, i.environment, i.entry_id)
                                                for i in items])
        try:
            await self._project(items, current)
        except Exception as exc:
            logger.warning("projection of %d outbox rows deferred: %s", len(items), exc)
            async with self._transaction() as connection:
                await self._repository.retry_outbox(connection, claim, items, now, str(exc))
            return len(items), False
        async with self._transaction() as connection:
            now_current = await self._repository.entries_for_projection(connection, items, now)
            await self._repository.finish_outbox(
                connection, claim, items, changed_since(items, current, now_current), now)
        await self._model_entities(list(current.values()))
        return len(items), True

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[postgres.Connection]:
        async with self._repository.pool.acquire() as connection, connection.transaction():
            yield connection

    async def _model_entities(self, live: list[Entry]) -> None:
        """Best effort, after the commit (a model call never holds a transaction): the
        names the utility model finds beyond the rules'."""
        if self._entity_model is None or not live:
            return
        try:
            found = [(e, await entities.model_entities(self._entity_model, e.content))
                     for e in live]
            await add_entities(self._repository.pool, found)
        except Exception as exc:
            logger.warning("entity extraction by the model skipped: %s", exc)

    async def _project(self, items, current) -> None:
        collections: dict[tuple[str, str], set] = defaultdict(set)
        for item in items:
            collections[(item.account_id, item.environment)].add(item.entry_id)
        for (account_id, environment), entry_ids in collections.items():
            name = vector_index.collection_name(account_id, environment, self._embedder.name)
            found = {i: current.get((account_id, environment, i)) for i in sorted(entry_ids)}
            live = [entry for entry in found.values() if entry is not None]
            gone = [i for i, entry in found.items() if entry is None]
            if live:
                await self._index.ensure_collection(name, self._embedder.dimensions)
                await self._index.upsert(name, await points_for(self._embedder, live))
            if gone:
                await self._index.delete(name, gone)

    async def run_forever(self) -> None:
        def wake(*_) -> None:
            self._poll.wake()

        async with self._repository.pool.acquire() as connection:
            await connection.add_listener("memory_outbox", wake)
            try:
                while True:
                    try:
                        busy = await self.drain() > 0
                    except Exception:
                        logger.exception("projector pass failed; retrying")
                        busy = True
                    await self._poll.pause(busy=busy)
            finally:
                await connection.remove_listener("memory_outbox", wake)
