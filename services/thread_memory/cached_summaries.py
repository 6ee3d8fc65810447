"""A thread's current summary: from the Redis cache, else from the object store
(and then cached for an hour). With Redis down or wiped the store answers."""

from __future__ import annotations

from services.thread_memory.coordination import Coordination
from services.thread_memory.summaries import Summary, SummaryStore, ThreadKey


class CachedSummaries:
    def __init__(self, store: SummaryStore, coordination: Coordination) -> None:
        self.store = store
        self._coordination = coordination

    async def get(self, thread: ThreadKey) -> Summary | None:
        summary = await self._coordination.cached_summary(thread)
        if summary is None:
            summary, _ = await self.store.load(thread)
            if summary is not None:
                await self._coordination.cache_summary(thread, summary)
        return summary

    async def end(self, thread: ThreadKey) -> int:
        """The last offset the summary covers; 0 before the first summary."""
        summary = await self.get(thread)
        return summary.last_message_offset if summary else 0
