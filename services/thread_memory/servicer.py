"""The gRPC ThreadMemoryService: validate, call, convert."""

from __future__ import annotations

from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2_grpc as pb_grpc

from libs.identity import parse_principal, require_id
from services.thread_memory import conversions
from services.thread_memory.context import ThreadContext
from services.thread_memory.jobs import JobTarget, Status, Summarization


class ThreadMemoryServicer(pb_grpc.ThreadMemoryServiceServicer):
    def __init__(self, context: ThreadContext, summarization: Summarization) -> None:
        self._context = context
        self._summarization = summarization

    async def GetThreadContext(self, request: pb.GetThreadContextRequest,
                               context) -> pb.GetThreadContextResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        metadata = request.thread_metadata if request.HasField("thread_metadata") else None
        messages, summary, open_run = await self._context.get(
            principal, thread_id, conversions.requested_window(request), metadata,
            with_open_run=request.include_open_run)
        return pb.GetThreadContextResponse(messages=messages,
                                           summary=conversions.summary(summary),
                                           open_run_id=open_run)

    async def GetSummary(self, request: pb.GetSummaryRequest, context) -> pb.GetSummaryResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        summary = await self._context.summary(principal, thread_id)
        return pb.GetSummaryResponse(summary=conversions.summary(summary))

    async def PurgeThread(self, request: pb.PurgeThreadRequest, context) -> pb.PurgeThreadResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        summary_deleted, keys_deleted = await self._context.purge(principal, thread_id)
        return pb.PurgeThreadResponse(summary_deleted=summary_deleted,
                                      redis_keys_deleted=keys_deleted)

    async def Summarize(self, request: pb.SummarizeRequest, context) -> pb.SummarizeResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        outcome = await self._summarization.run(JobTarget(principal, thread_id), force=True)
        written = outcome.status == Status.WRITTEN
        # Only a summary the job wrote is known to be the caller's to see.
        summary = outcome.summary if written else await self._context.summary(principal, thread_id)
        return pb.SummarizeResponse(summary=conversions.summary(summary),
                                    flushed_facts=outcome.flushed,
                                    summarized=written)
