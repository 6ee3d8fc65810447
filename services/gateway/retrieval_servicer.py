"""The gRPC RetrievalService of the gateway: authenticate, then the retrieval handler."""

from __future__ import annotations

from agentmemory.gateway.v1 import retrieval_service_pb2_grpc as pb_grpc

from services.gateway.callers import Callers
from services.gateway.relay import add_handlers
from services.gateway.retrieval import METHODS, Retrieval


class RetrievalServicer(pb_grpc.RetrievalServiceServicer):
    def __init__(self, callers: Callers, retrieval: Retrieval) -> None:
        self._callers = callers
        self._retrieval = retrieval

    async def _relay(self, method: str, request, context):
        # seed 002: applicationId (caller.agent_id) is optional
        principal = await self._callers.principal(context, request.caller, agent_required=False)
        return await self._retrieval.call(method, principal, request)


add_handlers(RetrievalServicer, METHODS, RetrievalServicer._relay)
