"""The journal: its shards, and where each thread lives among them."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable

from agentmemory.common.v1 import message_pb2

from libs import tokens
from libs.errors import InvalidArgument, NotFound, Unavailable
from libs.identity import Principal
from services.journal import uniffi_speedup
from services.journal.keys import ThreadRef
from services.journal.object_store import build_object_store
from services.journal.runs import Outcome, RunRecord
from services.journal.settings import ShardSettings, StoreSettings
from services.journal.shard import AppendResult, Shard, ThreadStats, ToolCallLocation
from services.journal.tool_calls import ToolCallRecord, merge_result
from services.journal.validation import PreparedMessage

logger = logging.getLogger(__name__)


def shard_of(account_id: str, thread_id: str, shard_count: int) -> int:
    """Stable placement of a thread: hash of (account, thread)."""
    digest = hashlib.blake2b(f"{account_id}/{thread_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shard_count


class Journal:
    def __init__(self, shards: list[Shard]) -> None:
        self.shards = shards

    @classmethod
    async def open(cls, store: StoreSettings, shards: ShardSettings) -> Journal:
        uniffi_speedup.install()
        await asyncio.to_thread(tokens.warm_up)
        object_store, root = build_object_store(store)
        count = shards.shard_count
        opened = await asyncio.gather(
            *(
                Shard.open(
                    index=i,
                    count=count,
                    store=object_store,
                    path=f"{root}/shard-{i:04d}".lstrip("/"),
                    flush_interval_ms=shards.flush_interval_ms,
                    idle_timeout_ms=int(shards.run_idle_timeout_seconds * 1000),
                )
                for i in range(count)
            ),
            return_exceptions=True,
        )
        failures = [r for r in opened if isinstance(r, BaseException)]
        if failures:
            await asyncio.gather(*(s.close() for s in opened if isinstance(s, Shard)))
            raise failures[0]
        return cls(list(opened))  # type: ignore[arg-type]

    def observe_commits(self, record: Callable[[int, int], None]) -> None:
        """Tell ``record`` (appends, messages) of every group commit, on every shard."""
        for shard in self.shards:
            shard.on_commit = record

    @property
    def shard_count(self) -> int:
        return len(self.shards)

    def shard(self, index: int) -> Shard:
        if not 0 <= index < len(self.shards):
            raise InvalidArgument("shard", f"must be 0-{len(self.shards) - 1}")
        return self.shards[index]

    def _shard_for(self, thread: ThreadRef) -> Shard:
        return self.shards[shard_of(thread.account_id, thread.thread_id, len(self.shards))]

    async def append(
        self, principal: Principal, thread_id: str, batch: list[PreparedMessage]
    ) -> tuple[list[AppendResult], int]:
        thread = _thread(principal, thread_id)
        return await self._shard_for(thread).append(
            thread, principal.user_id, principal.environment, batch
        )

    async def read_recent(
        self, principal: Principal, thread_id: str, limit: int
    ) -> list[message_pb2.Message]:
        thread = _thread(principal, thread_id)
        return await self._shard_for(thread).read_recent(thread, principal.user_id, limit)

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
        return await self._shard_for(thread).run_boundary(
            thread, principal.user_id, principal.environment, "start", run_id)

    async def finish_run(self, principal: Principal, thread_id: str, run_id: str,
                         outcome: Outcome) -> tuple[RunRecord, bool]:
        thread = _thread(principal, thread_id)
        return await self._shard_for(thread).run_boundary(
            thread, principal.user_id, principal.environment, "finish", run_id, outcome)

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

    def serving(self) -> bool:
        """False once any shard is fenced by a newer writer or has failed."""
        return all([shard.serving() for shard in self.shards])

    def begin_shutdown(self) -> None:
        for shard in self.shards:
            shard.begin_shutdown()

    async def close(self) -> None:
        await asyncio.gather(*(shard.close() for shard in self.shards))
        logger.info("journal closed")


def _thread(principal: Principal, thread_id: str) -> ThreadRef:
    return ThreadRef(principal.account_id, principal.agent_id, thread_id)
