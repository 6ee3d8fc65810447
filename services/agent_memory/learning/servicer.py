"""The gRPC LearningService of agent memory: validate, call the operations, convert."""

from __future__ import annotations

from agentmemory.agent_memory.v1 import learning_service_pb2 as pb
from agentmemory.agent_memory.v1 import learning_service_pb2_grpc as pb_grpc

from libs import limits
from libs.identity import require_id
from services.agent_memory.learning import conversions
from services.agent_memory.learning.procedures import MAX_RECALL
from services.agent_memory.learning.service import Learning
from services.agent_memory.memories import conversions as memory_conversions

LIST_DEFAULT, LIST_MAX = 50, 200


class LearningServicer(pb_grpc.LearningServiceServicer):
    def __init__(self, learning: Learning) -> None:
        self._learning = learning

    async def ListSuggestions(self, request, context) -> pb.ListSuggestionsResponse:
        actor = memory_conversions.actor(request.principal)
        size = limits.count(request.page_size, "page_size", default=LIST_DEFAULT,
                            maximum=LIST_MAX)
        found = await self._learning.suggestions(
            actor, conversions.status(request.status),
            conversions.time_position(request.page_token), size)
        return pb.ListSuggestionsResponse(
            suggestions=[conversions.suggestion(s) for s in found],
            next_page_token=conversions.time_token(found, "created_at", size))

    async def AcceptSuggestion(self, request, context) -> pb.AcceptSuggestionResponse:
        actor = memory_conversions.actor(request.principal)
        suggestion_id = conversions.uuid_field(request.suggestion_id, "suggestion_id")
        decided, entry, procedure = await self._learning.accept(
            actor, suggestion_id, request.content if request.content else None)
        return pb.AcceptSuggestionResponse(
            suggestion=conversions.suggestion(decided),
            memory=memory_conversions.entry(entry) if entry else None,
            procedure=conversions.procedure(procedure) if procedure else None)

    async def RejectSuggestion(self, request, context) -> pb.RejectSuggestionResponse:
        actor = memory_conversions.actor(request.principal)
        decided = await self._learning.reject(
            actor, conversions.uuid_field(request.suggestion_id, "suggestion_id"))
        return pb.RejectSuggestionResponse(suggestion=conversions.suggestion(decided))

    async def ListProcedures(self, request, context) -> pb.ListProceduresResponse:
        actor = memory_conversions.actor(request.principal)
        size = limits.count(request.page_size, "page_size", default=LIST_DEFAULT,
                            maximum=LIST_MAX)
        found = await self._learning.procedures(
            actor, request.include_deleted, conversions.time_position(request.page_token), size)
        return pb.ListProceduresResponse(
            procedures=[conversions.procedure(p) for p in found],
            next_page_token=conversions.time_token(found, "created_at", size))

    async def DeleteProcedure(self, request, context) -> pb.DeleteProcedureResponse:
        actor = memory_conversions.actor(request.principal)
        deleted = await self._learning.delete_procedure(
            actor, conversions.uuid_field(request.procedure_id, "procedure_id"))
        return pb.DeleteProcedureResponse(procedure=conversions.procedure(deleted))

    async def ListLearningAudit(self, request, context) -> pb.ListLearningAuditResponse:
        actor = memory_conversions.actor(request.principal)
        size = limits.count(request.page_size, "page_size", default=LIST_DEFAULT,
                            maximum=LIST_MAX)
        found = await self._learning.audit(actor, conversions.audit_position(request.page_token),
                                           size)
        return pb.ListLearningAuditResponse(records=[conversions.audit_record(r) for r in found],
                                            next_page_token=conversions.audit_token(found, size))

    async def HoldRunCredentials(self, request, context) -> pb.HoldRunCredentialsResponse:
        actor = memory_conversions.actor(request.principal)
        await self._learning.hold_credentials(
            actor, require_id(request.thread_id, "thread_id"),
            require_id(request.run_id, "run_id"), list(request.credentials))
        return pb.HoldRunCredentialsResponse()

    async def RecallProcedures(self, request, context) -> pb.RecallProceduresResponse:
        actor = memory_conversions.actor(request.principal)
        limit = limits.count(request.limit, "limit", default=MAX_RECALL, maximum=MAX_RECALL)
        recall = await self._learning.recall(
            actor, request.task, limit,
            conversions.run_reference(request.thread_id, request.run_id))
        return conversions.recalled(recall)

    async def RecordRunFeedback(self, request, context) -> pb.RecordRunFeedbackResponse:
        actor = memory_conversions.actor(request.principal)
        ids = await self._learning.rate(actor, require_id(request.thread_id, "thread_id"),
                                        require_id(request.run_id, "run_id"),
                                        conversions.rating(request.rating))
        return pb.RecordRunFeedbackResponse(procedure_ids=[str(i) for i in ids])
