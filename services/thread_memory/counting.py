"""Counting toward the summary thresholds, from the journal's change feed.

Each shard's feed is followed (libs.feed) from a cursor kept in the object
store, so a restart resumes where it stopped; each message is claimed once in Redis and
adds its tokens and one message to its thread's counters. A thread that
reaches 2,000 tokens or 50 messages since its last summary gets a background
summarization job; nothing of this runs in a request path.
"""

from __future__ import annotations

import json
import logging

from libs.feed import FeedFollower
from libs.journal_client import JournalReader
from services.thread_memory.coordination import Coordination
from services.thread_memory.jobs import JobTarget, Scheduler
from services.thread_memory.summaries import ObjectStore, ThreadKey, WriteConflict
from services.thread_memory.upstreams import owner

logger = logging.getLogger(__name__)

TOKEN_THRESHOLD = 2000
MESSAGE_THRESHOLD = 50


def over_threshold(tokens: int, messages: int) -> bool:
    return tokens >= TOKEN_THRESHOLD or messages >= MESSAGE_THRESHOLD


class ObjectStoreCursors:
    """Feed positions in the object store, one object per shard, written compare-and-set
    (when replicas race, the furthest position wins)."""

    def __init__(self, objects: ObjectStore) -> None:
        self._objects = objects
        self._etags: dict[int, str | None] = {}

    @staticmethod
    def _path(shard: int) -> str:
        return f"consumers/thread_memory/shard-{shard:04d}.json"

    async def load(self, shard: int) -> int:
        stored = await self._objects.get(self._path(shard))
        self._etags[shard] = stored.etag if stored else None
        return json.loads(stored.data)["after_sequence"] if stored else 0

    async def save(self, shard: int, position: int) -> None:
        data = json.dumps({"after_sequence": position}).encode()
        try:
            self._etags[shard] = await self._objects.put(self._path(shard), data,
                                                         expected=self._etags.get(shard))
        except WriteConflict:
            theirs = await self.load(shard)
            if theirs < position:
                self._etags[shard] = await self._objects.put(self._path(shard), data,
                                                             expected=self._etags[shard])


class FeedCounter:
    def __init__(self, journal: JournalReader, coordination: Coordination,
                 objects: ObjectStore, scheduler: Scheduler) -> None:
        self._coordination = coordination
        self._scheduler = scheduler
        self.follower = FeedFollower(journal, ObjectStoreCursors(objects), self._count_all,
                                     name="thread memory")

    async def run_forever(self) -> None:
        await self.follower.run_forever()

    def stop(self) -> None:
        self.follower.stop()

    async def _count_all(self, events) -> None:
        for event in events:
            await self.count(event)

    async def count(self, event) -> None:
        thread = ThreadKey(event.principal.account_id, event.principal.agent_id, event.thread_id)
        counted = await self._coordination.count(thread, event.message.offset,
                                                 event.message.token_count)
        if counted is not None and over_threshold(*counted):
            self._scheduler.schedule(JobTarget(owner(event.principal), event.thread_id))
