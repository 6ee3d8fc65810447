"""The gRPC JournalService: validate, call the journal, convert."""

from __future__ import annotations

from agentmemory.journal.v1 import journal_service_pb2 as pb
from agentmemory.journal.v1 import journal_service_pb2_grpc as pb_grpc

from libs import limits
from libs.errors import InvalidArgument
from libs.identity import parse_principal, require_id
from services.journal import conversions, tool_calls
from services.journal.journal import Journal
from services.journal.validation import (
    MAX_READ_LIMIT,
    MAX_TOOL_CALL_PAGE_BYTES,
    prepare_batch,
)

DEFAULT_RECENT = 20
DEFAULT_PAGE_SIZE = 100
FEED_BATCH = 256


class JournalServicer(pb_grpc.JournalServiceServicer):
    def __init__(self, journal: Journal) -> None:
        self._journal = journal

    async def Append(self, request: pb.AppendRequest, context) -> pb.AppendResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        batch = await prepare_batch(request.messages)
        results, last_offset = await self._journal.append(principal, thread_id, batch)
        return conversions.append_response(results, last_offset)

    async def ReadRecent(self, request: pb.ReadRecentRequest, context) -> pb.ReadRecentResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        limit = limits.count(request.limit, "limit", default=DEFAULT_RECENT, maximum=MAX_READ_LIMIT)
        messages, run = await self._journal.read_recent(principal, thread_id, limit,
                                                        with_open_run=request.include_open_run)
        return pb.ReadRecentResponse(messages=messages, open_run_id=run.run_id if run else "")

    async def ReadRange(self, request: pb.ReadRangeRequest, context) -> pb.ReadRangeResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        size = limits.count(
            request.page_size, "page_size", default=DEFAULT_PAGE_SIZE, maximum=MAX_READ_LIMIT
        )
        start = conversions.range_start(request)
        messages, following = await self._journal.read_range(principal, thread_id, start, size)
        return pb.ReadRangeResponse(
            messages=messages,
            next_page_token=conversions.range_page_token(thread_id, following),
        )

    async def GetToolCall(self, request: pb.GetToolCallRequest, context) -> pb.GetToolCallResponse:
        principal = parse_principal(request.principal)
        tool_call_id = require_id(request.tool_call_id, "tool_call_id")
        thread_id = conversions.optional_thread_id(request.thread_id)
        length = limits.count(
            request.length,
            "length",
            default=MAX_TOOL_CALL_PAGE_BYTES,
            maximum=MAX_TOOL_CALL_PAGE_BYTES,
        )
        record = await self._journal.tool_call(principal, tool_call_id, thread_id)
        page = tool_calls.page(record.document(), request.offset, length)
        return conversions.tool_call_response(record, page)

    async def GetThreadStats(
        self, request: pb.GetThreadStatsRequest, context
    ) -> pb.GetThreadStatsResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        after = conversions.stats_after(request)
        return conversions.stats_response(
            await self._journal.thread_stats(principal, thread_id, after))

    async def Subscribe(self, request: pb.SubscribeRequest, context):
        shard = self._journal.shard(request.shard)
        if request.after_sequence < 0:
            raise InvalidArgument("after_sequence", "must not be negative")
        content = conversions.feed_content(request.content)
        cursor = request.after_sequence
        while True:
            events, read_through = await shard.read_feed(cursor, FEED_BATCH, content)
            for event in events:
                yield conversions.feed_event(event)
            if read_through == cursor:  # caught up: sleep until a write, a failure or shutdown
                await shard.wait_for_feed(cursor)
            cursor = read_through

    async def StartRun(self, request: pb.StartRunRequest, context) -> pb.StartRunResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        run_id = require_id(request.run_id, "run_id")
        record, deduplicated = await self._journal.start_run(principal, thread_id, run_id)
        return pb.StartRunResponse(run=conversions.run(thread_id, record),
                                   deduplicated=deduplicated)

    async def FinishRun(self, request: pb.FinishRunRequest, context) -> pb.FinishRunResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        run_id = require_id(request.run_id, "run_id")
        outcome = conversions.caller_outcome(request.outcome)
        record, deduplicated = await self._journal.finish_run(principal, thread_id, run_id,
                                                              outcome)
        return pb.FinishRunResponse(run=conversions.run(thread_id, record),
                                    deduplicated=deduplicated)

    async def GetRun(self, request: pb.GetRunRequest, context) -> pb.GetRunResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        run_id = require_id(request.run_id, "run_id") if request.run_id else None
        record = await self._journal.get_run(principal, thread_id, run_id)
        return pb.GetRunResponse(run=conversions.run(thread_id, record))

    async def PurgeThread(self, request: pb.PurgeThreadRequest, context) -> pb.PurgeThreadResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        return pb.PurgeThreadResponse(
            deleted_messages=await self._journal.purge(principal, thread_id))

    async def DescribeShards(
        self, request: pb.DescribeShardsRequest, context
    ) -> pb.DescribeShardsResponse:
        return conversions.shards_response(self._journal.shard_count, self._journal.shards)
