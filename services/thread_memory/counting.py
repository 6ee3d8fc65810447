"""Counting toward the summary thresholds, from the journal's change feed.

Each shard's feed is followed (libs.feed) from a cursor kept in the object
store, so a restart resumes where it stopped. Each message adds its tokens and
one message to its thread's counters in Redis, once however often it is
delivered. When the counters are missing (Redis wiped, restarted or evicted) or
do not reach the message, they are measured again from durable state: the
summary's last offset and the journal's stats after it. A thread at 2,000
tokens or 50 messages since its last summary gets a background job, which
checks the same durable state before it writes; nothing of this runs in a
request path.

The jobs the feed scheduled and that have not finished are saved with the
cursor, so an instance stopped (or killed) with jobs queued, running or waiting
for a retry leaves them to the next one: the feed never passes a message whose
job could then be forgotten.
"""

from __future__ import annotations

import json
import logging

from libs.clients.journal import JournalClient
from libs.feed import FeedFollower
from libs.identity import Principal
from libs.object_store import ObjectStore, WriteConflict
from services.thread_memory.cached_summaries import CachedSummaries
from services.thread_memory.coordination import Coordination
from services.thread_memory.jobs import JobTarget, Scheduler
from services.thread_memory.summaries import ThreadKey
from services.thread_memory.thresholds import Backlog
from services.thread_memory.upstreams import owner

logger = logging.getLogger(__name__)

SAVE_ATTEMPTS = 5


class ObjectStoreCursors:
    """Feed positions in the object store, one object per shard with the jobs left
    outstanding, written compare-and-set. Every replica follows every shard and
    saves its own position with its own outstanding jobs: when replicas race, the
    furthest position wins, and the object always holds one replica's consistent
    snapshot (it counted every message up to its position and lists every job of
    them it has not finished), which is all a restarted replica needs."""

    def __init__(self, objects: ObjectStore) -> None:
        self._objects = objects
        self._etags: dict[int, str | None] = {}

    @staticmethod
    def _path(shard: int) -> str:
        return f"consumers/thread_memory/shard-{shard:04d}.json"

    async def load(self, shard: int) -> tuple[int, list[JobTarget]]:
        stored = await self._objects.get(self._path(shard))
        self._etags[shard] = stored.etag if stored else None
        if stored is None:
            return 0, []
        data = json.loads(stored.data)
        return data["after_sequence"], [JobTarget.decode(t) for t in data.get("pending", [])]

    async def save(self, shard: int, position: int, pending: list[JobTarget]) -> None:
        data = json.dumps({"after_sequence": position,
                           "pending": [target.encode() for target in pending]}).encode()
        for _ in range(SAVE_ATTEMPTS):
            try:
                self._etags[shard] = await self._objects.put(self._path(shard), data,
                                                             expected=self._etags.get(shard))
                return
            except WriteConflict:  # another replica saved since we read: look again
                theirs, _ = await self.load(shard)
                if theirs >= position:
                    return  # it has counted at least as far: its snapshot stands
        logger.info("feed cursor of shard %d not saved: other replicas keep saving theirs", shard)


class FeedCounter:
    def __init__(self, journal: JournalClient, coordination: Coordination,
                 summaries: CachedSummaries, objects: ObjectStore, scheduler: Scheduler) -> None:
        self._journal = journal
        self._coordination = coordination
        self._summaries = summaries
        self._scheduler = scheduler
        self._cursors = ObjectStoreCursors(objects)
        self._scheduled: dict[ThreadKey, tuple[int, JobTarget]] = {}  # by shard
        self.follower = FeedFollower(journal, self, self._count_all, name="thread memory")

    async def run_forever(self) -> None:
        await self.follower.run_forever()

    def stop(self) -> None:
        self.follower.stop()

    # -- the follower's cursor store: a position, and the jobs still outstanding ----

    async def load(self, shard: int) -> int:
        position, pending = await self._cursors.load(shard)
        for target in pending:
            self._schedule(shard, target)
        if pending:
            logger.info("resuming %d summarization jobs left outstanding on shard %d",
                        len(pending), shard)
        return position

    async def save(self, shard: int, position: int) -> None:
        finished = [k for k in self._scheduled if not self._scheduler.outstanding(k)]
        for key in finished:
            del self._scheduled[key]
        pending = [target for s, target in self._scheduled.values() if s == shard]
        await self._cursors.save(shard, position, pending)

    # -- counting ---------------------------------------------------------------------

    async def _count_all(self, events) -> None:
        for event in events:
            await self.count(event)

    async def count(self, event) -> None:
        thread = ThreadKey(event.principal.account_id, event.principal.agent_id, event.thread_id)
        thread_owner = owner(event.principal)
        backlog = await self._coordination.count(thread, event.message.offset,
                                                 event.message.token_count)
        if backlog is None:
            backlog = await self._measure(thread_owner, thread)
        # Also for a redelivered message: a job scheduled before a crash may be lost.
        if backlog is not None and backlog.over_threshold:
            self._schedule(event.shard, JobTarget(thread_owner, event.thread_id))

    async def _measure(self, thread_owner: Principal, thread: ThreadKey) -> Backlog | None:
        end = await self._summaries.end(thread)
        stats = await self._journal.thread_stats(thread_owner, thread.thread_id, end)
        backlog = Backlog.measure(end, stats)
        if backlog is not None:
            await self._coordination.remember(thread, backlog)
        return backlog

    def _schedule(self, shard: int, target: JobTarget) -> None:
        self._scheduled[target.key] = (shard, target)
        self._scheduler.schedule(target)
