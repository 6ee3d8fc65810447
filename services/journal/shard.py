"""One journal shard: a SlateDB database with a single fenced writer.

Writes: appends queue up for the shard's committer, which plans everything
queued into one atomic batch (see ``commit``), hands it to SlateDB, and moves
on to the next group while the previous one becomes durable (``wal``: the WAL
is flushed once written, at most once per flush interval). Each append is
answered once its batch is durable; because SlateDB's write-ahead log is
ordered, a batch is durable only once every earlier batch is.

The writer's view of each thread (next offset, owner) lives in memory and is
loaded from the database on first use: nothing else writes this database
while this writer is alive. When another writer opens the database, this one
is fenced: every later call fails with JOURNAL_FENCED (UNAVAILABLE: the shard
is served elsewhere now, so a client may retry there), and nothing this writer
did not acknowledge as durable is ever reported as written. A failed write
stops the writer altogether (fail-stop): its view can no longer be trusted. A
writer that loses its lease is stopped the same way (:meth:`Shard.stop`).

Reads only ever return durable data.

Run boundaries (``runs``) are written by the same committer. The shard keeps
the idle deadline of every open run in memory (rebuilt from the ``o/``
markers when it opens) and a sweeper closes the runs whose deadline passed: it
sleeps until the earliest deadline, and while no run is open, until one opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
from collections.abc import Callable, Sequence

from agentmemory.common.v1 import message_pb2
from slatedb.uniffi import (
    CloseReason,
    Db,
    DbBuilder,
    DbCache,
    DurabilityLevel,
    Error,
    FlushOptions,
    FlushType,
    IterationOrder,
    KeyRange,
    MokaCacheOptions,
    ObjectStore,
    ReadOptions,
    ScanOptions,
    Settings,
    WriteBatch,
)

from libs.errors import DomainError, FailedPrecondition, NotFound, Unavailable
from services.journal import keys
from services.journal.commit import (
    CommitGroup,
    Pending,
    PendingAppend,
    PendingRun,
    PlannedAppend,
    ThreadStates,
)
from services.journal.keys import ThreadRef
from services.journal.records import (
    AppendResult,
    FeedEntry,
    FeedEvent,
    ThreadState,
    ThreadStats,
    ToolCallLocation,
)
from services.journal.runs import OpenRun, Outcome, RunRecord
from services.journal.validation import PreparedMessage
from services.journal.wal import WalFlusher, flush

logger = logging.getLogger(__name__)

# Whoever opens the shard next (a standby taking it over, a restart) replays the
# WAL written since the memtable was last flushed, one object per WAL flush: on
# S3, 2,000 of them take about 2 s. Flushing the memtable every few seconds when
# something was written bounds that replay (SlateDB alone flushes it only every
# 4,096 WAL flushes).
MEMTABLE_FLUSH_SECONDS = 5.0
# The sweeper looks again at least this often, whatever the deadlines say (the wall clock
# its deadlines are read on may be set back or forward).
LONGEST_SWEEP_SLEEP_SECONDS = 60.0
# A run the sweeper could not close (the write failed, the clock went back) is tried again
# this much later: its deadline, still due, would bring the sweeper round at once, forever.
SWEEP_RETRY_MS = 5_000

_DURABLE_READ = ReadOptions(
    durability_filter=DurabilityLevel.REMOTE, dirty=False, cache_blocks=True
)


def _scan_options(order: IterationOrder = IterationOrder.ASCENDING,
                  durable: bool = True) -> ScanOptions:
    return ScanOptions(
        durability_filter=DurabilityLevel.REMOTE if durable else DurabilityLevel.MEMORY,
        dirty=False,
        read_ahead_bytes=1,
        cache_blocks=True,
        max_fetch_tasks=1,
        order=order,
    )


def block_cache(megabytes: int) -> DbCache | None:
    """SlateDB's cache of the blocks, indexes and filters read, at most ``megabytes``
    (None: no cache). Left to itself, SlateDB gives each database one of 640 MiB (512 for
    blocks, 128 for indexes and filters) and every block read stays, those of SSTs that
    compactions replaced too: a journal grew with the data it read back, for hours
    before reaching that bound."""
    if not megabytes:
        return None
    return DbCache.new_moka_cache(MokaCacheOptions(
        max_capacity=megabytes * 2**20, time_to_live=None, time_to_idle=None))


def fenced_error(shard: int) -> Unavailable:
    return Unavailable(
        f"journal shard {shard} is fenced: a newer journal writer has taken over",
        reason="JOURNAL_FENCED",
        metadata={"shard": str(shard)},
        elsewhere=True,
    )


# What a subscription asks for (journal_service.proto's FeedContent).
MESSAGES, MESSAGES_AND_RUNS, RUNS = 0, 1, 2
DEFAULT_IDLE_TIMEOUT_MS = 30 * 60 * 1000


class Shard:
    def __init__(self, index: int, db: Db, last_sequence: int, *, flush_interval_ms: int,
                 idle_timeout_ms: int = DEFAULT_IDLE_TIMEOUT_MS,
                 open_runs: dict[ThreadRef, int] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.index = index
        self._db = db
        self._threads = ThreadStates(db)
        self._idle_timeout_ms = idle_timeout_ms
        self._clock = clock
        # Open runs' idle deadlines (ms since the epoch), for the sweeper, which sleeps
        # until _sweep_at unless a run's deadline comes earlier (_deadline_sooner).
        self._deadlines: dict[ThreadRef, int] = dict(open_runs or {})
        self._sweep_at: float = 0
        self._deadline_sooner = asyncio.Event()
        self._write_lock = asyncio.Lock()
        self._next_sequence = last_sequence + 1
        self._durable_sequence = last_sequence
        self._advanced = asyncio.Event()
        self._failure: DomainError | None = None
        self._failed = asyncio.Event()
        self._closing = False
        self._queue: list[Pending] = []
        self._queued = asyncio.Event()
        self._settling: set[asyncio.Task] = set()
        #: Told (appends, messages) of every batch written (the metrics' flush sizes).
        self.on_commit: Callable[[int, int], None] | None = None
        self._wal = WalFlusher(db, flush_interval_ms / 1000,
                               lambda exc: self._fail(self._translate(exc)))
        self._committer = asyncio.create_task(self._commit_forever())
        self._sweeper = asyncio.create_task(self._sweep_forever())
        self._memtable_flusher = asyncio.create_task(self._flush_memtable_forever())

    @classmethod
    async def open(
        cls, *, index: int, count: int, store: ObjectStore, path: str, flush_interval_ms: int,
        idle_timeout_ms: int = DEFAULT_IDLE_TIMEOUT_MS, clock: Callable[[], float] = time.time,
        cache: DbCache | None = None,
    ) -> Shard:
        """Open (and so fence any previous writer of) shard ``index`` of ``count``, its reads
        cached in ``cache`` (shared with the process's other shards; None: not cached)."""
        settings = Settings.default()
        settings.set("flush_interval", "null")  # no timer: the shard flushes (``wal``)
        builder = DbBuilder(path, store)
        builder.with_settings(settings)
        if cache is None:
            builder.with_db_cache_disabled()
        else:
            builder.with_db_cache(cache, index)  # the shard's entries apart from the others'
        db = await builder.build()
        try:
            await _check_layout(db, index, count)
            last_sequence = await _last_sequence(db)
            open_runs = await _open_runs(db, idle_timeout_ms)
        except BaseException:
            await db.shutdown()
            raise
        logger.info("shard %d open at %s, feed sequence %d, %d open run(s)", index, path,
                    last_sequence, len(open_runs))
        return cls(index, db, last_sequence, idle_timeout_ms=idle_timeout_ms,
                   flush_interval_ms=flush_interval_ms, open_runs=open_runs, clock=clock)

    # -- state ---------------------------------------------------------------

    @property
    def durable_sequence(self) -> int:
        return self._durable_sequence

    def serving(self) -> bool:
        """False once fenced or failed; notices a takeover even without a write
        (SlateDB polls its manifest)."""
        if self._failure is None and self._db.status().close_reason == CloseReason.FENCED:
            self._fail(fenced_error(self.index))
        return self._failure is None

    async def until_failed(self, fencing_poll_seconds: float) -> None:
        """Return once the shard stops serving: at once when it fails by itself (a write
        failed, it was stopped), within ``fencing_poll_seconds`` of SlateDB noticing a
        newer writer (that shows only in its status, refreshed from the manifest each
        second)."""
        while self.serving():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._failed.wait(), fencing_poll_seconds)

    def stop(self, error: DomainError) -> None:
        """Stop writing at once (fail-stop): every later call fails with ``error``."""
        self._fail(error)

    def _fail(self, error: DomainError) -> None:
        if self._failure is None:
            logger.error("shard %d stops serving: %s", self.index, error.message)
            self._failure = error
            self._failed.set()
        self._wake()

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            raise self._failure

    def _wake(self) -> None:
        self._advanced.set()
        self._advanced = asyncio.Event()

    def _translate(self, exc: Exception) -> DomainError:
        if isinstance(exc, Error.Closed) and exc.reason == CloseReason.FENCED:
            self._fail(fenced_error(self.index))
            return self._failure  # type: ignore[return-value]
        return Unavailable(
            f"journal shard {self.index} storage failed: {exc}", reason="JOURNAL_UNAVAILABLE"
        )

    # -- writes --------------------------------------------------------------

    async def append(
        self,
        thread: ThreadRef,
        user_id: str | None,
        environment: str,
        batch: Sequence[PreparedMessage],
    ) -> tuple[list[AppendResult], int]:
        """Append ``batch``; returns once it is durable, with the thread's last offset."""
        self._raise_if_failed()
        pending = PendingAppend(
            thread, user_id, environment, batch, asyncio.get_running_loop().create_future()
        )
        self._queue.append(pending)
        self._queued.set()
        return await pending.future

    async def run_boundary(self, thread: ThreadRef, user_id: str | None, environment: str,
                           action: str, run_id: str,
                           outcome: Outcome | None = None) -> tuple[RunRecord | None, bool]:
        """Start, finish or expire a run; returns once durable, with (run, deduplicated)."""
        self._raise_if_failed()
        pending = PendingRun(thread, user_id, environment, action, run_id, outcome,
                             asyncio.get_running_loop().create_future())
        self._queue.append(pending)
        self._queued.set()
        return await pending.future

    def _set_deadline(self, thread: ThreadRef, deadline_ms: int) -> None:
        self._deadlines[thread] = deadline_ms
        if deadline_ms < self._sweep_at:
            self._deadline_sooner.set()

    async def _sleep_until_a_deadline(self) -> None:
        """Until the earliest open run's deadline, or one sooner is set (no open run: until
        one opens); at most LONGEST_SWEEP_SLEEP_SECONDS."""
        self._deadline_sooner.clear()
        self._sweep_at = min(self._deadlines.values(), default=math.inf)
        if self._sweep_at == math.inf:
            await self._deadline_sooner.wait()
            return
        seconds = (self._sweep_at - int(self._clock() * 1000)) / 1000
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._deadline_sooner.wait(),
                                   min(LONGEST_SWEEP_SLEEP_SECONDS, max(0.0, seconds)))

    async def _sweep_forever(self) -> None:
        """Close the open runs whose idle deadline passed (see ``runs``)."""
        while self._failure is None:
            await self._sleep_until_a_deadline()
            now_ms = int(self._clock() * 1000)
            due = [(t, deadline) for t, deadline in self._deadlines.items() if deadline <= now_ms]
            results = await asyncio.gather(
                *(self.run_boundary(t, None, "", "expire", "") for t, _ in due),
                return_exceptions=True)
            for (thread, deadline), result in zip(due, results, strict=True):
                if self._deadlines.get(thread) == deadline:  # neither closed nor extended
                    self._deadlines[thread] = now_ms + SWEEP_RETRY_MS
                if isinstance(result, DomainError) and self._failure is None:
                    logger.warning("shard %d: closing the idle run of %s failed: %s", self.index,
                                   thread.thread_id, result.message)

    async def _commit_forever(self) -> None:
        while True:
            await self._queued.wait()
            self._queued.clear()
            group, self._queue = self._queue, []
            try:
                await self._commit(group)
            except asyncio.CancelledError:
                _reject(group, self._failure or _shutting_down())
                raise

    async def _commit(self, pendings: list[Pending]) -> None:
        async with self._write_lock:
            if self._failure is not None:
                _reject(pendings, self._failure)
                return
            group = CommitGroup(self._db, self._threads, self._next_sequence,
                                now_ms=int(self._clock() * 1000),
                                idle_timeout_ms=self._idle_timeout_ms)
            planned: list[PlannedAppend] = []
            try:
                for pending in pendings:
                    if not pending.future.done():
                        try:
                            planned.append(await group.plan(pending))
                        except DomainError as error:
                            pending.settle(error=error)
            except Exception as exc:  # a read failed: nothing was written
                _reject(pendings, self._translate(exc))
                return
            batch = group.write_batch()
            try:
                handle = None if batch is None else await self._write(batch)
            except Exception as exc:
                # The batch may or may not have reached SlateDB: stop (fail-stop).
                failure = self._translate(exc)
                self._fail(failure)
                _reject(pendings, failure)
                return
            group.remember_states()
            if batch is not None and self.on_commit is not None:
                self.on_commit(len(planned), group.next_sequence - self._next_sequence)
            for thread, run in group.open_runs():
                if run is None:
                    self._deadlines.pop(thread, None)
                else:
                    self._set_deadline(thread, run.deadline_ms(self._idle_timeout_ms))
            self._next_sequence = group.next_sequence
        settle = asyncio.create_task(self._settle(handle, self._next_sequence - 1, planned))
        self._settling.add(settle)
        settle.add_done_callback(self._settling.discard)

    async def _write(self, batch: WriteBatch):
        """Hand ``batch`` to SlateDB; its handle turns durable with the next WAL flush."""
        handle = await self._db.write(batch)
        self._wal.written()
        return handle

    async def _settle(self, handle, sequence: int, planned: list[PlannedAppend]) -> None:
        """Answer the group's appends once everything up to ``sequence`` is durable."""
        try:
            await self._await_durable(handle, sequence)
        except DomainError as error:
            _reject([p.pending for p in planned], error)
            return
        for outcome in planned:
            outcome.pending.settle(outcome.answer())

    async def _await_durable(self, handle, sequence: int) -> None:
        if handle is not None:
            try:
                await handle.await_durable()
            except Exception as exc:
                error = self._translate(exc)
                self._fail(error)
                raise error from exc
            self._advance(sequence)
            return
        # Nothing new was written (every message already existed): answer only
        # once the batches that wrote them are durable.
        while self._durable_sequence < sequence:
            self._raise_if_failed()
            await self._advanced.wait()

    def _advance(self, sequence: int) -> None:
        if sequence > self._durable_sequence:
            self._durable_sequence = sequence
            self._wake()

    # -- reads (durable data only) ---------------------------------------------

    async def thread_state(self, thread: ThreadRef, user_id: str | None) -> ThreadState | None:
        """The durable state of ``thread`` if the caller may see it."""
        self._raise_if_failed()
        raw = await self._guard(self._db.get_with_options(keys.thread_state(thread), _DURABLE_READ))
        if raw is None:
            return None
        state = ThreadState.decode(raw)
        return state if state.visible_to(user_id) else None

    async def thread_stats(self, thread: ThreadRef, user_id: str | None,
                           after_offset: int) -> ThreadStats | None:
        """The thread's state, and its messages and tokens after ``after_offset``."""
        state = await self.thread_state(thread, user_id)
        if state is None:
            return None
        count = state.message_count
        after = min(max(after_offset, 0), count)
        return ThreadStats(thread, state, count - after,
                           await self._tokens_after(thread, state, after))

    async def _tokens_after(self, thread: ThreadRef, state: ThreadState, after: int) -> int:
        """Messages never change once written and the state's total is their sum, so
        only the shorter side of the thread is read: the tail, or the head."""
        count = state.message_count
        if after == 0:
            return state.token_count
        if after == count:
            return 0
        if count - after <= after:
            tail = await self._scan(keys.message(thread, after + 1), keys.message(thread, count + 1),
                                    count - after)
            return sum(_message(raw).token_count for _, raw in tail)
        head = await self._scan(keys.message(thread, 1), keys.message(thread, after + 1), after)
        return state.token_count - sum(_message(raw).token_count for _, raw in head)

    async def _visible(self, thread: ThreadRef, user_id: str | None) -> bool:
        """Whether the caller may read the thread. A thread's owner never changes, so
        the writer's cached view answers when it has the thread."""
        self._raise_if_failed()
        cached = self._threads.peek(thread)
        if cached is not None:
            return cached.visible_to(user_id)
        return await self.thread_state(thread, user_id) is not None

    async def read_recent(
        self, thread: ThreadRef, user_id: str | None, limit: int, *, with_open_run: bool = False
    ) -> tuple[list[message_pb2.Message], OpenRun | None]:
        """The last ``limit`` messages, oldest first, and with ``with_open_run`` the
        thread's open run (from its durable state, as ``get_run`` reads it)."""
        run = None
        if with_open_run:
            state = await self.thread_state(thread, user_id)
            if state is None:
                return [], None
            run = state.run
        elif not await self._visible(thread, user_id):
            return [], None
        prefix = keys.messages_prefix(thread)
        rows = await self._scan(prefix, keys.prefix_end(prefix), limit, IterationOrder.DESCENDING)
        return [_message(value) for _, value in reversed(rows)], run

    async def read_range(
        self, thread: ThreadRef, user_id: str | None, from_offset: int, limit: int
    ) -> tuple[list[message_pb2.Message], int | None]:
        """Up to ``limit`` messages from ``from_offset``, and the next offset if more exist."""
        if not await self._visible(thread, user_id):
            return [], None
        end = keys.prefix_end(keys.messages_prefix(thread))
        rows = await self._scan(keys.message(thread, max(from_offset, 1)), end, limit + 1)
        following = keys.offset_of(rows[limit][0]) if len(rows) > limit else None
        return [_message(value) for _, value in rows[:limit]], following

    async def message_at(self, thread: ThreadRef, offset: int) -> message_pb2.Message | None:
        raw = await self._guard(self._db.get_with_options(keys.message(thread, offset), _DURABLE_READ))
        return None if raw is None else _message(raw)

    async def tool_call_locations(
        self, account_id: str, agent_id: str, user_id: str | None, tool_call_id: str,
        thread_id: str | None,
    ) -> list[ToolCallLocation]:
        """Visible places ``tool_call_id`` was used, in one thread or in all."""
        self._raise_if_failed()
        if thread_id is not None:
            thread = ThreadRef(account_id, agent_id, thread_id)
            found = await self._tool_call_at(keys.tool_call(thread, tool_call_id))
            candidates = [found] if found else []
        else:
            prefix = keys.tool_calls_prefix(account_id, agent_id, tool_call_id)
            rows = await self._scan(prefix, keys.prefix_end(prefix), 100)
            candidates = [ToolCallLocation.decode(key, value) for key, value in rows]
        visible = []
        for location in candidates:
            if location.call_offset and await self._visible(location.thread, user_id):
                visible.append(location)
        return visible

    async def _tool_call_at(self, key: bytes) -> ToolCallLocation | None:
        raw = await self._guard(self._db.get_with_options(key, _DURABLE_READ))
        return None if raw is None else ToolCallLocation.decode(key, raw)

    async def _is_purged(self, thread: ThreadRef) -> bool:
        raw = await self._guard(self._db.get_with_options(keys.purged(thread), _DURABLE_READ))
        return raw is not None

    # -- purge ---------------------------------------------------------------

    async def purge(self, thread: ThreadRef, user_id: str | None) -> int:
        """Delete every message of a thread and its indexes; returns how many messages.

        A purge marker stays, so the thread id cannot be reused (old change-feed
        entries must never resolve to new messages)."""
        self._raise_if_failed()
        async with self._write_lock:
            self._raise_if_failed()
            state = await self._threads.get(thread)
            if state is None or not state.visible_to(user_id):
                raise NotFound(f"thread {thread.thread_id} not found", reason="THREAD_NOT_FOUND")
            batch = WriteBatch()
            prefix = keys.messages_prefix(thread)
            removed = 0
            for key, raw in await self._scan(prefix, keys.prefix_end(prefix), 10**9,
                                             durable=False):
                message = _message(raw)
                for call in message.tool_calls:
                    batch.delete(keys.tool_call(thread, call.id))
                batch.delete(key)
                removed += 1
            for prefix in (keys.message_ids_prefix(thread), keys.runs_prefix(thread)):
                for key, _ in await self._scan(prefix, keys.prefix_end(prefix), 10**9,
                                               durable=False):
                    batch.delete(key)
            batch.delete(keys.open_run(thread))
            batch.delete(keys.thread_state(thread))
            batch.put(keys.purged(thread), b"{}")
            try:
                handle = await self._write(batch)
            except Exception as exc:
                error = self._translate(exc)
                self._fail(error)
                raise error from exc
            self._threads.forget(thread)
            self._deadlines.pop(thread, None)
        await self._await_durable(handle, self._next_sequence - 1)
        return removed

    # -- runs ------------------------------------------------------------------

    async def get_run(self, thread: ThreadRef, user_id: str | None,
                      run_id: str | None) -> RunRecord | None:
        """A durable run of the thread, or its open run when ``run_id`` is None."""
        state = await self.thread_state(thread, user_id)
        if state is None:
            return None
        if state.run is not None and (run_id is None or run_id == state.run.run_id):
            return RunRecord.opened(state.run, state.message_count)
        if run_id is None:
            return None
        raw = await self._guard(self._db.get_with_options(keys.run(thread, run_id),
                                                          _DURABLE_READ))
        return None if raw is None else RunRecord.decode(raw)

    # -- change feed ---------------------------------------------------------

    async def read_feed(self, after_sequence: int, limit: int,
                        content: int = MESSAGES) -> tuple[list[FeedEvent], int]:
        """Durable feed events with a sequence greater than ``after_sequence`` of the kind
        ``content`` asks for, and the last sequence read (the next cursor)."""
        self._raise_if_feed_closed()
        last = min(self._durable_sequence, after_sequence + limit)
        if last <= after_sequence:
            return [], after_sequence
        rows = await self._scan(keys.feed(after_sequence + 1), keys.feed(last + 1), limit)
        events = []
        for key, value in rows:
            entry = FeedEntry.decode(value)
            if not _wanted(entry, content):
                continue
            if entry.boundary is not None:
                if not await self._is_purged(entry.thread):
                    events.append(FeedEvent(keys.sequence_of(key), self.index, entry.thread,
                                            entry.owner_user, entry.environment, None,
                                            entry.boundary))
                continue
            message = await self.message_at(entry.thread, entry.offset)
            if message is None and await self._is_purged(entry.thread):
                continue  # the thread was purged: its events are gone with it
            if message is None:
                raise Unavailable(
                    f"feed entry {keys.sequence_of(key)} points at a missing message",
                    reason="JOURNAL_UNAVAILABLE",
                )
            events.append(FeedEvent(keys.sequence_of(key), self.index, entry.thread,
                                    entry.owner_user, entry.environment, message))
        return events, last

    async def wait_for_feed(self, after_sequence: int) -> None:
        """Return once the durable sequence passes ``after_sequence``; raise once the shard
        fails or shuts down (both wake every waiter)."""
        while self._durable_sequence <= after_sequence:
            self._raise_if_feed_closed()
            await self._advanced.wait()
        self._raise_if_feed_closed()

    def _raise_if_feed_closed(self) -> None:
        self._raise_if_failed()
        if self._closing:
            raise _shutting_down()

    async def _flush_memtable_forever(self) -> None:
        """MEMTABLE_FLUSH_SECONDS after the first write since the last flush, flush again;
        nothing to flush, no timer."""
        flushed = self._durable_sequence
        while self._failure is None:
            while self._durable_sequence == flushed and self._failure is None:
                await self._advanced.wait()
            await asyncio.sleep(MEMTABLE_FLUSH_SECONDS)
            if self._failure is not None:
                return
            sequence = self._durable_sequence
            try:
                await self._db.flush_with_options(FlushOptions(flush_type=FlushType.MEM_TABLE))
            except Exception as exc:  # fenced: the shard stops; otherwise the next try
                error = self._translate(exc)
                logger.warning("shard %d: memtable not flushed: %s", self.index, error.message)
                continue
            flushed = sequence

    # -- lifecycle -----------------------------------------------------------

    def begin_shutdown(self) -> None:
        """End change-feed streams (consumers resume elsewhere); other calls finish."""
        self._closing = True
        self._wake()

    async def close(self) -> None:
        """Refuse further appends, answer those in flight, flush and close."""
        if self._failure is None:
            self._failure = _shutting_down()
            self._wake()
        self._sweeper.cancel()
        async with self._write_lock:  # the group being written completes first
            self._committer.cancel()
            self._memtable_flusher.cancel()
            _reject(self._queue, self._failure)
            self._queue = []
        await asyncio.gather(self._committer, self._sweeper, self._memtable_flusher,
                             *self._settling,
                             return_exceptions=True)
        await self._wal.close()  # the appends in flight were answered: nothing left to flush
        try:
            await self._db.shutdown()
        except Error.Closed:
            pass  # already fenced: nothing of ours is left to flush

    async def _scan(self, start: bytes, end: bytes, limit: int, order=IterationOrder.ASCENDING,
                    *, durable: bool = True):
        scan_range = KeyRange(start=start, start_inclusive=True, end=end, end_inclusive=False)
        options = _scan_options(order, durable)
        iterator = await self._guard(self._db.scan_with_options(scan_range, options))
        rows: list = []
        while len(rows) < limit:
            wanted = min(1000, limit - len(rows))
            batch = await self._guard(iterator.next_batch(wanted))
            rows += batch
            if len(batch) < wanted:
                break
        return [(row.key, row.value) for row in rows]

    async def _guard(self, operation):
        try:
            return await operation
        except Exception as exc:
            raise self._translate(exc) from exc


