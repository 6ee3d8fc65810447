"""Group commit: concurrent appends planned into one atomic SlateDB batch.

A SlateDB write costs far more than planning an append, so the shard's
committer takes every append queued since its last write and turns them into a
single batch: offsets and feed sequences assigned in queue order, idempotency
and tool-call bookkeeping shared across the group. One append's bad input fails
that append alone; the others still commit.

Run boundaries (``runs``) go through the same committer as a ``PendingRun``:
planned in queue order with the appends around them, in the same batch. The
group reads one clock value, so every activity time it writes is the same.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, overload

from slatedb.uniffi import Db, WriteBatch

from libs.errors import AlreadyExists, FailedPrecondition, NotFound
from services.journal import keys, records
from services.journal.keys import ThreadRef
from services.journal.records import AppendResult, FeedEntry, ThreadState, ToolCallLocation
from services.journal.runs import Boundary, BoundaryKind, OpenRun, Outcome, RunRecord
from services.journal.validation import PreparedMessage

_THREAD_CACHE_SIZE = 100_000


class _Queued:
    """An operation in the shard's queue; its caller awaits ``future``."""

    future: asyncio.Future

    def settle(self, result=None, error: BaseException | None = None) -> None:
        if self.future.done():  # the caller gave up (deadline, cancellation)
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(result)


@dataclass
class PendingAppend(_Queued):
    thread: ThreadRef
    user_id: str | None
    environment: str
    batch: Sequence[PreparedMessage]
    future: asyncio.Future = field(repr=False)


@dataclass
class PendingRun(_Queued):
    """Start, finish, or (the sweeper's) expire a run."""

    thread: ThreadRef
    user_id: str | None
    environment: str
    action: str  # start | finish | expire
    run_id: str
    outcome: Outcome | None
    future: asyncio.Future = field(repr=False)


Pending = PendingAppend | PendingRun


@dataclass(frozen=True)
class PlannedAppend:
    pending: Pending
    results: list[AppendResult] | None
    last_offset: int
    run: tuple[RunRecord | None, bool] | None = None

    def answer(self):
        return self.run if self.run is not None else (self.results, self.last_offset)


