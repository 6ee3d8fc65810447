"""The operations behind the agent-memory RPCs: reads here, changes in ``writes``.

Every read is filtered by the caller's visibility in SQL (``sql.visible``).
A disabled account recalls nothing (MEMORY_DISABLED) and pins nothing (no
error, so conversations keep working); its library stays readable, and
deletable, so people can see and remove what it holds.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from uuid import UUID

from libs.embeddings import Embedder
from libs.errors import FailedPrecondition, NotFound
from libs.reranker import Reranking
from services.agent_memory import index as vector_index
from services.agent_memory.index import VectorIndex
from services.agent_memory.memories import exchange, rules, validation
from services.agent_memory.memories.clock import Clock
from services.agent_memory.memories.hygiene import Hygiene, HygieneReport
from services.agent_memory.memories.model import (
    AccountSettings,
    AccountUsage,
    Actor,
    AgentSettings,
    AuditRecord,
    Edit,
    Entry,
    Explanation,
    ImportResult,
    MemoryCount,
    MemoryFilter,
    NewMemory,
    RecallResult,
    Source,
    StoreResult,
    Version,
)
from services.agent_memory.memories.projector import Projector, points_for
from services.agent_memory.memories.recall import Recaller
from services.agent_memory.memories.rules import Kind, Visibility
from services.agent_memory.memories.store.entries import Repository
from services.agent_memory.memories.writes import Writes


class AgentMemory:
    def __init__(self, repository: Repository, index: VectorIndex, embedder: Embedder,
                 clock: Clock, projector: Projector, reranking: Reranking | None = None) -> None:
        self._repository = repository
        self._index = index
        self._embedder = embedder
        self._clock = clock
        self._projector = projector
        self._recaller = Recaller(repository, index, embedder, reranking)
        self._writes = Writes(repository, clock)
        self._hygiene = Hygiene(repository, self._writes, clock)

    async def _changed(self, result):
        self._projector.kick()
        return result

    # -- seed 000 ------------------------------------------------------------------

    async def store(self, actor: Actor, *, key: str, content: str, kind: Kind,
                    visibility: Visibility | None, importance: float | None, source: Source,
                    request_id: str | None = None) -> StoreResult:
        return await self._changed(await self._writes.store(
            actor, key=key, content=content, kind=kind, visibility=visibility,
            importance=importance, source=source, request_id=request_id))

    async def recall(self, actor: Actor, query: str, limit: int,
                     kinds: Sequence[Kind], *, rerank: bool = False) -> RecallResult:
        validation.text(query, "query", 2000)
        if not (await self._repository.account_settings(actor.account_id)).memory_enabled:
            raise FailedPrecondition("memory is disabled for this account",
                                     reason="MEMORY_DISABLED")
        now = self._clock.now()
        # memory_recall keeps to seed 000's categories; the other kinds reach a context
        # through their own sections (blocks, rules) or, later, the compiled context.
        result = await self._recaller.recall(actor, query, limit, kinds or rules.CATEGORIES, now,
                                             rerank=rerank)
        await self._repository.mark_recalled(actor, [r.entry.id for r in result.entries], now)
        return result

    async def forget(self, actor: Actor, key: str) -> bool:
        return await self._changed(await self._writes.forget(actor, key))

    async def pinned(self, actor: Actor) -> tuple[list[Entry], list[Entry]]:
        return await self._repository.pinned(actor, self._clock.now())

    async def get(self, actor: Actor, key: str) -> Entry:
        validation.text(key, "key", rules.MAX_KEY_CHARS)
        entry = await self._repository.get_by_key(actor, key, self._clock.now())
        if entry is None:
            raise NotFound(f"no memory entry under key {key!r}", reason="ENTRY_NOT_FOUND")
        return entry

    async def list_entries(self, actor: Actor, kinds: Sequence[Kind],
                           after: tuple[datetime, UUID] | None, limit: int) -> list[Entry]:
        return await self._repository.list_entries(actor, self._clock.now(),
                                                   kinds or list(Kind), after, limit)

    async def run_hygiene(self) -> HygieneReport:
        return await self._changed(await self._hygiene.run())

    async def reindex(self, actor: Actor) -> AsyncIterator[tuple[int, int, str]]:
        """Rebuild the caller's collection from PostgreSQL: yields (indexed, total, name)."""
        now = self._clock.now()
        name = vector_index.collection_name(actor.account_id, actor.environment,
                                            self._embedder.name)
        total = await self._repository.count_collection(actor.account_id, actor.environment, now)
        await self._index.drop(name)
        await self._index.ensure_collection(name, self._embedder.dimensions)
        indexed = 0
        yield indexed, total, name
        async for rows in self._repository.collection_entries(actor.account_id,
                                                              actor.environment, now):
            await self._index.upsert(name, await points_for(self._embedder, rows))
            indexed += len(rows)
            yield indexed, total, name

    # -- the library: reads ----------------------------------------------------------

    async def _purge_times(self, actor: Actor, entries: list[Entry]) -> list[Entry]:
        if not any(e.deleted_at for e in entries):
            return entries
        window = timedelta(days=(await self.account_settings(actor)).retention_days)
        return [replace(e, purge_after=e.deleted_at + window) if e.deleted_at else e
                for e in entries]

    async def list_memories(self, actor: Actor, where: MemoryFilter,
                            before: tuple[datetime, UUID] | None, limit: int) -> list[Entry]:
        found = await self._repository.list_memories(actor, self._clock.now(), where, before,
                                                     limit)
        return await self._purge_times(actor, found)

    async def get_memory(self, actor: Actor, memory_id: UUID,
                         as_of: datetime | None) -> tuple[Entry, list[Version]]:
        if as_of is None:
            entry = await self._repository.get(actor, memory_id)
        else:
            version = await self._repository.version_at(actor, memory_id, as_of)
            entry = version.entry if version and version.entry.deleted_at is None else None
        if entry is None:
            raise NotFound(f"memory {memory_id} not found", reason="MEMORY_NOT_FOUND")
        versions = await self._repository.versions(actor, memory_id)
        if as_of is not None:
            versions = [v for v in versions if v.recorded_at <= as_of]
        return (await self._purge_times(actor, [entry]))[0], versions

    async def audit(self, actor: Actor, memory_id: UUID | None, before_id: int | None,
                    limit: int) -> list[AuditRecord]:
        return await self._repository.audit(actor, memory_id, before_id, limit)

    async def explain(self, actor: Actor, memory_id: UUID) -> Explanation:
        entry, versions = await self.get_memory(actor, memory_id, None)
        audit, after = [], None
        while True:  # the whole trail, oldest first
            page = await self._repository.audit(actor, memory_id, after, 500, oldest_first=True)
            audit += page
            if len(page) < 500:
                break
            after = page[-1].id
        supersedes = await self._repository.supersedes(actor, memory_id)
        return Explanation(entry, versions, audit, supersedes)

    async def export(self, actor: Actor, after: tuple[datetime, UUID] | None,
                     limit: int) -> tuple[str, int, tuple[datetime, UUID] | None]:
        """(JSON Lines, memories in it, where the next page starts or None)."""
        page = await self._repository.export_page(actor, after, limit)
        lines = [] if after else [exchange.header(actor.account_id, actor.environment,
                                                  self._clock.now())]
        lines += [exchange.memory_line(entry, versions) for entry, versions in page]
        last = page[-1][0] if len(page) == limit else None
        return ("\n".join(lines) + "\n", len(page),
                None if last is None else (last.created_at, last.id))

    async def summarize(self, actor: Actor, agents: Sequence[str]) -> list[MemoryCount]:
        return await self._repository.count_memories(actor, agents, self._clock.now())

    async def related(self, actor: Actor, keys: Sequence[str],
                      contents: Sequence[str]) -> list[Entry]:
        """Live memories the caller sees under one of ``keys`` or holding one of
        ``contents`` (the same fact: case and spacing aside): what learning
        deduplicates against."""
        return await self._repository.related(actor, self._clock.now(), keys, contents)

    async def recent_keys(self, actor: Actor, limit: int = 200) -> list[str]:
        """The keys of the caller's most recently updated live memories."""
        return await self._repository.recent_keys(actor, self._clock.now(), limit)

    async def account_settings(self, actor: Actor) -> AccountSettings:
        return await self._repository.account_settings(actor.account_id)

    async def account_usage(self, actor: Actor) -> AccountUsage:
        return await self._repository.account_usage(actor.account_id, self._clock.now().date())

    async def agent_settings(self, actor: Actor) -> tuple[AgentSettings, bool]:
        return await self._repository.agent_settings(actor)

    # -- the library: changes ----------------------------------------------------------

    async def add(self, actor: Actor, new: NewMemory, request_id: str | None) -> Entry:
        return await self._changed(await self._writes.add(actor, new, request_id))

    async def edit(self, actor: Actor, memory_id: UUID, expected: int, edit: Edit) -> Entry:
        return await self._changed(await self._writes.edit(actor, memory_id, expected, edit))

    async def delete(self, actor: Actor, memory_id: UUID, expected: int) -> Entry:
        entry = await self._changed(await self._writes.delete(actor, memory_id, expected))
        return (await self._purge_times(actor, [entry]))[0]

    async def restore(self, actor: Actor, memory_id: UUID, expected: int) -> Entry:
        return await self._changed(await self._writes.restore(actor, memory_id, expected))

    async def rollback(self, actor: Actor, memory_id: UUID, version: int,
                       expected: int) -> Entry:
        return await self._changed(await self._writes.rollback(actor, memory_id, version,
                                                               expected))

    async def supersede(self, actor: Actor, memory_id: UUID, replacement: UUID,
                        expected: int) -> tuple[Entry, Entry]:
        return await self._changed(await self._writes.supersede(actor, memory_id, replacement,
                                                                expected))

    async def import_memories(self, actor: Actor, text: str) -> ImportResult:
        return await self._changed(await self._writes.import_memories(actor, text))

    async def update_account_settings(self, actor: Actor, values: AccountSettings,
                                      fields: Sequence[str]) -> AccountSettings:
        return await self._writes.update_account_settings(actor, values, fields)

    async def update_agent_settings(self, actor: Actor, values: AgentSettings,
                                    fields: Sequence[str]) -> AgentSettings:
        return await self._writes.update_agent_settings(actor, values, fields)
