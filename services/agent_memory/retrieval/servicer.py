"""The gRPC RetrievalService of agent memory: validate, call the operations, convert."""

from __future__ import annotations

from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from agentmemory.agent_memory.v1 import retrieval_pb2_grpc as pb_grpc

from services.agent_memory.retrieval import conversions
from services.agent_memory.retrieval.episodes import sentences
from services.agent_memory.retrieval.service import Retrieval


class RetrievalServicer(pb_grpc.RetrievalServiceServicer):
    """Every call takes a principal of no agent too: it sees the account's memories and
    its user's (seed 002: applicationId is optional)."""

    def __init__(self, retrieval: Retrieval, clock) -> None:
        self._retrieval = retrieval
        self._clock = clock

    async def RetrieveContext(self, request: pb.RetrieveContextRequest,
                              context) -> pb.RetrieveContextResponse:
        actor = conversions.actor(request.principal, agent_required=False)
        found = await self._retrieval.retrieve(actor, conversions.retrieve_request(request))
        return conversions.context(found)

    async def RetrieveRelevantMemories(self, request: pb.RetrieveRelevantMemoriesRequest,
                                       context) -> pb.RetrieveRelevantMemoriesResponse:
        actor = conversions.actor(request.principal)
        found = await self._retrieval.relevant(actor, conversions.relevant_request(request))
        return conversions.relevant(found)

    async def RecordFeedback(self, request: pb.RecordFeedbackRequest,
                             context) -> pb.RecordFeedbackResponse:
        actor = conversions.actor(request.principal, agent_required=False)
        receipt_id = conversions.receipt_id(request.receipt_id)
        request_id = conversions.request_id(request.request_id)
        memory_ids = [conversions.memory_id(m, f"memory_ids[{i}]")
                      for i, m in enumerate(request.memory_ids)]
        credited, replayed = await self._retrieval.record_feedback(
            actor, receipt_id, request_id, request.helpful, memory_ids)
        return pb.RecordFeedbackResponse(credited_memory_ids=[str(i) for i in credited],
                                         replayed=replayed)

    async def RecordOutcome(self, request: pb.RecordOutcomeRequest,
                            context) -> pb.RecordOutcomeResponse:
        actor = conversions.actor(request.principal, agent_required=False)
        receipt_id = conversions.receipt_id(request.receipt_id)
        request_id = conversions.request_id(request.request_id)
        credited, replayed = await self._retrieval.record_outcome(
            actor, receipt_id, request_id, conversions.outcome(request.outcome))
        return pb.RecordOutcomeResponse(credited_memory_ids=[str(i) for i in credited],
                                        replayed=replayed)

    async def GetReceipt(self, request: pb.GetReceiptRequest, context) -> pb.GetReceiptResponse:
        actor = conversions.actor(request.principal, agent_required=False)
        found = await self._retrieval.receipt(actor, conversions.receipt_id(request.receipt_id))
        return pb.GetReceiptResponse(receipt=conversions.receipt(found))

    async def RecordEpisode(self, request: pb.RecordEpisodeRequest,
                            context) -> pb.RecordEpisodeResponse:
        actor = conversions.actor(request.principal, agent_required=False)
        fields = conversions.episode_fields(request)
        fields["finished_at"] = fields["finished_at"] or self._clock.now()
        episode = await self._retrieval.record_episode(actor, **fields)
        return pb.RecordEpisodeResponse(
            episode=conversions.episode(episode),
            sentences=len(sentences(episode.task, episode.summary)))
