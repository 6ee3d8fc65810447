"""Group commit: concurrent appends planned into one atomic SlateDB batch.

A SlateDB write costs far more than planning an append, so the shard's
committer takes every append queued since its last write and turns them into a
single batch: offsets and feed sequences assigned in queue order, idempotency
and tool-call bookkeeping shared across the group. One append's bad input fails
that append alone; the others still commit.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

from slatedb.uniffi import Db, WriteBatch

from libs.errors import FailedPrecondition, NotFound
from services.journal import keys, records
from services.journal.keys import ThreadRef
from services.journal.records import AppendResult, FeedEntry, ThreadState, ToolCallLocation
from services.journal.validation import PreparedMessage

_THREAD_CACHE_SIZE = 100_000


@dataclass
class PendingAppend:
    thread: ThreadRef
    user_id: str | None
    environment: str
    batch: Sequence[PreparedMessage]
    future: asyncio.Future = field(repr=False)

    def settle(self, result=None, error: BaseException | None = None) -> None:
        if self.future.done():  # the caller gave up (deadline, cancellation)
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(result)


@dataclass(frozen=True)
class PlannedAppend:
    pending: PendingAppend
    results: list[AppendResult]
    last_offset: int


class ThreadStates:
    """The writer's view of its threads (including writes not yet durable), LRU-bounded."""

    def __init__(self, db: Db) -> None:
        self._db = db
        self._states: OrderedDict[bytes, ThreadState] = OrderedDict()

    async def get(self, thread: ThreadRef) -> ThreadState | None:
        key = keys.thread_state(thread)
        state = self._states.get(key)
        if state is not None:
            self._states.move_to_end(key)
            return state
        raw = await self._db.get(key)
        return None if raw is None else ThreadState.decode(raw)

    def peek(self, thread: ThreadRef) -> ThreadState | None:
        """The cached state, if any, without touching the database."""
        return self._states.get(keys.thread_state(thread))

    def forget(self, thread: ThreadRef) -> None:
        self._states.pop(keys.thread_state(thread), None)

    def put(self, key: bytes, state: ThreadState) -> None:
        self._states[key] = state
        self._states.move_to_end(key)
        if len(self._states) > _THREAD_CACHE_SIZE:
            self._states.popitem(last=False)


class CommitGroup:
    def __init__(self, db: Db, threads: ThreadStates, first_sequence: int) -> None:
        self._db = db
        self._threads = threads
        self.next_sequence = first_sequence
        self._puts: list[tuple[bytes, bytes]] = []
        self._ids: dict[bytes, bytes] = {}
        self._calls: dict[bytes, ToolCallLocation] = {}
        self._states: dict[bytes, ThreadState] = {}

    async def plan(self, pending: PendingAppend) -> PlannedAppend:
        """Add ``pending`` to the group, or raise a DomainError for it alone."""
        thread = pending.thread
        state = self._states.get(keys.thread_state(thread)) or await self._threads.get(thread)
        if state is None and await self._db.get(keys.purged(thread)) is not None:
            raise FailedPrecondition(f"thread {thread.thread_id} was purged; use a new thread id",
                                     reason="THREAD_PURGED")
        if state is None:
            state = ThreadState(pending.user_id, pending.environment, 0, 0)
        elif not state.visible_to(pending.user_id):
            raise NotFound(f"thread {thread.thread_id} not found", reason="THREAD_NOT_FOUND")
        puts: list[tuple[bytes, bytes]] = []
        ids: dict[bytes, bytes] = {}
        calls: dict[bytes, ToolCallLocation] = {}
        results: list[AppendResult] = []
        sequence = self.next_sequence
        for prepared in pending.batch:
            id_key = keys.message_id(thread, prepared.id)
            known = self._ids.get(id_key) or await self._db.get(id_key)
            if known is not None:
                results.append(records.deduplicated(prepared, known))
                continue
            state = state.after(prepared.message)
            message = prepared.message
            message.offset = state.message_count
            ids[id_key] = records.message_id_record(message.offset, prepared.digest)
            puts += [
                (keys.message(thread, message.offset), message.SerializeToString()),
                (id_key, ids[id_key]),
                (keys.feed(sequence), FeedEntry(thread, message.offset, state.owner_user,
                                                state.environment).encode()),
            ]
            for key, location in await self._tool_call_updates(thread, message, calls):
                calls[key] = location
                puts.append((key, location.encode()))
            results.append(AppendResult(prepared.id, message.offset, False))
            sequence += 1
        if sequence > self.next_sequence:
            self._puts += puts
            self._ids.update(ids)
            self._calls.update(calls)
            self._states[keys.thread_state(thread)] = state
            self.next_sequence = sequence
        return PlannedAppend(pending, results, state.message_count)

    async def _tool_call_updates(self, thread, message, calls) -> list[tuple[bytes, ToolCallLocation]]:
        updates = []
        for call in message.tool_calls:
            key = keys.tool_call(thread, call.id)
            known = await self._known_call(key, calls)
            updates.append((key, ToolCallLocation(
                thread, message.offset, known.result_offset if known else 0)))
        if message.tool_call_id:
            key = keys.tool_call(thread, message.tool_call_id)
            known = await self._known_call(key, calls)
            updates.append((key, ToolCallLocation(
                thread, known.call_offset if known else 0, message.offset)))
        return updates

    async def _known_call(self, key: bytes, calls) -> ToolCallLocation | None:
        known = calls.get(key) or self._calls.get(key)
        if known is not None:
            return known
        raw = await self._db.get(key)
        return None if raw is None else ToolCallLocation.decode(key, raw)

    def write_batch(self) -> WriteBatch | None:
        """One atomic batch for the whole group; None when nothing is new."""
        if not self._puts:
            return None
        batch = WriteBatch()
        for key, value in self._puts:
            batch.put(key, value)
        for key, state in self._states.items():
            batch.put(key, state.encode())
        return batch

    def remember_states(self) -> None:
        """After the batch is written: the writer's view now includes it."""
        for key, state in self._states.items():
            self._threads.put(key, state)
