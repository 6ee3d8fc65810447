"""The operations behind the agent-memory RPCs: validation, screening, rules."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from uuid import UUID

from libs.embeddings import Embedder
from libs.errors import InvalidArgument, NotFound
from libs.identity import Principal
from services.agent_memory import index as vector_index
from services.agent_memory import rules, safety
from services.agent_memory.clock import Clock
from services.agent_memory.index import VectorIndex
from services.agent_memory.model import (
    Entry,
    NewEntry,
    RecallResult,
    Scope,
    Source,
    StoreResult,
)
from services.agent_memory.projector import Projector, points_for
from services.agent_memory.recall import Recaller
from services.agent_memory.repository import Repository
from services.agent_memory.rules import Category, Visibility

logger = logging.getLogger(__name__)


def _check_text(value: str, field: str, limit: int) -> str:
    if not value.strip():
        raise InvalidArgument(field, "required")
    if len(value) > limit:
        raise InvalidArgument(field, f"at most {limit} characters")
    return value


class AgentMemory:
    def __init__(self, repository: Repository, index: VectorIndex, embedder: Embedder,
                 clock: Clock, projector: Projector) -> None:
        self._repository = repository
        self._index = index
        self._embedder = embedder
        self._clock = clock
        self._projector = projector
        self._recaller = Recaller(repository, index, embedder)

    async def store(self, principal: Principal, *, key: str, content: str, category: Category,
                    visibility: Visibility | None, importance: float | None, source: Source,
                    request_id: str | None = None) -> StoreResult:
        _check_text(key, "key", rules.MAX_KEY_CHARS)
        limits = rules.RULES[category]
        _check_text(content, "content", limits.max_content_chars)
        if importance is None:
            importance = rules.DEFAULT_IMPORTANCE
        elif not 0.0 <= importance <= 1.0:
            raise InvalidArgument("importance", "must be between 0.0 and 1.0")
        sensitive: list[str] = []
        for field, text in (("key", key), ("content", content)):
            screening = safety.screen(text)
            if screening.rejected:
                raise InvalidArgument(
                    field, f"rejected: contains {screening.rejected}", reason="UNSAFE_CONTENT")
            sensitive += screening.sensitive
        user = principal.user_id
        if visibility is None:
            visibility = Visibility.PRIVATE if user else Visibility.SHARED
        if sensitive:
            if not user:
                raise InvalidArgument(
                    "content",
                    f"contains {', '.join(dict.fromkeys(sensitive))}; such entries are kept "
                    "private, which needs an authenticated user",
                    reason="SENSITIVE_CONTENT_WITHOUT_USER",
                )
            visibility = Visibility.PRIVATE
        if visibility == Visibility.PRIVATE and not user:
            visibility = Visibility.SHARED  # the seed's rule: no user, no private entry
        new = NewEntry(key, content, category, visibility, importance, source)
        result = await self._repository.store(Scope.of(principal), new, self._clock.now(),
                                              request_id)
        self._projector.kick()
        return result

    async def recall(self, principal: Principal, query: str, limit: int,
                     categories: Sequence[Category]) -> RecallResult:
        _check_text(query, "query", 2000)
        now = self._clock.now()
        result = await self._recaller.recall(Scope.of(principal), query, limit, categories, now)
        await self._repository.mark_recalled([r.entry.id for r in result.entries], now)
        return result

    async def forget(self, principal: Principal, key: str) -> bool:
        _check_text(key, "key", rules.MAX_KEY_CHARS)
        forgotten = await self._repository.forget(Scope.of(principal), key, self._clock.now())
        if forgotten is not None:
            self._projector.kick()
        return forgotten is not None

    async def pinned(self, principal: Principal) -> list[Entry]:
        return await self._repository.pinned(Scope.of(principal), self._clock.now())

    async def get(self, principal: Principal, key: str) -> Entry:
        _check_text(key, "key", rules.MAX_KEY_CHARS)
        entry = await self._repository.get(Scope.of(principal), key, self._clock.now())
        if entry is None:
            raise NotFound(f"no memory entry under key {key!r}", reason="ENTRY_NOT_FOUND")
        return entry

    async def list(self, principal: Principal, categories: Sequence[Category],
                   after: tuple[datetime, UUID] | None, limit: int) -> list[Entry]:
        return await self._repository.list(Scope.of(principal), self._clock.now(), categories,
                                           after, limit)

    async def run_hygiene(self) -> tuple[int, int]:
        now = self._clock.now()
        expired = await self._repository.delete_expired(now)
        decayed = await self._repository.decay(now)
        if expired:
            self._projector.kick()
        logger.info("hygiene: %d expired entries removed, %d entries decayed", expired, decayed)
        return expired, decayed

    async def reindex(self, principal: Principal) -> AsyncIterator[tuple[int, int, str]]:
        """Rebuild the caller's collection from PostgreSQL: yields (indexed, total, name)."""
        now = self._clock.now()
        name = vector_index.collection_name(principal.account_id, principal.environment,
                                            self._embedder.name)
        total = await self._repository.count_collection(principal.account_id,
                                                        principal.environment, now)
        await self._index.drop(name)
        await self._index.ensure_collection(name, self._embedder.dimensions)
        indexed = 0
        yield indexed, total, name
        async for rows in self._repository.collection_entries(principal.account_id,
                                                              principal.environment, now):
            await self._index.upsert(name, await points_for(self._embedder, rows))
            indexed += len(rows)
            yield indexed, total, name

    async def memory_bound(self, principal: Principal) -> bool:
        return await self._repository.memory_bound(Scope.of(principal))

    async def set_memory_bound(self, principal: Principal, bound: bool) -> bool:
        await self._repository.set_memory_bound(Scope.of(principal), bound, self._clock.now())
        return bound
