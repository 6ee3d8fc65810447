"""Counting toward the summary thresholds, from the journal's change feed.

Each shard's feed is followed from a cursor kept in the object store (so a
restart resumes where it stopped); each message is claimed once in Redis and
adds its tokens and one message to its thread's counters. A thread that
reaches 2,000 tokens or 50 messages since its last summary gets a background
summarization job; nothing of this runs in a request path.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

import grpc

from libs.errors import DomainError
from services.thread_memory.coordination import Coordination
from services.thread_memory.jobs import JobTarget, Scheduler
from services.thread_memory.summaries import ObjectStore, ThreadKey, WriteConflict
from services.thread_memory.upstreams import JournalReader, owner

logger = logging.getLogger(__name__)

TOKEN_THRESHOLD = 2000
MESSAGE_THRESHOLD = 50
STREAM_SECONDS = 300.0  # resubscribe this often (every call has a deadline)
SAVE_EVERY_SECONDS = 1.0


def over_threshold(tokens: int, messages: int) -> bool:
    return tokens >= TOKEN_THRESHOLD or messages >= MESSAGE_THRESHOLD


class Cursor:
    """A shard's position in the feed, in the object store, written compare-and-set."""

    def __init__(self, objects: ObjectStore, shard: int) -> None:
        self._objects = objects
        self._path = f"consumers/thread_memory/shard-{shard:04d}.json"
        self._etag: str | None = None
        self.position = 0
        self._saved = 0
        self._saved_at = 0.0

    async def load(self) -> int:
        stored = await self._objects.get(self._path)
        if stored is not None:
            self._etag = stored.etag
            self.position = self._saved = json.loads(stored.data)["after_sequence"]
        return self.position

    async def save(self, *, force: bool = False) -> None:
        if self.position == self._saved:
            return
        if not force and time.monotonic() - self._saved_at < SAVE_EVERY_SECONDS:
            return
        self._saved_at = time.monotonic()  # also paces retries while the store is down
        data = json.dumps({"after_sequence": self.position}).encode()
        try:
            self._etag = await self._objects.put(self._path, data, expected=self._etag)
        except WriteConflict:  # another replica moved it: keep the furthest
            stored = await self._objects.get(self._path)
            theirs = json.loads(stored.data)["after_sequence"] if stored else 0
            self._etag = stored.etag if stored else None
            if theirs >= self.position:
                self.position = theirs
            else:
                self._etag = await self._objects.put(self._path, data, expected=self._etag)
        self._saved = self.position


class FeedCounter:
    def __init__(self, journal: JournalReader, coordination: Coordination,
                 objects: ObjectStore, scheduler: Scheduler) -> None:
        self._journal = journal
        self._coordination = coordination
        self._objects = objects
        self._scheduler = scheduler
        self.cursors: dict[int, Cursor] = {}

    async def run_forever(self) -> None:
        shards = await self._retrying(self._journal.shard_count)
        await asyncio.gather(*(self._follow(shard) for shard in range(shards)))

    async def _follow(self, shard: int) -> None:
        cursor = self.cursors[shard] = Cursor(self._objects, shard)
        await self._retrying(cursor.load)
        delay = 0.5
        while True:
            try:
                async for event in self._journal.follow(shard, cursor.position, STREAM_SECONDS):
                    await self.count(event)
                    cursor.position = event.sequence
                    await self._save(cursor)
                    delay = 0.5
                await self._save(cursor, force=True)
            except (grpc.aio.AioRpcError, DomainError) as exc:
                if not (isinstance(exc, grpc.aio.AioRpcError)
                        and exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED):
                    logger.warning("change feed of shard %d interrupted at %d: %s", shard,
                                   cursor.position, exc)
                    await asyncio.sleep(delay)
                    delay = min(30.0, delay * 2)

    @staticmethod
    async def _save(cursor: Cursor, *, force: bool = False) -> None:
        """Progress is kept on a best-effort basis: claims make a replay harmless, so an
        object-store outage must not stall counting."""
        try:
            await cursor.save(force=force)
        except DomainError as exc:
            logger.warning("feed cursor not saved (will retry): %s", exc.message)

    async def count(self, event) -> None:
        thread = ThreadKey(event.principal.account_id, event.principal.agent_id, event.thread_id)
        counted = await self._coordination.count(thread, event.message.offset,
                                                 event.message.token_count)
        if counted is not None and over_threshold(*counted):
            self._scheduler.schedule(JobTarget(owner(event.principal), event.thread_id))

    async def _retrying(self, operation):
        delay = 0.5
        while True:
            try:
                return await operation()
            except (grpc.aio.AioRpcError, DomainError) as exc:
                logger.warning("thread memory waits for its dependencies: %s", exc)
                await asyncio.sleep(delay)
                delay = min(30.0, delay * 2)
