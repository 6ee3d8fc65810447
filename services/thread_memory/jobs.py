"""The summarization job and its scheduler.

A job, under the thread's Redis lock:

a. pre-compaction flush, only when the Memory capability is bound to the agent:
   one silent model turn extracts durable facts from the messages about to be
   compressed and stores them in agent memory. Best effort: a failure is logged
   and never blocks the summary. The flush guard records how far it got, so a
   retried job does not flush the same messages twice;
b. progressive summary: the previous summary plus the messages after its
   ``last_message_offset``, never the whole transcript again;
c. compare-and-set write of version = previous + 1: a writer that lost the
   race is rejected and leaves the winner's summary alone;
d. the summary is cached in Redis for an hour and the summarized messages
   leave the threshold counters.

A job that fails (object store or journal down) leaves everything as it was and
is retried with a growing delay.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from libs import tokens
from libs.errors import DomainError
from libs.identity import Principal
from libs.journal_client import JournalReader
from services.thread_memory.coordination import Coordination
from services.thread_memory.facts import FactExtractor
from services.thread_memory.summaries import Summary, SummaryStore, ThreadKey, WriteConflict
from services.thread_memory.summarizer import Summarizer
from services.thread_memory.upstreams import AgentMemoryWriter

logger = logging.getLogger(__name__)

LOCK_SECONDS = 300.0


@dataclass(frozen=True)
class JobTarget:
    owner: Principal  # the thread's owner, as the journal knows it
    thread_id: str

    @property
    def key(self) -> ThreadKey:
        return ThreadKey(self.owner.account_id, self.owner.agent_id, self.thread_id)


class Status(enum.StrEnum):
    WRITTEN = "written"
    UP_TO_DATE = "up_to_date"
    LOCKED = "locked"  # another worker holds the lock
    LOST_RACE = "lost_race"  # another writer wrote this version first


@dataclass(frozen=True)
class Outcome:
    status: Status
    summary: Summary | None
    flushed: int = 0


class Summarization:
    def __init__(self, *, journal: JournalReader, summaries: SummaryStore,
                 coordination: Coordination, summarizer: Summarizer, facts: FactExtractor,
                 memory: AgentMemoryWriter | None) -> None:
        self._journal = journal
        self._summaries = summaries
        self._coordination = coordination
        self._summarizer = summarizer
        self._facts = facts
        self._memory = memory

    async def run(self, target: JobTarget) -> Outcome:
        token = await self._coordination.acquire(target.key, LOCK_SECONDS)
        if token is None:
            return Outcome(Status.LOCKED, None)
        try:
            return await self._run_locked(target)
        finally:
            await self._coordination.release(target.key, token)

    async def _run_locked(self, target: JobTarget) -> Outcome:
        previous, etag = await self._summaries.load(target.key)
        covered = previous.last_message_offset if previous else 0
        last = await self._journal.last_offset(target.owner, target.thread_id)
        if last <= covered:
            return Outcome(Status.UP_TO_DATE, previous)
        messages = await self._journal.between(target.owner, target.thread_id, covered, last)
        flushed = await self._flush(target, messages)
        content = await self._summarizer.summarize(previous.content if previous else None,
                                                   messages)
        summary = Summary(
            version=(previous.version if previous else 0) + 1,
            timestamp=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            last_message_offset=messages[-1].offset,
            last_message_id=messages[-1].id,
            content=content,
            token_count=tokens.count_tokens(content),
            message_count=(previous.message_count if previous else 0) + len(messages),
            generator=self._summarizer.generator,
            owner_user_id=target.owner.user_id,
        )
        try:
            await self._summaries.write(target.key, summary, expected=etag)
        except WriteConflict:
            logger.info("summary v%d of %s: another writer won; keeping theirs",
                        summary.version, target.thread_id)
            return Outcome(Status.LOST_RACE, None, flushed)
        await self._coordination.cache_summary(target.key, summary)
        await self._coordination.settle(target.key, [(m.offset, m.token_count) for m in messages])
        logger.info("summary v%d of thread %s covers offsets 1-%d (%s)", summary.version,
                    target.thread_id, summary.last_message_offset, summary.generator)
        return Outcome(Status.WRITTEN, summary, flushed)

    async def _flush(self, target: JobTarget, messages) -> int:
        """Pre-compaction flush; best effort, and only with Memory bound."""
        if self._memory is None:
            return 0
        try:
            if not await self._memory.memory_bound(target.owner):
                return 0
            done = await self._coordination.flushed_through(target.key)
            fresh = [m for m in messages if m.offset > done]
            if not fresh:
                return 0
            facts = await self._facts.extract(fresh)
            stored = 0
            for fact in facts:
                try:
                    await self._memory.store(target.owner, fact, target.thread_id,
                                             [m.id for m in fresh])
                    stored += 1
                except DomainError as exc:  # screening, capacity: skip this fact
                    logger.info("flushed fact %r not stored: %s", fact.key, exc.message)
            await self._coordination.mark_flushed(target.key, fresh[-1].offset)
            logger.info("pre-compaction flush of %s stored %d of %d facts", target.thread_id,
                        stored, len(facts))
            return stored
        except Exception as exc:
            logger.warning("pre-compaction flush of %s failed (summary continues): %s",
                           target.thread_id, exc)
            return 0


class Scheduler:
    """Runs jobs in the background, one per thread at a time, retrying failures.

    A thread scheduled while its job runs gets one more job afterwards: the
    messages that crossed the threshold during the run may not be covered by it."""

    def __init__(self, job: Summarization, *, workers: int = 2, max_delay: float = 60.0) -> None:
        self._job = job
        self._queue: asyncio.Queue[JobTarget] = asyncio.Queue()
        self._queued: set[JobTarget] = set()
        self._running: set[JobTarget] = set()
        self._again: set[JobTarget] = set()
        self._workers = workers
        self._max_delay = max_delay
        self._failures: dict[JobTarget, int] = {}
        self._tasks: list[asyncio.Task] = []
        self._busy: list[bool] = []
        self._closing = False
        self.completed = 0

    def schedule(self, target: JobTarget) -> None:
        if self._closing:
            return
        if target in self._running:
            self._again.add(target)
        elif target not in self._queued:
            self._queued.add(target)
            self._queue.put_nowait(target)

    def start(self) -> None:
        self._busy = [False] * self._workers
        self._tasks = [asyncio.create_task(self._work(i)) for i in range(self._workers)]

    async def close(self, grace: float = 10.0) -> None:
        """Let running jobs finish (up to ``grace`` seconds); queued ones are dropped
        (their threads are still over threshold and get a job on the next message).
        Idle workers are cancelled while they wait on the queue, which is safe."""
        self._closing = True
        for task, busy in zip(self._tasks, self._busy, strict=True):
            if not busy:
                task.cancel()
        done, running = await asyncio.wait(self._tasks, timeout=grace)
        for task in running:
            logger.warning("a summarization job did not finish within %.0fs of shutdown", grace)
            task.cancel()

    async def idle(self) -> None:
        """Wait until no job is queued or running (for tests and benchmarks)."""
        await self._queue.join()

    async def _work(self, index: int) -> None:
        while not self._closing:
            target = await self._queue.get()
            self._queued.discard(target)
            self._running.add(target)
            self._busy[index] = True
            try:
                await self._run(target)
            finally:
                self._busy[index] = False
                self._running.discard(target)
                if target in self._again:
                    self._again.discard(target)
                    self.schedule(target)
                self._queue.task_done()

    async def _run(self, target: JobTarget) -> None:
        try:
            outcome = await self._job.run(target)
        except Exception as exc:
            failures = self._failures.get(target, 0) + 1
            self._failures[target] = failures
            delay = min(self._max_delay, 0.5 * 2 ** failures)
            logger.warning("summarization of %s failed (attempt %d), retrying in %.1fs: %s",
                           target.thread_id, failures, delay, exc)
            asyncio.get_running_loop().call_later(delay, self.schedule, target)
            return
        self._failures.pop(target, None)
        if outcome.status == Status.LOCKED:  # someone else is on it; check again later
            asyncio.get_running_loop().call_later(1.0, self.schedule, target)
        else:
            self.completed += 1
