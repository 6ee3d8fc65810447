"""A client of the journal for the other services: reads, tool calls, the change feed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from agentmemory.common.v1 import message_pb2
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb
from agentmemory.journal.v1 import journal_service_pb2_grpc as journal_grpc

from libs import clients
from libs.clients import upstream
from libs.identity import Principal
from libs.settings import Secret

PAGE = 1000


class JournalReader:
    def __init__(self, target: str, *, timeout: float = 5.0,
                 internal_token: Secret | None = None, interceptors: Sequence = ()) -> None:
        self._channel = clients.channel(target, default_timeout=timeout,
                                        internal_token=internal_token, interceptors=interceptors)
        self._stub = journal_grpc.JournalServiceStub(self._channel)

    async def close(self) -> None:
        await self._channel.close()

    async def recent(self, principal: Principal, thread_id: str,
                     limit: int) -> list[message_pb2.Message]:
        async with upstream("journal"):
            reply = await self._stub.ReadRecent(journal_pb.ReadRecentRequest(
                principal=principal.to_proto(), thread_id=thread_id, limit=limit))
        return list(reply.messages)

    async def thread_stats(self, principal: Principal, thread_id: str,
                           after_offset: int = 0) -> journal_pb.GetThreadStatsResponse:
        """Length, tokens and owner of a thread, and what it holds after ``after_offset``."""
        async with upstream("journal"):
            return await self._stub.GetThreadStats(journal_pb.GetThreadStatsRequest(
                principal=principal.to_proto(), thread_id=thread_id, after_offset=after_offset))

    async def between(self, principal: Principal, thread_id: str, after: int,
                      through: int) -> list[message_pb2.Message]:
        """Messages with after < offset <= through, in order."""
        messages: list[message_pb2.Message] = []
        start = after + 1
        while start <= through:
            async with upstream("journal"):
                reply = await self._stub.ReadRange(journal_pb.ReadRangeRequest(
                    principal=principal.to_proto(), thread_id=thread_id, from_offset=start,
                    page_size=min(PAGE, through - start + 1)))
            if not reply.messages:
                break
            messages += [m for m in reply.messages if m.offset <= through]
            start = reply.messages[-1].offset + 1
        return messages

    async def shard_count(self) -> int:
        async with upstream("journal"):
            reply = await self._stub.DescribeShards(journal_pb.DescribeShardsRequest())
        return reply.shard_count

    async def follow(self, shard: int, after: int, timeout: float,
                     content: int = journal_pb.FEED_CONTENT_UNSPECIFIED,
                     ) -> AsyncIterator[journal_pb.SubscribeResponse]:
        """The change feed after ``after`` (``content``: messages, runs or both); ends
        after ``timeout`` (callers resubscribe)."""
        call = self._stub.Subscribe(
            journal_pb.SubscribeRequest(shard=shard, after_sequence=after, content=content),
            timeout=timeout)
        try:
            async for event in call:
                yield event
        finally:
            call.cancel()

    async def durable_sequences(self) -> dict[int, int]:
        async with upstream("journal"):
            reply = await self._stub.DescribeShards(journal_pb.DescribeShardsRequest())
        return {s.shard: s.durable_sequence for s in reply.shards}

    async def tool_call(self, principal: Principal, tool_call_id: str, thread_id: str | None,
                        offset: int, length: int) -> journal_pb.GetToolCallResponse:
        async with upstream("journal"):
            return await self._stub.GetToolCall(journal_pb.GetToolCallRequest(
                principal=principal.to_proto(), tool_call_id=tool_call_id,
                thread_id=thread_id or "", offset=offset, length=length))
