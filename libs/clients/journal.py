"""The journal's client, for every service that calls it, and the placement of threads.

A thread lives in the shard :func:`shard_of` picks by hashing (account, thread)
over the journal's shard count; this is the one definition of placement (the
journal uses it too). A journal process may serve some of the shards only, and
a shard may have standby processes that take it over when its writer dies
(``services/journal/ownership.py``); whichever process holds a shard reports
SERVING under the shard's health name (:func:`shard_health_name`), the others do
not. :class:`JournalClient` keeps one channel per shard over every journal
address, with gRPC client-side health checks under that name, so a call reaches
the shard's current writer, and a takeover redirects calls as soon as the new
writer reports SERVING. Calls are retried on UNAVAILABLE (``libs.clients``):
appends are idempotent by message id, so an append whose answer was lost with
its writer is safely sent again to the next one. The shard count is asked of the
journal once (it is fixed when the journal is created).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Sequence

import grpc
from agentmemory.common.v1 import message_pb2, run_pb2
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb
from agentmemory.journal.v1 import journal_service_pb2_grpc as journal_grpc

from libs.clients import ServiceClient
from libs.errors import DomainError, InvalidArgument
from libs.identity import Principal
from libs.settings import Secret

PAGE = 1000
SERVICE_NAME = journal_pb.DESCRIPTOR.services_by_name["JournalService"].full_name


def shard_of(account_id: str, thread_id: str, shard_count: int) -> int:
    """Stable placement of a thread: hash of (account, thread)."""
    digest = hashlib.blake2b(f"{account_id}/{thread_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shard_count


def shard_health_name(shard: int) -> str:
    """The health-service name under which the process holding ``shard`` reports SERVING."""
    return f"{SERVICE_NAME}/shard-{shard}"


class JournalClient(ServiceClient):
    """Every call of the journal's, sent to the current writer of the shard concerned."""

    def __init__(self, target: str, *, timeout: float = 5.0,
                 internal_token: Secret | None = None, interceptors: Sequence = ()) -> None:
        # The base channel reaches any serving journal process: DescribeShards' count.
        super().__init__("journal", target, timeout=timeout, internal_token=internal_token,
                         interceptors=interceptors, health_service=SERVICE_NAME)
        self._any = journal_grpc.JournalServiceStub(self.channel)
        self._channels: dict[int, grpc.aio.Channel] = {}
        self._stubs: dict[int, journal_grpc.JournalServiceStub] = {}
        self._count: int | None = None

    async def close(self) -> None:
        for channel in self._channels.values():
            await channel.close()
        await super().close()

    async def shard_count(self) -> int:
        if self._count is None:
            reply = await self._any.DescribeShards(journal_pb.DescribeShardsRequest())
            self._count = reply.shard_count
        return self._count

    def _shard(self, index: int) -> journal_grpc.JournalServiceStub:
        """The stub for shard ``index`` (its channel is made on first use)."""
        stub = self._stubs.get(index)
        if stub is None:
            self._channels[index] = channel = self.open(shard_health_name(index))
            stub = self._stubs[index] = journal_grpc.JournalServiceStub(channel)
        return stub

    async def _holding(self, principal: Principal,
                       thread_id: str) -> journal_grpc.JournalServiceStub:
        return self._shard(shard_of(principal.account_id, thread_id, await self.shard_count()))

    # -- writes (the gateway) ---------------------------------------------------------

    async def append(self, principal: Principal, thread_id: str,
                     messages: Sequence[message_pb2.Message]) -> journal_pb.AppendResponse:
        return await (await self._holding(principal, thread_id)).Append(journal_pb.AppendRequest(
            principal=principal.to_proto(), thread_id=thread_id, messages=messages))

    async def start_run(self, principal: Principal, thread_id: str,
                        run_id: str) -> journal_pb.StartRunResponse:
        return await (await self._holding(principal, thread_id)).StartRun(
            journal_pb.StartRunRequest(principal=principal.to_proto(), thread_id=thread_id,
                                       run_id=run_id))

    async def finish_run(self, principal: Principal, thread_id: str, run_id: str,
                         outcome: run_pb2.RunOutcome.ValueType) -> journal_pb.FinishRunResponse:
        return await (await self._holding(principal, thread_id)).FinishRun(
            journal_pb.FinishRunRequest(principal=principal.to_proto(), thread_id=thread_id,
                                        run_id=run_id, outcome=outcome))

    async def get_run(self, principal: Principal, thread_id: str,
                      run_id: str) -> journal_pb.GetRunResponse:
        """``run_id`` '' is the thread's open run; an unknown run is NOT_FOUND (RUN_NOT_FOUND)."""
        return await (await self._holding(principal, thread_id)).GetRun(journal_pb.GetRunRequest(
            principal=principal.to_proto(), thread_id=thread_id, run_id=run_id))

    async def purge_thread(self, principal: Principal, thread_id: str) -> None:
        await (await self._holding(principal, thread_id)).PurgeThread(
            journal_pb.PurgeThreadRequest(principal=principal.to_proto(), thread_id=thread_id))

    # -- reads --------------------------------------------------------------------------

    async def recent(self, principal: Principal, thread_id: str,
                     limit: int) -> list[message_pb2.Message]:
        return (await self.recent_and_open_run(principal, thread_id, limit, False))[0]

    async def recent_and_open_run(self, principal: Principal, thread_id: str, limit: int,
                                  with_open_run: bool) -> tuple[list[message_pb2.Message], str]:
        """The last ``limit`` messages and, if asked, the thread's open run ('' when none)."""
        reply = await (await self._holding(principal, thread_id)).ReadRecent(
            journal_pb.ReadRecentRequest(principal=principal.to_proto(), thread_id=thread_id,
                                         limit=limit, include_open_run=with_open_run))
        return list(reply.messages), reply.open_run_id

    async def thread_stats(self, principal: Principal, thread_id: str,
                           after_offset: int = 0) -> journal_pb.GetThreadStatsResponse:
        """Length, tokens and owner of a thread, and what it holds after ``after_offset``."""
        return await (await self._holding(principal, thread_id)).GetThreadStats(
            journal_pb.GetThreadStatsRequest(principal=principal.to_proto(),
                                             thread_id=thread_id, after_offset=after_offset))

    async def read_range(self, principal: Principal, thread_id: str, from_offset: int,
                         page_size: int) -> list[message_pb2.Message]:
        """Up to ``page_size`` messages from ``from_offset`` on, in order."""
        reply = await (await self._holding(principal, thread_id)).ReadRange(
            journal_pb.ReadRangeRequest(principal=principal.to_proto(), thread_id=thread_id,
                                        from_offset=from_offset, page_size=page_size))
        return list(reply.messages)

    async def between(self, principal: Principal, thread_id: str, after: int,
                      through: int) -> list[message_pb2.Message]:
        """Messages with after < offset <= through, in order."""
        messages: list[message_pb2.Message] = []
        start = after + 1
        while start <= through:
            page = await self.read_range(principal, thread_id, start,
                                         min(PAGE, through - start + 1))
            if not page:
                break
            messages += [m for m in page if m.offset <= through]
            start = page[-1].offset + 1
        return messages

    async def follow(self, shard: int, after: int, timeout: float,
                     content: journal_pb.FeedContent.ValueType = journal_pb.FEED_CONTENT_UNSPECIFIED,
                     ) -> AsyncIterator[journal_pb.SubscribeResponse]:
        """The change feed after ``after`` (``content``: messages, runs or both); ends
        after ``timeout`` (callers resubscribe). Its errors are gRPC's (a stream's, see
        ``libs.clients.ErrorMapping``)."""
        call = self._shard(shard).Subscribe(
            journal_pb.SubscribeRequest(shard=shard, after_sequence=after, content=content),
            timeout=timeout)
        try:
            async for event in call:
                yield event
        finally:
            call.cancel()

    async def durable_sequences(self) -> dict[int, int]:
        """Each shard's durable sequence, from the process holding it."""
        count = await self.shard_count()
        replies = await asyncio.gather(*(
            self._shard(i).DescribeShards(journal_pb.DescribeShardsRequest())
            for i in range(count)))
        return {s.shard: s.durable_sequence for i, reply in enumerate(replies)
                for s in reply.shards if s.shard == i}

    async def tool_call(self, principal: Principal, tool_call_id: str, thread_id: str | None,
                        offset: int, length: int) -> journal_pb.GetToolCallResponse:
        request = journal_pb.GetToolCallRequest(
            principal=principal.to_proto(), tool_call_id=tool_call_id,
            thread_id=thread_id or "", offset=offset, length=length)
        count = await self.shard_count()
        if thread_id is not None:
            return await (await self._holding(principal, thread_id)).GetToolCall(request)
        if count == 1:
            return await self._shard(0).GetToolCall(request)
        return await self._tool_call_in_any_shard(request, count)

    async def _tool_call_in_any_shard(self, request: journal_pb.GetToolCallRequest,
                                      count: int) -> journal_pb.GetToolCallResponse:
        """Without a thread, the call id is looked for in every shard; it must be in one.
        (A process holding several shards answers for all of them, so the same record
        may come back twice.)"""
        answers = await asyncio.gather(
            *(self._shard(i).GetToolCall(request) for i in range(count)),
            return_exceptions=True)
        found = list({(a.thread_id, a.message_id): a for a in answers
                      if isinstance(a, journal_pb.GetToolCallResponse)}.values())
        failures = [a for a in answers if isinstance(a, BaseException)]
        unexpected = [f for f in failures if not (isinstance(f, DomainError)
                                                 and f.code == grpc.StatusCode.NOT_FOUND)]
        if unexpected or not found:
            raise (unexpected or failures)[0]
        if len(found) > 1:
            raise InvalidArgument(
                "thread_id", f"tool call id {request.tool_call_id} was used in {len(found)} "
                "threads; name the thread")
        return found[0]
