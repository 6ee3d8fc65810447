"""GetThreadContext: the recent window straight from the journal, and the summary.

No cache in front of the window and no fallback: if the journal cannot be read
the call fails (UNAVAILABLE) rather than return a stale window. The summary
comes from the Redis cache, else from the object store (and is cached).
"""

from __future__ import annotations

import asyncio

from agentmemory.common.v1 import message_pb2
from google.protobuf import struct_pb2

from libs.errors import NotFound
from libs.identity import Principal
from libs.journal_client import JournalReader
from services.thread_memory.coordination import Coordination
from services.thread_memory.summaries import Summary, SummaryStore, ThreadKey
from services.thread_memory.window import window_size


class ThreadContext:
    def __init__(self, journal: JournalReader, summaries: SummaryStore,
                 coordination: Coordination) -> None:
        self._journal = journal
        self._summaries = summaries
        self._coordination = coordination

    async def get(self, principal: Principal, thread_id: str, requested: int | None,
                  metadata: struct_pb2.Struct | None
                  ) -> tuple[list[message_pb2.Message], Summary | None]:
        size = window_size(requested, metadata)
        return await asyncio.gather(self._journal.recent(principal, thread_id, size),
                                    self.summary(principal, thread_id))

    async def purge(self, principal: Principal, thread_id: str) -> tuple[bool, int]:
        """Delete the summary object and every Redis key of a thread the caller owns."""
        thread = ThreadKey(principal.account_id, principal.agent_id, thread_id)
        summary, _ = await self._summaries.load(thread)
        if summary is not None and not summary.visible_to(principal.user_id):
            raise NotFound(f"thread {thread_id} not found", reason="THREAD_NOT_FOUND")
        if summary is not None:
            await self._summaries.delete(thread)
        return summary is not None, await self._coordination.purge(thread)

    async def summary(self, principal: Principal, thread_id: str) -> Summary | None:
        thread = ThreadKey(principal.account_id, principal.agent_id, thread_id)
        summary = await self._coordination.cached_summary(thread)
        if summary is None:
            summary, _ = await self._summaries.load(thread)
            if summary is not None:
                await self._coordination.cache_summary(thread, summary)
        if summary is None or not summary.visible_to(principal.user_id):
            return None
        return summary