def _run_not_found(run_id: str) -> NotFound:
    return NotFound(f"run {run_id} not found in this thread", reason="RUN_NOT_FOUND",
                    metadata={"run_id": run_id})


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
    def __init__(self, db: Db, threads: ThreadStates, first_sequence: int, *, now_ms: int = 0,
                 idle_timeout_ms: int = 0) -> None:
        self._db = db
        self._threads = threads
        self.next_sequence = first_sequence
        self._now_ms = now_ms
        self._idle_timeout_ms = idle_timeout_ms
        # In order; a None value deletes the key (a run's open marker).
        self._puts: list[tuple[bytes, bytes | None]] = []
        self._ids: dict[bytes, bytes] = {}
        self._calls: dict[bytes, ToolCallLocation] = {}
        self._runs: dict[bytes, RunRecord] = {}
        self._states: dict[bytes, ThreadState] = {}
        self.threads: dict[bytes, ThreadRef] = {}

    @overload
    async def _state(self, pending: Pending, *, create: Literal[True],
                     owner_checked: bool = True) -> ThreadState: ...

    @overload
    async def _state(self, pending: Pending, *, create: bool,
                     owner_checked: bool = True) -> ThreadState | None: ...

    async def _state(self, pending: Pending, *, create: bool,
                     owner_checked: bool = True) -> ThreadState | None:
        """The thread's state, its idle run closed first; None for a thread with no
        state when ``create`` is false. ``owner_checked`` false: whoever owns the thread
        (the sweeper acts for no caller)."""
        thread = pending.thread
        state = self._states.get(keys.thread_state(thread)) or await self._threads.get(thread)
        if state is None and not create:
            return None
        if state is None and await self._db.get(keys.purged(thread)) is not None:
            raise FailedPrecondition(f"thread {thread.thread_id} was purged; use a new thread id",
                                     reason="THREAD_PURGED")
        if state is None:
            return ThreadState(pending.user_id, pending.environment, 0, 0)
        if owner_checked and not state.visible_to(pending.user_id):
            raise NotFound(f"thread {thread.thread_id} not found", reason="THREAD_NOT_FOUND")
        return await self._close_if_idle(thread, state)

    async def _close_if_idle(self, thread: ThreadRef, state: ThreadState) -> ThreadState:
        """Close an open run past its idle deadline, at the deadline (see ``runs``).
        Written into the group at once, whatever happens to the operation that found it."""
        run = state.run
        if run is None or self._now_ms < run.deadline_ms(self._idle_timeout_ms):
            return state
        record = RunRecord.opened(run, state.message_count).finished(
            state.message_count, run.deadline_ms(self._idle_timeout_ms), Outcome.TIMED_OUT)
        state = replace(state, run=None)
        self._boundary(thread, state, Boundary(BoundaryKind.FINISHED, record))
        return state

    def _boundary(self, thread: ThreadRef, state: ThreadState, boundary: Boundary) -> None:
        """Write a boundary and the state after it into the group."""
        run_key = keys.run(thread, boundary.run.run_id)
        self._runs[run_key] = boundary.run
        self._puts += [(run_key, boundary.run.encode()),
                       (keys.feed(self.next_sequence),
                        FeedEntry(thread, 0, state.owner_user, state.environment,
                                  boundary).encode())]
        if boundary.kind == BoundaryKind.STARTED:
            self._puts.append((keys.open_run(thread), b"{}"))
        else:
            self._puts.append((keys.open_run(thread), None))
        self.next_sequence += 1
        self._remember(thread, state)

    def _remember(self, thread: ThreadRef, state: ThreadState) -> None:
        key = keys.thread_state(thread)
        self._states[key] = state
        self.threads[key] = thread

    async def _run_record(self, thread: ThreadRef, run_id: str) -> RunRecord | None:
        key = keys.run(thread, run_id)
        known = self._runs.get(key)
        if known is not None:
            return known
        raw = await self._db.get(key)
        return None if raw is None else RunRecord.decode(raw)

    async def plan_run(self, pending: PendingRun) -> PlannedAppend:
        """Add a run boundary to the group, or raise a DomainError for it alone."""
        thread = pending.thread
        state = await self._state(pending, create=pending.action == "start",
                                  owner_checked=pending.action != "expire")
        if pending.action == "expire" or state is None:
            if state is None:
                raise _run_not_found(pending.run_id)
            return PlannedAppend(pending, None, state.message_count, (None, False))
        if pending.action == "start":
            return await self._start(pending, thread, state)
        return await self._finish(pending, thread, state)

    async def _start(self, pending: PendingRun, thread: ThreadRef,
                     state: ThreadState) -> PlannedAppend:
        if state.run is not None and state.run.run_id == pending.run_id:
            record = RunRecord.opened(state.run, state.message_count)
            return PlannedAppend(pending, None, state.message_count, (record, True))
        if state.run is not None:
            raise FailedPrecondition(
                f"run {state.run.run_id} is open on thread {thread.thread_id}; finish it first",
                reason="RUN_IN_PROGRESS", metadata={"run_id": state.run.run_id})
        if await self._run_record(thread, pending.run_id) is not None:
            raise AlreadyExists(f"run {pending.run_id} already ran on thread {thread.thread_id}",
                                reason="RUN_ALREADY_FINISHED", metadata={"run_id": pending.run_id})
        run = OpenRun(pending.run_id, self._now_ms, self._now_ms, state.message_count)
        state = replace(state, run=run)
        record = RunRecord.opened(run, state.message_count)
        self._boundary(thread, state, Boundary(BoundaryKind.STARTED, record))
        return PlannedAppend(pending, None, state.message_count, (record, False))

    async def _finish(self, pending: PendingRun, thread: ThreadRef,
                      state: ThreadState) -> PlannedAppend:
        if pending.outcome is None:  # Journal.finish_run always passes one
            raise ValueError(f"finishing run {pending.run_id} without an outcome")
        if state.run is not None and state.run.run_id == pending.run_id:
            record = RunRecord.opened(state.run, state.message_count).finished(
                state.message_count, self._now_ms, pending.outcome)
            state = replace(state, run=None)
            self._boundary(thread, state, Boundary(BoundaryKind.FINISHED, record))
            return PlannedAppend(pending, None, state.message_count, (record, False))
        stored = await self._run_record(thread, pending.run_id)
        if stored is None or stored.open:
            raise _run_not_found(pending.run_id)
        if stored.outcome != pending.outcome:
            raise FailedPrecondition(
                f"run {pending.run_id} already finished: {stored.outcome}",
                reason="RUN_ALREADY_FINISHED",
                metadata={"run_id": pending.run_id, "outcome": str(stored.outcome)})
        return PlannedAppend(pending, None, state.message_count, (stored, True))

    async def plan(self, pending: Pending) -> PlannedAppend:
        """Add ``pending`` to the group, or raise a DomainError for it alone."""
        if isinstance(pending, PendingRun):
            return await self.plan_run(pending)
        thread = pending.thread
        state = await self._state(pending, create=True)
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
            message = prepared.message
            _join_run(message, state.run)
            state = state.after(message, self._now_ms)
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
            self._remember(thread, state)
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
            if value is None:
                batch.delete(key)
            else:
                batch.put(key, value)
        for key, state in self._states.items():
            batch.put(key, state.encode())
        return batch

    def remember_states(self) -> None:
        """After the batch is written: the writer's view now includes it."""
        for key, state in self._states.items():
            self._threads.put(key, state)

    def open_runs(self) -> list[tuple[ThreadRef, OpenRun | None]]:
        """Each thread the group wrote, with its open run after the group."""
        return [(self.threads[key], state.run) for key, state in self._states.items()]


def _join_run(message, run: OpenRun | None) -> None:
    """A message joins the thread's open run; naming any other run is refused."""
    if message.run_id and (run is None or run.run_id != message.run_id):
        raise FailedPrecondition(
            f"message {message.id} names run {message.run_id}, which is not open on this thread",
            reason="RUN_NOT_OPEN", metadata={"run_id": message.run_id})
    if run is not None:
        message.run_id = run.run_id