def _shutting_down() -> Unavailable:
    return Unavailable("journal is shutting down", reason="SHUTTING_DOWN", elsewhere=True)


def _reject(pendings: list[Pending], error: DomainError) -> None:
    for pending in pendings:
        pending.settle(error=error)


def _wanted(entry: FeedEntry, content: int) -> bool:
    return content != RUNS if entry.boundary is None else content != MESSAGES


def _message(raw: bytes) -> message_pb2.Message:
    return message_pb2.Message.FromString(raw)


async def _check_layout(db: Db, index: int, count: int) -> None:
    raw = await db.get(keys.LAYOUT)
    if raw is None:
        handle = await db.put(keys.LAYOUT, json.dumps({"shard": index, "count": count}).encode())
        await flush(db)
        await handle.await_durable()
        return
    layout = json.loads(raw)
    if layout != {"shard": index, "count": count}:
        raise FailedPrecondition(
            f"store holds shard {layout['shard']} of {layout['count']}, "
            f"but this journal is configured as shard {index} of {count}",
            reason="JOURNAL_LAYOUT_MISMATCH",
        )


async def _last_sequence(db: Db) -> int:
    feed_range = KeyRange(
        start=keys.FEED_PREFIX, start_inclusive=True,
        end=keys.prefix_end(keys.FEED_PREFIX), end_inclusive=False,
    )
    iterator = await db.scan_with_options(feed_range, _scan_options(IterationOrder.DESCENDING))
    rows = await iterator.next_batch(1)
    return keys.sequence_of(rows[0].key) if rows else 0


async def _open_runs(db: Db, idle_timeout_ms: int) -> dict[ThreadRef, int]:
    """The idle deadline of every open run, from the open-run markers and thread states."""
    marker_range = KeyRange(
        start=keys.OPEN_RUNS_PREFIX, start_inclusive=True,
        end=keys.prefix_end(keys.OPEN_RUNS_PREFIX), end_inclusive=False,
    )
    iterator = await db.scan_with_options(marker_range, _scan_options())
    deadlines: dict[ThreadRef, int] = {}
    while batch := await iterator.next_batch(1000):
        for row in batch:
            thread = keys.thread_of_open_run(row.key)
            raw = await db.get(keys.thread_state(thread))
            state = None if raw is None else ThreadState.decode(raw)
            if state is not None and state.run is not None:
                deadlines[thread] = state.run.deadline_ms(idle_timeout_ms)
    return deadlines
