"""GetThreadContext: the recent window straight from the journal, and the summary
(and, for a caller that asks, the thread's open run, which the journal reads with the
window: it owns runs, and the caller saves a call of its own).

No cache in front of the window and no fallback: if the journal cannot be read
the call fails (UNAVAILABLE) rather than return a stale window. The summary
comes from the Redis cache, else from the object store (and is cached).

A read whose window does not reach back to the summary's end shows that some
messages are in neither. Below the thresholds that is the seed's rule (no
summary is due yet); past them a job was lost (an instance stopped before it
ran and nothing has been appended since, say), so the read schedules one as a
safety net, unless the counters show the thread below threshold. The job checks
durable state before it writes anything, and the read never waits for it.
"""

from __future__ import annotations

import asyncio
import logging

from agentmemory.common.v1 import message_pb2
from google.protobuf import struct_pb2

from libs.clients.journal import JournalClient
from libs.errors import NotFound, Unavailable
from libs.identity import Principal
from services.thread_memory.cached_summaries import CachedSummaries
from services.thread_memory.coordination import Coordination
from services.thread_memory.jobs import JobTarget, Scheduler
from services.thread_memory.summaries import Summary, ThreadKey
from services.thread_memory.window import window_size

logger = logging.getLogger(__name__)


def leaves_a_gap(messages: list[message_pb2.Message], summary: Summary | None) -> bool:
    """Whether some offset is in neither the window nor the summary."""
    end = summary.last_message_offset if summary else 0
    return bool(messages) and messages[0].offset > end + 1


class ThreadContext:
    def __init__(self, journal: JournalClient, summaries: CachedSummaries,
                 coordination: Coordination, scheduler: Scheduler) -> None:
        self._journal = journal
        self._summaries = summaries
        self._coordination = coordination
        self._scheduler = scheduler

    async def get(self, principal: Principal, thread_id: str, requested: int | None,
                  metadata: struct_pb2.Struct | None, *, with_open_run: bool = False
                  ) -> tuple[list[message_pb2.Message], Summary | None, str]:
        """The window, the summary and, if asked, the thread's open run as the journal
        read it with the window ('' when none)."""
        size = window_size(requested, metadata)
        (messages, open_run), summary = await asyncio.gather(
            self._journal.recent_and_open_run(principal, thread_id, size, with_open_run),
            self.summary(principal, thread_id))
        if leaves_a_gap(messages, summary):
            await self._after_a_gap(principal, thread_id)
        return messages, summary, open_run

    async def _after_a_gap(self, principal: Principal, thread_id: str) -> None:
        thread = ThreadKey(principal.account_id, principal.agent_id, thread_id)
        try:
            counted = await self._coordination.counters(thread)
        except Unavailable:
            counted = None
        if counted is None or counted.over_threshold:
            logger.info("thread %s: the window does not reach the summary; checking whether "
                        "a summary is due", thread_id)
            self._scheduler.schedule(JobTarget(principal, thread_id))

    async def purge(self, principal: Principal, thread_id: str) -> tuple[bool, int]:
        """Delete the summary object and every Redis key of a thread the caller owns."""
        thread = ThreadKey(principal.account_id, principal.agent_id, thread_id)
        summary, _ = await self._summaries.store.load(thread)
        if summary is not None and not summary.visible_to(principal.user_id):
            raise NotFound(f"thread {thread_id} not found", reason="THREAD_NOT_FOUND")
        if summary is not None:
            await self._summaries.store.delete(thread)
        return summary is not None, await self._coordination.purge(thread)

    async def summary(self, principal: Principal, thread_id: str) -> Summary | None:
        summary = await self._summaries.get(
            ThreadKey(principal.account_id, principal.agent_id, thread_id))
        if summary is None or not summary.visible_to(principal.user_id):
            return None
        return summary
