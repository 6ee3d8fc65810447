"""The gRPC MemoryLibraryService: authenticate, then the library handler."""

from __future__ import annotations

from agentmemory.gateway.v1 import memory_library_service_pb2_grpc as pb_grpc

from services.gateway.callers import Callers
from services.gateway.library import METHODS, MemoryLibrary


def _handler(method: str):
    async def handle(self, request, context):
        principal = await self._callers.principal(context, request.caller)
        return await self._library.call(method, principal, request)

    handle.__name__ = method
    return handle


class MemoryLibraryServicer(pb_grpc.MemoryLibraryServiceServicer):
    def __init__(self, callers: Callers, library: MemoryLibrary) -> None:
        self._callers = callers
        self._library = library


for _method in METHODS:
    setattr(MemoryLibraryServicer, _method, _handler(_method))
