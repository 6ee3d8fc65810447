"""Following the journal's change feed, for the services that project it.

:class:`FeedFollower` follows every shard from a persisted cursor, hands events
to the consumer in batches, and moves the cursor only after the consumer has
handled them, so a restart resumes without loss (consumers are idempotent, so
a replayed batch is harmless). Streams are resubscribed every few minutes
(every call has a deadline) and after any interruption, with a growing delay.
Saving the cursor is paced and best effort: an outage of the cursor's store
must not stall the consumer.

Stopping is cooperative (:meth:`FeedFollower.stop`): the follower finishes the
batch in hand and returns. Cancelling it instead is unreliable, because
redis-py can swallow a cancellation that lands in the middle of a command.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import grpc
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb

from libs.clients.journal import JournalClient
from libs.errors import DomainError

logger = logging.getLogger(__name__)

STREAM_SECONDS = 300.0
SAVE_EVERY_SECONDS = 1.0
_END = object()  # the subscription ended (its deadline): resubscribe


class CursorStore(Protocol):
    async def load(self, shard: int) -> int: ...

    async def save(self, shard: int, position: int) -> None: ...


class FeedFollower:
    def __init__(self, journal: JournalClient, cursors: CursorStore,
                 handle: Callable[[Sequence], Awaitable[None]], *, name: str,
                 batch: int = 256,
                 content: journal_pb.FeedContent.ValueType = journal_pb.FEED_CONTENT_UNSPECIFIED,
                 ) -> None:
        """``content``: the FeedContent to subscribe to (default: messages only)."""
        self._journal = journal
        self._content = content
        self._cursors = cursors
        self._handle = handle
        self._name = name
        self._batch = batch
        self.positions: dict[int, int] = {}
        self._saved: dict[int, tuple[int, float]] = {}
        self._stop = asyncio.Event()

    def stop(self) -> None:
        """Finish the batch in hand, save the cursors, and return from run_forever."""
        self._stop.set()

    async def run_forever(self) -> None:
        shards = await self._retrying(self._journal.shard_count)
        if shards is not None:
            await asyncio.gather(*(self._follow(shard) for shard in range(shards)))
        await self.flush_cursors()

    async def flush_cursors(self) -> None:
        for shard in list(self.positions):
            await self._save(shard, force=True)

    async def _follow(self, shard: int) -> None:
        position = await self._retrying(lambda: self._cursors.load(shard))
        if position is None:
            return
        self.positions[shard] = position
        self._saved[shard] = (position, time.monotonic())
        delay = 0.5
        while not self._stop.is_set():
            try:
                await self._stream(shard)
                await self._save(shard, force=True)
            except (grpc.aio.AioRpcError, DomainError) as exc:
                logger.warning("%s: change feed of shard %d interrupted at %d: %s", self._name,
                               shard, self.positions[shard], exc)
                await self._pause(delay)
                delay = min(30.0, delay * 2)
            else:
                delay = 0.5

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)

    async def _stream(self, shard: int) -> None:
        """One subscription: a reader task buffers events; each batch is what has arrived."""
        buffered: asyncio.Queue = asyncio.Queue(maxsize=self._batch * 4)
        reader = asyncio.create_task(self._read(shard, buffered))
        try:
            finished = False
            while not finished and not self._stop.is_set():
                batch, finished = await self._next_batch(buffered)
                if batch:
                    await self._handle(batch)
                    self.positions[shard] = batch[-1].sequence
                    await self._save(shard)
        finally:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)

    async def _read(self, shard: int, buffered: asyncio.Queue) -> None:
        try:
            async for event in self._journal.follow(shard, self.positions[shard], STREAM_SECONDS,
                                                    self._content):
                await buffered.put(event)
            await buffered.put(_END)
        except grpc.aio.AioRpcError as exc:
            await buffered.put(_END if exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED else exc)
        except DomainError as exc:
            await buffered.put(exc)

    async def _next_batch(self, buffered: asyncio.Queue) -> tuple[list, bool]:
        """Events already buffered (waiting for the first), and whether the stream ended."""
        batch: list = []
        getting = asyncio.ensure_future(buffered.get())
        stopping = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({getting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if not getting.done():
            getting.cancel()
            return batch, True
        item = getting.result()
        while True:
            if item is _END:
                return batch, True
            if isinstance(item, Exception):
                if batch:  # handle what came before the failure first
                    buffered.put_nowait(item)
                    return batch, False
                raise item
            batch.append(item)
            if len(batch) >= self._batch or buffered.empty():
                return batch, False
            item = buffered.get_nowait()

    async def _save(self, shard: int, *, force: bool = False) -> None:
        position = self.positions[shard]
        saved, at = self._saved.get(shard, (0, 0.0))
        if position == saved or (not force and time.monotonic() - at < SAVE_EVERY_SECONDS):
            return
        self._saved[shard] = (saved, time.monotonic())  # paces retries while the store is down
        try:
            await self._cursors.save(shard, position)
        except DomainError as exc:
            logger.warning("%s: feed cursor not saved (will retry): %s", self._name, exc.message)
            return
        self._saved[shard] = (position, time.monotonic())

    async def _retrying(self, operation):
        """The operation's result once it succeeds; None if stopped first."""
        delay = 0.5
        while not self._stop.is_set():
            with contextlib.suppress(grpc.aio.AioRpcError, DomainError):
                return await operation()
            logger.warning("%s waits for its dependencies", self._name)
            await self._pause(delay)
            delay = min(30.0, delay * 2)
        return None
