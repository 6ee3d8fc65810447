"""The summarization job and its scheduler.

A job, under the thread's Redis lock:

a. the durable check: the summary's last offset (object store) against the
   journal's stats after it. Below 2,000 tokens and 50 messages nothing is
   written (an operator's Summarize skips this check), so a job scheduled from a
   stale counter, a read or a restart costs one journal call and changes nothing;
b. pre-compaction flush, only when the Memory capability is bound to the agent:
   one silent model turn extracts durable facts from the messages about to be
   compressed and stores them in agent memory. Best effort: a failure is logged
   and never blocks the summary. The flush guard records how far it got, so a
   retried job does not flush the same messages twice;
c. progressive summary: the previous summary plus the messages after its
   ``last_message_offset``, never the whole transcript again;
d. compare-and-set write of version = previous + 1: a writer that lost the
   race is rejected and leaves the winner's summary alone;
e. the summary is cached in Redis for an hour and the counters restart from it.

The thread's owner (who may see the summary, whose memory the flush writes) is
the one the journal names, whoever asked for the job. A job that fails (object
store or journal down) leaves everything as it was and is retried with a
growing delay.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from libs import tokens
from libs.clients.agent_memory import AgentMemoryClient
from libs.clients.journal import JournalClient
from libs.errors import DomainError
from libs.identity import Principal
from libs.object_store import WriteConflict
from services.thread_memory.coordination import Coordination
from services.thread_memory.facts import FactExtractor
from services.thread_memory.summaries import Summary, SummaryStore, ThreadKey
from services.thread_memory.summarizer import Summarizer
from services.thread_memory.thresholds import Backlog
from services.thread_memory.upstreams import flushed, memory_bound, owner

logger = logging.getLogger(__name__)

LOCK_SECONDS = 300.0


@dataclass(frozen=True)
class JobTarget:
    principal: Principal  # someone who may read the thread: its owner, or a caller who read it
    thread_id: str

    @property
    def key(self) -> ThreadKey:
        return ThreadKey(self.principal.account_id, self.principal.agent_id, self.thread_id)

    def encode(self) -> dict:
        p = self.principal
        return {"a": p.account_id, "g": p.agent_id, "u": p.user_id, "e": p.environment,
                "t": self.thread_id}

    @classmethod
    def decode(cls, data: dict) -> JobTarget:
        return cls(Principal(data["a"], data["g"], data["u"], data["e"]), data["t"])


class Status(enum.StrEnum):
    WRITTEN = "written"
    UP_TO_DATE = "up_to_date"
    BELOW_THRESHOLD = "below_threshold"  # durable state says no summary is due yet
    LOCKED = "locked"  # another worker holds the lock
    LOST_RACE = "lost_race"  # another writer wrote this version first


@dataclass(frozen=True)
class Outcome:
    status: Status
    summary: Summary | None
    flushed: int = 0


class Summarization:
    def __init__(self, *, journal: JournalClient, summaries: SummaryStore,
                 coordination: Coordination, summarizer: Summarizer, facts: FactExtractor,
                 memory: AgentMemoryClient | None) -> None:
        self._journal = journal
        self._summaries = summaries
        self._coordination = coordination
        self._summarizer = summarizer
        self._facts = facts
        self._memory = memory

    async def run(self, target: JobTarget, *, force: bool = False) -> Outcome:
        """Summarize the thread if it is past a threshold (or, with ``force``, has
        anything new at all)."""
        token = await self._coordination.acquire(target.key, LOCK_SECONDS)
        if token is None:
            return Outcome(Status.LOCKED, None)
        try:
            return await self._run_locked(target, force)
        finally:
            await self._coordination.release(target.key, token)

    async def _run_locked(self, target: JobTarget, force: bool = False) -> Outcome:
        previous, etag = await self._summaries.load(target.key)
        covered = previous.last_message_offset if previous else 0
        stats = await self._journal.thread_stats(target.principal, target.thread_id, covered)
        backlog = Backlog.measure(covered, stats)
        if backlog is None:  # never written, purged, or not the caller's to read
            return Outcome(Status.UP_TO_DATE, previous)
        if backlog.messages == 0 or not (force or backlog.over_threshold):
            await self._coordination.remember(target.key, backlog)
            status = Status.UP_TO_DATE if backlog.messages == 0 else Status.BELOW_THRESHOLD
            return Outcome(status, previous)
        messages = await self._journal.between(target.principal, target.thread_id, covered,
                                               backlog.last_offset)
        if not messages:  # purged since the stats were read
            return Outcome(Status.UP_TO_DATE, previous)
        thread_owner = owner(stats.owner)
        flushed = await self._flush(target, thread_owner, messages)
        summary = await self._next(previous, messages, thread_owner.user_id)
        try:
            await self._summaries.write(target.key, summary, expected=etag)
        except WriteConflict:
            logger.info("summary v%d of %s: another writer won; keeping theirs",
                        summary.version, target.thread_id)
            return Outcome(Status.LOST_RACE, None, flushed)
        await self._coordination.cache_summary(target.key, summary)
        end = summary.last_message_offset
        await self._coordination.remember(target.key, Backlog(end, end, 0))
        logger.info("summary v%d of thread %s covers offsets 1-%d (%s)", summary.version,
                    target.thread_id, end, summary.generator)
        return Outcome(Status.WRITTEN, summary, flushed)

    async def _next(self, previous: Summary | None, messages,
                    owner_user_id: str | None) -> Summary:
        """The progressive summary: the previous one plus only the newer messages."""
        content = await self._summarizer.summarize(previous.content if previous else None,
                                                   messages)
        return Summary(
            version=(previous.version if previous else 0) + 1,
            timestamp=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            last_message_offset=messages[-1].offset,
            last_message_id=messages[-1].id,
            content=content,
            token_count=tokens.count_tokens(content),
            message_count=(previous.message_count if previous else 0) + len(messages),
            generator=self._summarizer.generator,
            owner_user_id=owner_user_id,
        )

    async def _flush(self, target: JobTarget, thread_owner: Principal, messages) -> int:
        """Pre-compaction flush; best effort, and only with Memory bound."""
        if self._memory is None:
            return 0
        try:
            if not await memory_bound(self._memory, thread_owner):
                return 0
            done = await self._coordination.flushed_through(target.key)
            fresh = [m for m in messages if m.offset > done]
            if not fresh:
                return 0
            facts = await self._facts.extract(fresh)
            stored = 0
            for fact in facts:
                try:
                    await self._memory.store(flushed(thread_owner, fact, target.thread_id,
                                                     [m.id for m in fresh]))
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
    messages that crossed the threshold during the run may not be covered by it.
    A job is outstanding from the moment it is scheduled until a run of it
    finishes (written, up to date, below threshold, or lost to another writer);
    the feed saves the outstanding jobs with its cursor so a restart resumes them.
    """

    def __init__(self, job: Summarization, *, workers: int = 2, max_delay: float = 60.0) -> None:
        self._job = job
        self._queue: asyncio.Queue[ThreadKey] = asyncio.Queue()
        self._targets: dict[ThreadKey, JobTarget] = {}  # outstanding
        self._queued: set[ThreadKey] = set()
        self._running: set[ThreadKey] = set()
        self._again: set[ThreadKey] = set()
        self._workers = workers
        self._max_delay = max_delay
        self._failures: dict[ThreadKey, int] = {}
        self._tasks: list[asyncio.Task] = []
        self._busy: list[bool] = []
        self._closing = False
        self._idle = asyncio.Event()
        self._idle.set()
        self.completed = 0

    @property
    def queue_depth(self) -> int:
        """Jobs waiting to run: queued, or waiting to be retried (not those running)."""
        return len(self._targets) - len(self._running)

    @property
    def running(self) -> int:
        return len(self._running)

    def outstanding(self, thread: ThreadKey) -> bool:
        return thread in self._targets

    def schedule(self, target: JobTarget) -> None:
        if self._closing:
            return
        self._targets.setdefault(target.key, target)
        self._idle.clear()
        self._enqueue(target.key)

    def _enqueue(self, key: ThreadKey) -> None:
        """Queue an outstanding job, or have it run again after the run in progress."""
        if key not in self._targets or self._closing:
            return
        if key in self._running:
            self._again.add(key)
        elif key not in self._queued:
            self._queued.add(key)
            self._queue.put_nowait(key)

    def start(self) -> None:
        self._busy = [False] * self._workers
        self._tasks = [asyncio.create_task(self._work(i)) for i in range(self._workers)]

    async def close(self, grace: float = 10.0) -> None:
        """Let running jobs finish (up to ``grace`` seconds); queued ones are dropped
        (the feed's cursor lists them for the next instance, and their threads are
        still over threshold for the next message or read). Idle workers are
        cancelled while they wait on the queue, which is safe."""
        self._closing = True
        for task, busy in zip(self._tasks, self._busy, strict=True):
            if not busy:
                task.cancel()
        done, running = await asyncio.wait(self._tasks, timeout=grace)
        for task in running:
            logger.warning("a summarization job did not finish within %.0fs of shutdown", grace)
            task.cancel()

    async def idle(self) -> None:
        """Wait until no job is outstanding (for tests and benchmarks)."""
        await self._idle.wait()

    async def _work(self, index: int) -> None:
        while not self._closing:
            key = await self._queue.get()
            self._queued.discard(key)
            self._running.add(key)
            self._busy[index] = True
            try:
                finished = await self._run(self._targets[key])
            finally:
                self._busy[index] = False
                self._running.discard(key)
                self._queue.task_done()
            if key in self._again:
                self._again.discard(key)
                self._enqueue(key)
            elif finished:
                self._done(key)

    def _done(self, key: ThreadKey) -> None:
        self._targets.pop(key, None)
        if not self._targets:
            self._idle.set()

    async def _run(self, target: JobTarget) -> bool:
        """Run the job once; False when it is to be retried later."""
        try:
            outcome = await self._job.run(target)
        except Exception as exc:
            failures = self._failures.get(target.key, 0) + 1
            self._failures[target.key] = failures
            delay = min(self._max_delay, 0.5 * 2 ** failures)
            logger.warning("summarization of %s failed (attempt %d), retrying in %.1fs: %s",
                           target.thread_id, failures, delay, exc)
            asyncio.get_running_loop().call_later(delay, self._enqueue, target.key)
            return False
        self._failures.pop(target.key, None)
        if outcome.status == Status.LOCKED:  # someone else is on it; check again later
            asyncio.get_running_loop().call_later(1.0, self._enqueue, target.key)
            return False
        self.completed += 1
        return True
