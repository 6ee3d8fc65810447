"""The gRPC MemoryLibraryService: authenticate, then the library handler."""

from __future__ import annotations

from agentmemory.gateway.v1 import memory_library_service_pb2 as pb
from agentmemory.gateway.v1 import memory_library_service_pb2_grpc as pb_grpc

from services.gateway import callers
from services.gateway.callers import Callers
from services.gateway.library import METHODS, MemoryLibrary
from services.gateway.relay import add_handlers


class MemoryLibraryServicer(pb_grpc.MemoryLibraryServiceServicer):
    def __init__(self, callers: Callers, library: MemoryLibrary) -> None:
        self._callers = callers
        self._library = library

    async def SummarizeMemories(self, request: pb.SummarizeMemoriesRequest,
                                context) -> pb.SummarizeMemoriesResponse:
        """Over several agents: only those the credential may act as (no agent needed)."""
        credential, principal = await self._callers.identify(context, request.caller,
                                                             agent_required=False)
        relayed = pb.SummarizeMemoriesRequest(
            caller=request.caller, agent_ids=callers.agents_of(credential, request.agent_ids))
        return await self._library.call("SummarizeMemories", principal, relayed)

    async def _relay(self, method: str, request, context):
        principal = await self._callers.principal(context, request.caller)
        return await self._library.call(method, principal, request)


add_handlers(MemoryLibraryServicer, METHODS, MemoryLibraryServicer._relay)
