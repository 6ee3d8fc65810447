"""The gRPC AgentMemoryService: validate, call the operations, convert."""

from __future__ import annotations

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as pb_grpc

from libs import limits
from libs.identity import parse_principal
from services.agent_memory import conversions, rules
from services.agent_memory.memory import AgentMemory

LIST_DEFAULT, LIST_MAX = 50, 200


class AgentMemoryServicer(pb_grpc.AgentMemoryServiceServicer):
    def __init__(self, memory: AgentMemory) -> None:
        self._memory = memory

    async def Store(self, request: pb.StoreRequest, context) -> pb.StoreResponse:
        principal = parse_principal(request.principal)
        result = await self._memory.store(
            principal,
            key=request.key,
            content=request.content,
            category=conversions.category(request.category),
            visibility=conversions.visibility(request.visibility),
            importance=request.importance if request.HasField("importance") else None,
            source=conversions.source(request.source),
            request_id=conversions.request_id(request.request_id),
        )
        return conversions.store_response(result)

    async def Recall(self, request: pb.RecallRequest, context) -> pb.RecallResponse:
        principal = parse_principal(request.principal)
        limit = limits.count(request.limit, "limit", default=rules.RECALL_DEFAULT_LIMIT,
                                  maximum=rules.RECALL_MAX_LIMIT)
        result = await self._memory.recall(principal, request.query, limit,
                                           conversions.categories(request.categories))
        return conversions.recalled(result.entries, result.fallback)

    async def Forget(self, request: pb.ForgetRequest, context) -> pb.ForgetResponse:
        principal = parse_principal(request.principal)
        return pb.ForgetResponse(forgotten=await self._memory.forget(principal, request.key))

    async def ListPinned(self, request: pb.ListPinnedRequest, context) -> pb.ListPinnedResponse:
        principal = parse_principal(request.principal)
        entries = await self._memory.pinned(principal)
        return pb.ListPinnedResponse(entries=[conversions.entry(e) for e in entries])

    async def GetEntry(self, request: pb.GetEntryRequest, context) -> pb.GetEntryResponse:
        principal = parse_principal(request.principal)
        return pb.GetEntryResponse(entry=conversions.entry(
            await self._memory.get(principal, request.key)))

    async def ListEntries(self, request: pb.ListEntriesRequest, context) -> pb.ListEntriesResponse:
        principal = parse_principal(request.principal)
        size = limits.count(request.page_size, "page_size", default=LIST_DEFAULT,
                                 maximum=LIST_MAX)
        entries = await self._memory.list(principal, conversions.categories(request.categories),
                                          conversions.list_position(request.page_token), size)
        return pb.ListEntriesResponse(entries=[conversions.entry(e) for e in entries],
                                      next_page_token=conversions.next_list_token(entries, size))

    async def RunHygiene(self, request: pb.RunHygieneRequest, context) -> pb.RunHygieneResponse:
        expired, decayed = await self._memory.run_hygiene()
        return pb.RunHygieneResponse(expired=expired, decayed=decayed)

    async def Reindex(self, request: pb.ReindexRequest, context):
        principal = parse_principal(request.principal)
        async for indexed, total, name in self._memory.reindex(principal):
            yield pb.ReindexResponse(indexed=indexed, total=total, collection=name)

    async def GetAgentSettings(self, request, context) -> pb.GetAgentSettingsResponse:
        principal = parse_principal(request.principal)
        bound = await self._memory.memory_bound(principal)
        return pb.GetAgentSettingsResponse(settings=pb.AgentSettings(memory_bound=bound))

    async def SetAgentSettings(self, request, context) -> pb.SetAgentSettingsResponse:
        principal = parse_principal(request.principal)
        bound = await self._memory.set_memory_bound(principal, request.settings.memory_bound)
        return pb.SetAgentSettingsResponse(settings=pb.AgentSettings(memory_bound=bound))
