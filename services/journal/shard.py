"""One journal shard: a SlateDB database with a single fenced writer.

Writes: an append takes the shard's write lock only to assign offsets and
sequences and hand one atomic batch to SlateDB; it then waits, outside the
lock, for the batch to be durable. Batches submitted while a flush is pending
are flushed together (group commit), and because SlateDB's write-ahead log is
ordered, a batch is durable only once every earlier batch is.

The writer's view of each thread (next offset, owner) lives in memory and is
loaded from the database on first use: nothing else writes this database
while this writer is alive. When another writer opens the database, this one
is fenced: every later call fails with JOURNAL_FENCED and nothing this writer
did not acknowledge as durable is ever reported as written.

Reads only ever return durable data.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from agentmemory.common.v1 import message_pb2
from slatedb.uniffi import (
    CloseReason,
    Db,
    DbBuilder,
    DurabilityLevel,
    Error,
    IterationOrder,
    KeyRange,
    ObjectStore,
    ReadOptions,
    ScanOptions,
    Settings,
    WriteBatch,
)

from libs.errors import AlreadyExists, DomainError, FailedPrecondition, NotFound, Unavailable
from services.journal import keys
from services.journal.keys import ThreadRef
from services.journal.validation import PreparedMessage

logger = logging.getLogger(__name__)

_THREAD_CACHE_SIZE = 100_000
_DURABLE_READ = ReadOptions(
    durability_filter=DurabilityLevel.REMOTE, dirty=False, cache_blocks=True
)


def _scan_options(order: IterationOrder = IterationOrder.ASCENDING) -> ScanOptions:
    return ScanOptions(
        durability_filter=DurabilityLevel.REMOTE,
        dirty=False,
        read_ahead_bytes=1,
        cache_blocks=True,
        max_fetch_tasks=1,
        order=order,
    )


def fenced_error(shard: int) -> FailedPrecondition:
    return FailedPrecondition(
        f"journal shard {shard} is fenced: a newer journal writer has taken over",
        reason="JOURNAL_FENCED",
        metadata={"shard": str(shard)},
    )


@dataclass(frozen=True)
class ThreadState:
    owner_user: str | None
    environment: str
    message_count: int
    token_count: int

    def visible_to(self, user_id: str | None) -> bool:
        return self.owner_user is None or self.owner_user == user_id

    def encode(self) -> bytes:
        return json.dumps(
            {"u": self.owner_user, "e": self.environment, "n": self.message_count,
             "k": self.token_count},
            separators=(",", ":"),
        ).encode()

    @classmethod
    def decode(cls, raw: bytes) -> ThreadState:
        state = json.loads(raw)
        return cls(state["u"], state["e"], state["n"], state["k"])


@dataclass(frozen=True)
class AppendResult:
    message_id: str
    offset: int
    deduplicated: bool


@dataclass(frozen=True)
class FeedEvent:
    sequence: int
    shard: int
    thread: ThreadRef
    owner_user: str | None
    environment: str
    message: message_pb2.Message


@dataclass(frozen=True)
class ToolCallLocation:
    """Where a tool call was made and, once answered, where its result is."""

    thread: ThreadRef
    call_offset: int
    result_offset: int


class Shard:
    def __init__(self, index: int, db: Db, last_sequence: int) -> None:
        self.index = index
        self._db = db
        self._write_lock = asyncio.Lock()
        self._next_sequence = last_sequence + 1
        self._durable_sequence = last_sequence
        self._threads: OrderedDict[bytes, ThreadState] = OrderedDict()
        self._advanced = asyncio.Event()
        self._failure: DomainError | None = None
        self._closing = False

    @classmethod
    async def open(
        cls, *, index: int, count: int, store: ObjectStore, path: str, flush_interval_ms: int
    ) -> Shard:
        """Open (and so fence any previous writer of) shard ``index`` of ``count``."""
        settings = Settings.default()
        settings.set("flush_interval", json.dumps(f"{flush_interval_ms}ms"))
        builder = DbBuilder(path, store)
        builder.with_settings(settings)
        db = await builder.build()
        try:
            await _check_layout(db, index, count)
            last_sequence = await _last_sequence(db)
        except BaseException:
            await db.shutdown()
            raise
        logger.info("shard %d open at %s, feed sequence %d", index, path, last_sequence)
        return cls(index, db, last_sequence)

    # -- state ---------------------------------------------------------------

    @property
    def durable_sequence(self) -> int:
        return self._durable_sequence

    @property
    def failure(self) -> DomainError | None:
        return self._failure

    def serving(self) -> bool:
        """False once fenced or failed; notices a takeover even without a write
        (SlateDB polls its manifest)."""
        if self._failure is None and self._db.status().close_reason == CloseReason.FENCED:
            self._fail(fenced_error(self.index))
        return self._failure is None

    def _fail(self, error: DomainError) -> None:
        if self._failure is None:
            logger.error("shard %d stops serving: %s", self.index, error.message)
            self._failure = error
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
        async with self._write_lock:
            self._raise_if_failed()
            try:
                results, state, writes, next_sequence = await self._plan_append(
                    thread, user_id, environment, batch
                )
                handle = None
                if writes is not None:
                    handle = await self._db.write(writes)
                    self._remember(thread, state)
                    self._next_sequence = next_sequence
                wait_for = self._next_sequence - 1
            except DomainError:
                raise
            except Exception as exc:
                # The batch may or may not have reached SlateDB: this writer's
                # view can no longer be trusted, so it stops (fail-stop).
                error = self._translate(exc)
                self._fail(error)
                raise error from exc
        await self._await_durable(handle, wait_for)
        return results, state.message_count

    async def _plan_append(self, thread, user_id, environment, batch):
        state = await self._writer_state(thread)
        if state is None:
            state = ThreadState(user_id, environment, 0, 0)
        elif not state.visible_to(user_id):
            raise NotFound(f"thread {thread.thread_id} not found", reason="THREAD_NOT_FOUND")
        writes = WriteBatch()
        results: list[AppendResult] = []
        pending_calls: dict[bytes, ToolCallLocation] = {}
        sequence = self._next_sequence
        for prepared in batch:
            id_key = keys.message_id(thread, prepared.id)
            known = await self._db.get(id_key)
            if known is not None:
                results.append(_deduplicated(prepared, known))
                continue
            offset = state.message_count + 1
            message = prepared.message
            message.offset = offset
            writes.put(keys.message(thread, offset), message.SerializeToString())
            writes.put(id_key, json.dumps({"o": offset, "d": prepared.digest}).encode())
            writes.put(keys.feed(sequence), _feed_entry(thread, offset, state))
            await self._index_tool_calls(writes, thread, message, pending_calls)
            state = replace(
                state,
                message_count=offset,
                token_count=state.token_count + message.token_count,
            )
            results.append(AppendResult(prepared.id, offset, False))
            sequence += 1
        if sequence == self._next_sequence:
            return results, state, None, sequence
        writes.put(keys.thread_state(thread), state.encode())
        return results, state, writes, sequence

    async def _index_tool_calls(self, writes, thread, message, pending) -> None:
        updates: list[tuple[bytes, ToolCallLocation]] = []
        for call in message.tool_calls:
            key = keys.tool_call(thread, call.id)
            known = pending.get(key) or await self._tool_call_at(key, durable=False)
            result_offset = known.result_offset if known else 0
            updates.append((key, ToolCallLocation(thread, message.offset, result_offset)))
        if message.tool_call_id:
            key = keys.tool_call(thread, message.tool_call_id)
            known = pending.get(key) or await self._tool_call_at(key, durable=False)
            call_offset = known.call_offset if known else 0
            updates.append((key, ToolCallLocation(thread, call_offset, message.offset)))
        for key, location in updates:
            pending[key] = location
            writes.put(key, _encode_location(location))

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

    async def _writer_state(self, thread: ThreadRef) -> ThreadState | None:
        key = keys.thread_state(thread)
        state = self._threads.get(key)
        if state is not None:
            self._threads.move_to_end(key)
            return state
        raw = await self._db.get(key)
        return None if raw is None else ThreadState.decode(raw)

    def _remember(self, thread: ThreadRef, state: ThreadState) -> None:
        key = keys.thread_state(thread)
        self._threads[key] = state
        self._threads.move_to_end(key)
        if len(self._threads) > _THREAD_CACHE_SIZE:
            self._threads.popitem(last=False)

    # -- reads (durable data only) ---------------------------------------------

    async def thread_state(self, thread: ThreadRef, user_id: str | None) -> ThreadState | None:
        """The durable state of ``thread`` if the caller may see it."""
        self._raise_if_failed()
        raw = await self._guard(self._db.get_with_options(keys.thread_state(thread), _DURABLE_READ))
        if raw is None:
            return None
        state = ThreadState.decode(raw)
        return state if state.visible_to(user_id) else None

    async def read_recent(
        self, thread: ThreadRef, user_id: str | None, limit: int
    ) -> list[message_pb2.Message]:
        if await self.thread_state(thread, user_id) is None:
            return []
        prefix = keys.messages_prefix(thread)
        rows = await self._scan(prefix, keys.prefix_end(prefix), limit, IterationOrder.DESCENDING)
        return [_message(value) for _, value in reversed(rows)]

    async def read_range(
        self, thread: ThreadRef, user_id: str | None, from_offset: int, limit: int
    ) -> tuple[list[message_pb2.Message], int | None]:
        """Up to ``limit`` messages from ``from_offset``, and the next offset if more exist."""
        if await self.thread_state(thread, user_id) is None:
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
            found = await self._tool_call_at(keys.tool_call(thread, tool_call_id), durable=True)
            candidates = [found] if found else []
        else:
            prefix = keys.tool_calls_prefix(account_id, agent_id, tool_call_id)
            rows = await self._scan(prefix, keys.prefix_end(prefix), 100)
            candidates = [_decode_location(key, value) for key, value in rows]
        visible = []
        for location in candidates:
            if location.call_offset and await self.thread_state(location.thread, user_id):
                visible.append(location)
        return visible

    async def _tool_call_at(self, key: bytes, *, durable: bool) -> ToolCallLocation | None:
        read = self._db.get_with_options(key, _DURABLE_READ) if durable else self._db.get(key)
        raw = await self._guard(read)
        return None if raw is None else _decode_location(key, raw)

    # -- change feed ---------------------------------------------------------

    async def read_feed(self, after_sequence: int, limit: int) -> list[FeedEvent]:
        """Durable feed events with a sequence greater than ``after_sequence``."""
        self._raise_if_feed_closed()
        last = min(self._durable_sequence, after_sequence + limit)
        if last <= after_sequence:
            return []
        rows = await self._scan(keys.feed(after_sequence + 1), keys.feed(last + 1), limit)
        events = []
        for key, value in rows:
            entry = json.loads(value)
            thread = ThreadRef(entry["a"], entry["g"], entry["t"])
            message = await self.message_at(thread, entry["o"])
            if message is None:
                raise Unavailable(
                    f"feed entry {keys.sequence_of(key)} points at a missing message",
                    reason="JOURNAL_UNAVAILABLE",
                )
            events.append(
                FeedEvent(keys.sequence_of(key), self.index, thread, entry["u"], entry["e"], message)
            )
        return events

    async def wait_for_feed(self, after_sequence: int, timeout: float) -> None:
        """Return once the durable sequence passes ``after_sequence`` (or on timeout)."""
        if self._durable_sequence > after_sequence:
            return
        self._raise_if_feed_closed()
        try:
            await asyncio.wait_for(self._advanced.wait(), timeout)
        except TimeoutError:
            return
        self._raise_if_feed_closed()

    def _raise_if_feed_closed(self) -> None:
        self._raise_if_failed()
        if self._closing:
            raise _shutting_down()

    # -- lifecycle -----------------------------------------------------------

    def begin_shutdown(self) -> None:
        """End change-feed streams (consumers resume elsewhere); other calls finish."""
        self._closing = True
        self._wake()

    async def close(self) -> None:
        if self._failure is None:
            self._failure = _shutting_down()
            self._wake()
        async with self._write_lock:
            try:
                await self._db.shutdown()
            except Error.Closed:
                pass  # already fenced: nothing of ours is left to flush

    async def _scan(self, start: bytes, end: bytes, limit: int, order=IterationOrder.ASCENDING):
        scan_range = KeyRange(start=start, start_inclusive=True, end=end, end_inclusive=False)
        iterator = await self._guard(self._db.scan_with_options(scan_range, _scan_options(order)))
        rows = await self._guard(iterator.next_batch(limit))
        return [(row.key, row.value) for row in rows]

    async def _guard(self, operation):
        try:
            return await operation
        except Exception as exc:
            raise self._translate(exc) from exc


def _shutting_down() -> Unavailable:
    return Unavailable("journal is shutting down", reason="SHUTTING_DOWN")


def _message(raw: bytes) -> message_pb2.Message:
    return message_pb2.Message.FromString(raw)


def _deduplicated(prepared: PreparedMessage, known: bytes) -> AppendResult:
    record = json.loads(known)
    if record["d"] != prepared.digest:
        raise AlreadyExists(
            f"message id {prepared.id} already exists in this thread with different content",
            reason="MESSAGE_ID_CONFLICT",
            metadata={"message_id": prepared.id, "offset": str(record["o"])},
        )
    return AppendResult(prepared.id, record["o"], True)


def _feed_entry(thread: ThreadRef, offset: int, state: ThreadState) -> bytes:
    return json.dumps(
        {"a": thread.account_id, "g": thread.agent_id, "t": thread.thread_id, "o": offset,
         "u": state.owner_user, "e": state.environment},
        separators=(",", ":"),
    ).encode()


def _encode_location(location: ToolCallLocation) -> bytes:
    return json.dumps({"c": location.call_offset, "r": location.result_offset}).encode()


def _decode_location(key: bytes, raw: bytes) -> ToolCallLocation:
    offsets = json.loads(raw)
    return ToolCallLocation(keys.thread_of_tool_call(key), offsets["c"], offsets["r"])


async def _check_layout(db: Db, index: int, count: int) -> None:
    raw = await db.get(keys.LAYOUT)
    if raw is None:
        handle = await db.put(keys.LAYOUT, json.dumps({"shard": index, "count": count}).encode())
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
