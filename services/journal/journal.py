"""The journal: the shards this process holds, and where each thread lives among them.

A process serves the shards ``JOURNAL_SHARDS`` names (all by default). Without
leases it opens them all at start; with leases (``services.journal.ownership``)
each is attached while this process holds its lease and detached when it loses
it. A call for a thread whose shard this process serves but does not hold (it
is a standby, or was fenced) is UNAVAILABLE and may be retried at once on
another process; a shard this process does not serve at all is a routing
mistake (FAILED_PRECONDITION).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import cast

from agentmemory.common.v1 import message_pb2

from libs import tokens
from libs.clients.journal import shard_of
from libs.errors import FailedPrecondition, InvalidArgument, NotFound, Unavailable
from libs.identity import Principal
from services.journal import uniffi_speedup
from services.journal.keys import ThreadRef
from services.journal.object_store import build_object_store
from services.journal.runs import OpenRun, Outcome, RunRecord
from services.journal.settings import ShardSettings, StoreSettings
from services.journal.shard import (
    AppendResult,
    Shard,
    ThreadStats,
    ToolCallLocation,
    block_cache,
)
from services.journal.tool_calls import ToolCallRecord, merge_result
from services.journal.validation import PreparedMessage

logger = logging.getLogger(__name__)


class ShardOpener:
    """Opens this journal's shards in its object store (each open fences the previous writer),
    all with one block cache."""

    def __init__(self, store: StoreSettings, shards: ShardSettings) -> None:
        self._object_store, self._root = build_object_store(store)
        self._settings = shards
        self._cache = block_cache(shards.cache_mb)

    async def open(self, index: int) -> Shard:
        return await Shard.open(
            index=index,
            count=self._settings.shard_count,
            store=self._object_store,
            path=f"{self._root}/shard-{index:04d}".lstrip("/"),
            flush_interval_ms=self._settings.flush_interval_ms,
            idle_timeout_ms=int(self._settings.run_idle_timeout_seconds * 1000),
            cache=self._cache,
        )


class Journal:
    def __init__(self, shard_count: int, served: Iterable[int]) -> None:
        self.shard_count = shard_count
        self.served = tuple(served)
        self._held: dict[int, Shard] = {}
        self._lease_valid: dict[int, Callable[[], bool]] = {}
        self._on_commit: Callable[[int, int], None] | None = None

    @staticmethod
    async def prepare() -> None:
        """What every journal process loads once, before serving."""
        uniffi_speedup.install()
        await asyncio.to_thread(tokens.warm_up)

    @classmethod
    async def open(cls, store: StoreSettings, shards: ShardSettings) -> Journal:
        """A journal holding every shard it serves, opened now (no leases)."""
        await cls.prepare()
        opener = ShardOpener(store, shards)
        journal = cls(shards.shard_count, shards.served())
        opened = await asyncio.gather(*(opener.open(i) for i in journal.served),
                                      return_exceptions=True)
        failures = [r for r in opened if isinstance(r, BaseException)]
        if failures:
            await asyncio.gather(*(s.close() for s in opened if isinstance(s, Shard)))
            raise failures[0]
        for shard in opened:
            journal.attach(shard)  # type: ignore[arg-type]
        return journal

    def observe_commits(self, record: Callable[[int, int], None]) -> None:
        """Tell ``record`` (appends, messages) of every group commit, on every shard held
        now or taken over later."""
        self._on_commit = record
        for shard in self.shards:
            shard.on_commit = record

    @property
    def shards(self) -> list[Shard]:
        """The shards this process holds now, in order."""
        return [self._held[i] for i in sorted(self._held)]

    def attach(self, shard: Shard, lease_valid: Callable[[], bool] | None = None) -> None:
        """Serve ``shard`` (while ``lease_valid()``, when it is held under a lease)."""
        self._held[shard.index] = shard
        shard.on_commit = self._on_commit
        if lease_valid is not None:
            self._lease_valid[shard.index] = lease_valid

    def detach(self, index: int) -> None:
        self._held.pop(index, None)
        self._lease_valid.pop(index, None)

    def holds(self, index: int) -> bool:
        return index in self._held

    def shard(self, index: int) -> Shard:
        if not 0 <= index < self.shard_count:
            raise InvalidArgument("shard", f"must be 0-{self.shard_count - 1}")
        if index not in self.served:
            raise FailedPrecondition(
                f"this journal process does not serve shard {index} (it serves "
                f"{', '.join(map(str, self.served))}): check the journal address",
                reason="JOURNAL_SHARD_NOT_SERVED", metadata={"shard": str(index)})
        shard = self._held.get(index)
        lease_valid = self._lease_valid.get(index)
        if shard is None or (lease_valid is not None and not lease_valid()):
            raise Unavailable(f"journal shard {index} is not held by this process (a standby)",
                              reason="JOURNAL_SHARD_NOT_HELD", metadata={"shard": str(index)},
                              elsewhere=True)
        return shard

    def _shard_for(self, thread: ThreadRef) -> Shard:
        return self.shard(shard_of(thread.account_id, thread.thread_id, self.shard_count))

    async def append(
        self, principal: Principal, thread_id: str, batch: list[PreparedMessage]
    ) -> tuple[list[AppendResult], int]:
        thread = _thread(principal, thread_id)
        return await self._shard_for(thread).append(
            thread, principal.user_id, principal.environment, batch
        )

    async def read_recent(
        self, principal: Principal, thread_id: str, limit: int, *, with_open_run: bool = False
    ) -> tuple[list[message_pb2.Message], OpenRun | None]:
        thread = _thread(principal, thread_id)
        return await self._shard_for(thread).read_recent(thread, principal.user_id, limit,
                                                         with_open_run=with_open_run)

    async def read_range(
        self, principal: Principal, thread_id: str, from_offset: int, limit: int
    ) -> tuple[list[message_pb2.Message], int | None]:
        thread = _thread(principal, thread_id)
        return await self._shard_for(thread).read_range(
            thread, principal.user_id, from_offset, limit
        )

    async def purge(self, principal: Principal, thread_id: str) -> int:
        thread = _thread(principal, thread_id)
        return await self._shard_for(thread).purge(thread, principal.user_id)

    async def start_run(self, principal: Principal, thread_id: str,
                        run_id: str) -> tuple[RunRecord, bool]:
        thread = _thread(principal, thread_id)
        # Only an expiry answers without a record; starting and finishing always name one.
        return cast("tuple[RunRecord, bool]", await self._shard_for(thread).run_boundary(
            thread, principal.user_id, principal.environment, "start", run_id))

    async def finish_run(self, principal: Principal, thread_id: str, run_id: str,
                         outcome: Outcome) -> tuple[RunRecord, bool]:
        thread = _thread(principal, thread_id)
        return cast("tuple[RunRecord, bool]", await self._shard_for(thread).run_boundary(
            thread, principal.user_id, principal.environment, "finish", run_id, outcome))

    async def get_run(self, principal: Principal, thread_id: str,
                      run_id: str | None) -> RunRecord:
        thread = _thread(principal, thread_id)
        found = await self._shard_for(thread).get_run(thread, principal.user_id, run_id)
        if found is None:
            what = f"run {run_id}" if run_id else "an open run"
            raise NotFound(f"thread {thread_id} has no {what}", reason="RUN_NOT_FOUND")
        return found

    async def thread_stats(self, principal: Principal, thread_id: str,
                           after_offset: int = 0) -> ThreadStats | None:
        thread = _thread(principal, thread_id)
        return await self._shard_for(thread).thread_stats(thread, principal.user_id, after_offset)

    async def tool_call(
        self, principal: Principal, tool_call_id: str, thread_id: str | None
    ) -> ToolCallRecord:
        if thread_id is not None:
            candidates = [self._shard_for(_thread(principal, thread_id))]
        else:
            candidates = self.shards
        found = await asyncio.gather(
            *(
                shard.tool_call_locations(
                    principal.account_id, principal.agent_id, principal.user_id,
                    tool_call_id, thread_id,
                )
                for shard in candidates
            )
        )
        locations = [location for per_shard in found for location in per_shard]
        if not locations:
            raise NotFound(f"tool call {tool_call_id} not found", reason="TOOL_CALL_NOT_FOUND")
        if len(locations) > 1:
            raise InvalidArgument(
                "thread_id",
                f"tool call id {tool_call_id} was used in {len(locations)} threads; "
                "name the thread",
            )
        return await self._load_tool_call(locations[0], tool_call_id)

    async def _load_tool_call(self, location: ToolCallLocation, tool_call_id: str) -> ToolCallRecord:
        shard = self._shard_for(location.thread)
        message = await shard.message_at(location.thread, location.call_offset)
        call = next((c for c in (message.tool_calls if message else ()) if c.id == tool_call_id), None)
        if message is None or call is None:
            raise Unavailable(
                f"tool call {tool_call_id} is indexed but its message is missing",
                reason="JOURNAL_UNAVAILABLE",
            )
        answer = None
        if location.result_offset:
            answer = await shard.message_at(location.thread, location.result_offset)
        return ToolCallRecord(
            location.thread.thread_id, message.id, message.offset, merge_result(call, answer)
        )

    def begin_shutdown(self) -> None:
        for shard in self.shards:
            shard.begin_shutdown()

    async def close(self) -> None:
        held, self._held = self.shards, {}
        await asyncio.gather(*(shard.close() for shard in held))
        logger.info("journal closed")


def _thread(principal: Principal, thread_id: str) -> ThreadRef:
    return ThreadRef(principal.account_id, principal.agent_id, thread_id)
