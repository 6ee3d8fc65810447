"""The gRPC RetrievalService of the gateway: authenticate, then the retrieval handler."""

from __future__ import annotations

from agentmemory.gateway.v1 import retrieval_service_pb2_grpc as pb_grpc

from services.gateway import callers
from services.gateway.keys import ApiKeys
from services.gateway.retrieval import METHODS, Retrieval


def _handler(method: str):
    async def handle(self, request, context):
        principal = await callers.authenticate(self._keys, context, request.caller)
        return await self._retrieval.call(method, principal, request)

    handle.__name__ = method
    return handle


class RetrievalServicer(pb_grpc.RetrievalServiceServicer):
    def __init__(self, keys: ApiKeys, retrieval: Retrieval) -> None:
        self._keys = keys
        self._retrieval = retrieval


for _method in METHODS:
    setattr(RetrievalServicer, _method, _handler(_method))
