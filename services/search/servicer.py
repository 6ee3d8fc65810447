"""The gRPC SearchService: validate (surface first), call, convert."""

from __future__ import annotations

import asyncio
import contextlib

from agentmemory.search.v1 import search_service_pb2 as pb
from agentmemory.search.v1 import search_service_pb2_grpc as pb_grpc

from libs.clients.journal import JournalClient
from libs.errors import DomainError
from libs.identity import parse_principal, require_id
from services.search import conversions
from services.search.dense import DenseProjector
from services.search.lag import JournalSequences, ShardLag
from services.search.projector import Projector
from services.search.search import Searcher

SEQUENCES_TIMEOUT_SECONDS = 1.0


class SearchServicer(pb_grpc.SearchServiceServicer):
    def __init__(self, searcher: Searcher, journal: JournalClient, projector: Projector,
                 dense: DenseProjector | None, engine: str,
                 sequences: JournalSequences) -> None:
        self._searcher = searcher
        self._journal = journal
        self._sequences = sequences
        self._projector = projector
        self._dense = dense
        self._engine = engine

    async def SearchMessages(self, request: pb.SearchMessagesRequest,
                             context) -> pb.SearchMessagesResponse:
        conversions.check_surface(request.surface)
        principal = parse_principal(request.principal)
        query = conversions.query(request.query)
        scope, thread_id = conversions.scope(request)
        limit = conversions.limit(request.limit)
        mode = conversions.mode(request.mode)
        result = await self._searcher.search(principal, query, scope, thread_id, limit, mode,
                                             rerank=request.rerank)
        summaries = (await self._searcher.summarize(query, result.hits)
                     if conversions.summarize(request) else [])
        return conversions.response(result, summaries)

    async def ViewToolCall(self, request: pb.ViewToolCallRequest,
                           context) -> pb.ViewToolCallResponse:
        conversions.check_surface(request.surface)
        principal = parse_principal(request.principal)
        tool_call_id = require_id(request.tool_call_id, "tool_call_id")
        thread_id = require_id(request.thread_id, "thread_id") if request.thread_id else None
        page = await self._journal.tool_call(principal, tool_call_id, thread_id, request.offset,
                                             request.length)
        return pb.ViewToolCallResponse(data=page.data, total_size=page.total_size,
                                       next_offset=page.next_offset, has_more=page.has_more)

    async def PurgeThread(self, request: pb.PurgeThreadRequest, context) -> pb.PurgeThreadResponse:
        principal = parse_principal(request.principal)
        thread_id = require_id(request.thread_id, "thread_id")
        await self._searcher.purge(principal, thread_id)
        return pb.PurgeThreadResponse()

    async def DescribeProjection(self, request: pb.DescribeProjectionRequest,
                                 context) -> pb.DescribeProjectionResponse:
        # The journal's sequences afresh (the background refresh backs off while it stands
        # still); when the journal cannot say within a second, the last ones seen.
        with contextlib.suppress(DomainError, TimeoutError):
            await asyncio.wait_for(self._sequences.refresh(), SEQUENCES_TIMEOUT_SECONDS)
        shards = self._projector.lag()
        embedded = {s.shard: s for s in self._dense.lag()} if self._dense is not None else {}
        response = pb.DescribeProjectionResponse(
            lag=sum(s.lag for s in shards), engine=self._engine,
            projected_messages=self._projector.projected_rows)
        for s in shards:
            shard = response.shards.add(shard=s.shard, projected_sequence=s.projected,
                                        journal_sequence=s.journal, lag=s.lag)
            if self._dense is not None:  # a shard the embeddings have not reached: all behind
                behind = embedded.get(s.shard, ShardLag(s.shard, 0, s.journal))
                shard.embedded_sequence, shard.embedding_lag = behind.projected, behind.lag
                response.embedding_lag += behind.lag
        if self._dense is not None:
            response.embedder = self._dense.embedder
            response.embedded_messages = self._dense.embedded_rows
        return response
