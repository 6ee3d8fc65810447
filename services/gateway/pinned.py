"""Agent memory's ListPinned and RecallProcedures answers, cached while agent memory
says what changes.

Every turn asks ListPinned (BuildContext), and the answer changes only when
memories, procedures or the account's settings do. A turn whose agent has
procedures also asks RecallProcedures, whose answer (the rendered records of past
runs) changes only when the account's procedures or settings do; its request names
the run the recall counts for, so each run still asks once and has its recall
recorded. Each replica keeps answers by their whole request (``CACHE_SIZE`` of
each at most), but only while its WatchPinnedChanges stream to agent memory is
subscribed: agent memory announces every change that can alter an answer,
whoever makes it (PostgreSQL triggers), and an announcement for an account drops
that account's answers. When the
stream breaks the replica drops everything and asks agent memory every time
until it has subscribed again (retrying with backoff). Calls this replica makes
to agent memory that may write drop the caller's account as soon as they
return too (:class:`ForgetOnWrite`): the replica's own next turn cannot beat
the announcement.

An answer is also kept no longer than ``max_age_seconds`` (which bounds a
stream that stalls without breaking) and no later than the earliest
``expires_at`` it holds: an expired entry leaves the answer with no write to
announce it. A recall answered without the vector index (``partial``) is not
kept: the index coming back announces nothing.

A read that started before an announcement and ends after it must not store
what it read: every read and every drop takes a number from one sequence; an
answer is kept, and served, only if no drop of its account (or of everything)
came after its read started.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import grpc
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import learning_service_pb2 as learning_pb
from cachetools import LRUCache

from libs import tasks
from libs.clients.agent_memory import AgentMemoryClient
from libs.identity import Principal

logger = logging.getLogger(__name__)

# Of each kind. ListPinned answers run from a few hundred bytes to ~25 KB (ten facts
# and ten 2,000-character blocks), recalls to a few KB (three procedures' steps): at
# most ~300 MB per replica, far less in practice.
CACHE_SIZE = 10_000
RETRY_SECONDS = 1.0  # as the other listeners (libs.invalidations, gRPC's reconnects)
# A watch is a call like any other and has a deadline: one renewed daily.
WATCH_SECONDS = 24 * 3600.0
# Calls to agent memory that write nothing a kept answer shows (a recall bumps only
# counters, and RecallProcedures records only which run recalled what, which the
# triggers do not announce either). Any other call counts as a write: one missing
# here costs a cache miss, never a stale answer.
READS = frozenset({"ListPinned", "Recall", "GetEntry", "ListEntries", "GetAgentSettings",
                   "GetAccountSettings", "ListMemories", "GetMemory", "ListAudit",
                   "ExportMemories", "ExplainMemory", "RecallProcedures", "RetrieveContext",
                   "RetrieveRelevantMemories", "GetReceipt", "ListSuggestions",
                   "ListProcedures", "ListLearningAudit"})


@dataclass(frozen=True)
class _Kept:
    answer: memory_pb.ListPinnedResponse | str
    read: int  # the sequence number taken when its read started
    until: float  # time.time() after which it is stale


class _Drops(LRUCache):
    """Account -> the sequence number of its latest drop. An account pushed out
    raises ``floor`` instead, which drops, conservatively, every answer read
    before it."""

    floor = 0

    def popitem(self):
        account_id, dropped = super().popitem()
        self.floor = max(self.floor, dropped)
        return account_id, dropped

    def since(self, account_id: str) -> int:
        return max(self.get(account_id, 0), self.floor)


class PinnedCache:
    def __init__(self, *, max_age_seconds: float, retry_seconds: float = RETRY_SECONDS,
                 clock: Callable[[], float] = time.time) -> None:
        self._max_age = max_age_seconds
        self._retry_seconds = retry_seconds
        self._clock = clock
        self._pinned: LRUCache[tuple[str, bytes], _Kept] = LRUCache(CACHE_SIZE)
        self._past_runs: LRUCache[tuple[str, bytes], _Kept] = LRUCache(CACHE_SIZE)
        self._drops = _Drops(10 * CACHE_SIZE)
        self._sequence = 0
        #: True while the watch is subscribed: only then is anything kept or served.
        self.subscribed = False

    def kept_pinned(self, principal: Principal) -> memory_pb.ListPinnedResponse | None:
        """The answer :meth:`list_pinned` would serve without asking agent memory, if any."""
        return self._served(self._pinned, _key(principal.account_id, _pinned_request(principal)))

    async def list_pinned(self, agent_memory: AgentMemoryClient,
                          principal: Principal) -> memory_pb.ListPinnedResponse:
        request = _pinned_request(principal)
        key = _key(principal.account_id, request)
        kept = self._served(self._pinned, key)
        if kept is not None:
            return kept
        read = self._next()
        reply = await agent_memory.list_pinned(request)
        self._keep(self._pinned, key, _Kept(reply, read, self._until(reply)))
        return reply

    async def past_runs(self, agent_memory: AgentMemoryClient,
                        request: learning_pb.RecallProceduresRequest) -> str:
        """RecallProcedures' rendered records of past runs (what a context shows)."""
        key = _key(request.principal.account_id, request)
        kept = self._served(self._past_runs, key)
        if kept is not None:
            return kept
        read = self._next()
        reply = await agent_memory.recall_procedures(request)
        if not reply.partial:
            self._keep(self._past_runs, key,
                       _Kept(reply.rendered, read, self._clock() + self._max_age))
        return reply.rendered

    def forget(self, account_id: str) -> None:
        self._drops[account_id] = self._next()

    def forget_all(self) -> None:
        self._drops.floor = self._next()
        self._drops.clear()
        self._pinned.clear()
        self._past_runs.clear()

    def _served(self, kept_answers: LRUCache, key: tuple[str, bytes]):
        if not self.subscribed:
            return None
        kept = kept_answers.get(key)
        if (kept is not None and kept.read > self._drops.since(key[0])
                and self._clock() < kept.until):
            return kept.answer
        return None

    def _keep(self, kept_answers: LRUCache, key: tuple[str, bytes], kept: _Kept) -> None:
        if self.subscribed and self._drops.since(key[0]) < kept.read:
            kept_answers[key] = kept

    @contextlib.asynccontextmanager
    async def watching(self, agent_memory: AgentMemoryClient) -> AsyncIterator[PinnedCache]:
        """Keep a watch open until the block ends (nothing at all when caching is off)."""
        if self._max_age <= 0:
            yield self
            return
        try:
            async with tasks.running(self._watch_forever(agent_memory)):
                yield self
        finally:
            self._unsubscribed()

    async def _watch_forever(self, agent_memory: AgentMemoryClient) -> None:
        while True:
            try:
                async for change in agent_memory.watch_pinned_changes(WATCH_SECONDS):
                    self._heard(change)
            except grpc.aio.AioRpcError as exc:
                logger.warning("pinned facts watch ended (%s: %s): caching none until it is "
                               "back", exc.code().name, exc.details())
            except Exception:  # the watch must outlive anything unexpected
                logger.exception("pinned facts watch failed: caching none until it is back")
            finally:
                self._unsubscribed()
            await asyncio.sleep(self._retry_seconds)

    def _heard(self, change: memory_pb.WatchPinnedChangesResponse) -> None:
        if change.subscribed:
            self.forget_all()  # what was kept before may have missed a change
            self.subscribed = True
        elif change.all_accounts:
            self.forget_all()
        else:
            self.forget(change.account_id)

    def _unsubscribed(self) -> None:
        self.subscribed = False
        self.forget_all()

    def _next(self) -> int:
        self._sequence += 1
        return self._sequence

    def _until(self, reply: memory_pb.ListPinnedResponse) -> float:
        until = self._clock() + self._max_age
        for entry in (*reply.entries, *reply.blocks):
            if entry.HasField("expires_at"):
                until = min(until, entry.expires_at.ToMicroseconds() / 1e6)
        return until


def _pinned_request(principal: Principal) -> memory_pb.ListPinnedRequest:
    return memory_pb.ListPinnedRequest(principal=principal.to_proto())


def _key(account_id: str, request) -> tuple[str, bytes]:
    return account_id, request.SerializeToString(deterministic=True)


class ForgetOnWrite(grpc.aio.UnaryUnaryClientInterceptor):
    """On the channel to agent memory: once a call that may write returns (or
    fails: it may have committed), drop its account's answers."""

    def __init__(self, cache: PinnedCache) -> None:
        self._cache = cache

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        method = client_call_details.method
        if isinstance(method, bytes):
            method = method.decode()
        call = await continuation(client_call_details, request)
        if method.rsplit("/", 1)[-1] in READS:
            return await call
        try:
            return await call
        finally:
            if "principal" in request.DESCRIPTOR.fields_by_name:
                self._cache.forget(request.principal.account_id)
            else:
                self._cache.forget_all()
