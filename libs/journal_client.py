"""Clients of the journal: which process serves each shard, and a reader for the services.

A thread lives in the shard :func:`shard_of` picks by hashing (account, thread)
over the journal's shard count; this is the one definition of placement (the
journal uses it too). A journal process may serve some of the shards only, and
a shard may have standby processes that take it over when its writer dies
(``services/journal/ownership.py``); whichever process holds a shard reports
SERVING under the shard's health name (:func:`shard_health_name`), the others do
not. :class:`JournalShards` keeps one channel per shard over every journal
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
from agentmemory.common.v1 import message_pb2
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb
from agentmemory.journal.v1 import journal_service_pb2_grpc as journal_grpc

from libs import clients
from libs.clients import upstream
from libs.errors import InvalidArgument
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


class JournalShards:
    """Stubs reaching the current writer of each shard, among the processes ``target`` names."""

    def __init__(self, target: str, *, timeout: float = 5.0,
                 internal_token: Secret | None = None, interceptors: Sequence = ()) -> None:
        self._target = target
        self._options = dict(default_timeout=timeout, internal_token=internal_token,
                             interceptors=interceptors)
        # Any serving journal process answers DescribeShards' shard count.
        self._any_channel = clients.channel(target, health_service=SERVICE_NAME, **self._options)
        self.any = journal_grpc.JournalServiceStub(self._any_channel)
        self._channels: dict[int, grpc.aio.Channel] = {}
        self._stubs: dict[int, journal_grpc.JournalServiceStub] = {}
        self._count: int | None = None

    async def shard_count(self) -> int:
        if self._count is None:
            async with upstream("journal"):
                reply = await self.any.DescribeShards(journal_pb.DescribeShardsRequest())
            self._count = reply.shard_count
        return self._count

    def shard(self, index: int) -> journal_grpc.JournalServiceStub:
        """The stub for shard ``index`` (its channel is made on first use)."""
        stub = self._stubs.get(index)
        if stub is None:
            channel = clients.channel(self._target, health_service=shard_health_name(index),
                                      **self._options)
            self._channels[index] = channel
            stub = self._stubs[index] = journal_grpc.JournalServiceStub(channel)
        return stub

    async def for_thread(self, account_id: str, thread_id: str) -> journal_grpc.JournalServiceStub:
        return self.shard(shard_of(account_id, thread_id, await self.shard_count()))

    async def close(self) -> None:
        for channel in [self._any_channel, *self._channels.values()]:
            await channel.close()


class JournalReader:
    """Reads, tool calls and the change feed, for thread memory and search."""

    def __init__(self, target: str, *, timeout: float = 5.0,
                 internal_token: Secret | None = None, interceptors: Sequence = ()) -> None:
        self.shards = JournalShards(target, timeout=timeout, internal_token=internal_token,
                                    interceptors=interceptors)

    async def close(self) -> None:
        await self.shards.close()

    async def _stub(self, principal: Principal, thread_id: str):
        return await self.shards.for_thread(principal.account_id, thread_id)

    async def recent(self, principal: Principal, thread_id: str,
                     limit: int) -> list[message_pb2.Message]:
        return (await self.recent_and_open_run(principal, thread_id, limit, False))[0]

    async def recent_and_open_run(self, principal: Principal, thread_id: str, limit: int,
                                  with_open_run: bool) -> tuple[list[message_pb2.Message], str]:
        """The last ``limit`` messages and, if asked, the thread's open run ('' when none)."""
        async with upstream("journal"):
            reply = await (await self._stub(principal, thread_id)).ReadRecent(
                journal_pb.ReadRecentRequest(principal=principal.to_proto(), thread_id=thread_id,
                                             limit=limit, include_open_run=with_open_run))
        return list(reply.messages), reply.open_run_id

    async def thread_stats(self, principal: Principal, thread_id: str,
                           after_offset: int = 0) -> journal_pb.GetThreadStatsResponse:
        """Length, tokens and owner of a thread, and what it holds after ``after_offset``."""
        async with upstream("journal"):
            return await (await self._stub(principal, thread_id)).GetThreadStats(
                journal_pb.GetThreadStatsRequest(principal=principal.to_proto(),
                                                 thread_id=thread_id, after_offset=after_offset))

    async def between(self, principal: Principal, thread_id: str, after: int,
                      through: int) -> list[message_pb2.Message]:
        """Messages with after < offset <= through, in order."""
        messages: list[message_pb2.Message] = []
        start = after + 1
        while start <= through:
            async with upstream("journal"):
                reply = await (await self._stub(principal, thread_id)).ReadRange(
                    journal_pb.ReadRangeRequest(
                        principal=principal.to_proto(), thread_id=thread_id, from_offset=start,
                        page_size=min(PAGE, through - start + 1)))
            if not reply.messages:
                break
            messages += [m for m in reply.messages if m.offset <= through]
            start = reply.messages[-1].offset + 1
        return messages

    async def shard_count(self) -> int:
        return await self.shards.shard_count()

    async def follow(self, shard: int, after: int, timeout: float,
                     content: int = journal_pb.FEED_CONTENT_UNSPECIFIED,
                     ) -> AsyncIterator[journal_pb.SubscribeResponse]:
        """The change feed after ``after`` (``content``: messages, runs or both); ends
        after ``timeout`` (callers resubscribe)."""
        call = self.shards.shard(shard).Subscribe(
            journal_pb.SubscribeRequest(shard=shard, after_sequence=after, content=content),
            timeout=timeout)
        try:
            async for event in call:
                yield event
        finally:
            call.cancel()

    async def durable_sequences(self) -> dict[int, int]:
        """Each shard's durable sequence, from the process holding it."""
        count = await self.shards.shard_count()
        async with upstream("journal"):
            replies = await asyncio.gather(*(
                self.shards.shard(i).DescribeShards(journal_pb.DescribeShardsRequest())
                for i in range(count)))
        return {s.shard: s.durable_sequence for i, reply in enumerate(replies)
                for s in reply.shards if s.shard == i}

    async def tool_call(self, principal: Principal, tool_call_id: str, thread_id: str | None,
                        offset: int, length: int) -> journal_pb.GetToolCallResponse:
        request = journal_pb.GetToolCallRequest(
            principal=principal.to_proto(), tool_call_id=tool_call_id,
            thread_id=thread_id or "", offset=offset, length=length)
        count = await self.shards.shard_count()
        if thread_id is not None or count == 1:
            stub = (await self._stub(principal, thread_id) if thread_id is not None
                    else self.shards.shard(0))
            async with upstream("journal"):
                return await stub.GetToolCall(request)
        return await self._tool_call_in_any_shard(request, count)

    async def _tool_call_in_any_shard(self, request: journal_pb.GetToolCallRequest,
                                      count: int) -> journal_pb.GetToolCallResponse:
        """Without a thread, the call id is looked for in every shard; it must be in one.
        (A process holding several shards answers for all of them, so the same record
        may come back twice.)"""
        answers = await asyncio.gather(
            *(self.shards.shard(i).GetToolCall(request) for i in range(count)),
            return_exceptions=True)
        found = list({(a.thread_id, a.message_id): a for a in answers
                      if isinstance(a, journal_pb.GetToolCallResponse)}.values())
        failures = [a for a in answers if isinstance(a, BaseException)]
        unexpected = [f for f in failures if not (isinstance(f, grpc.aio.AioRpcError)
                                                 and f.code() == grpc.StatusCode.NOT_FOUND)]
        if unexpected or not found:
            async with upstream("journal"):
                raise (unexpected or failures)[0]
        if len(found) > 1:
            raise InvalidArgument(
                "thread_id", f"tool call id {request.tool_call_id} was used in {len(found)} "
                "threads; name the thread")
        return found[0]
