"""Search's client (the gateway's: the journal tools, purges)."""

from __future__ import annotations

from collections.abc import Sequence

from agentmemory.search.v1 import search_service_pb2 as pb
from agentmemory.search.v1 import search_service_pb2_grpc as pb_grpc

from libs.clients import ServiceClient
from libs.identity import Principal
from libs.settings import Secret


class SearchClient(ServiceClient):
    def __init__(self, target: str, *, timeout: float = 60.0,
                 internal_token: Secret | None = None, interceptors: Sequence = ()) -> None:
        super().__init__("search", target, timeout=timeout, internal_token=internal_token,
                         interceptors=interceptors)
        self._stub = pb_grpc.SearchServiceStub(self.channel)

    async def search_messages(self, request: pb.SearchMessagesRequest
                              ) -> pb.SearchMessagesResponse:
        return await self._stub.SearchMessages(request)

    async def view_tool_call(self, request: pb.ViewToolCallRequest) -> pb.ViewToolCallResponse:
        return await self._stub.ViewToolCall(request)

    async def purge_thread(self, principal: Principal, thread_id: str) -> None:
        await self._stub.PurgeThread(pb.PurgeThreadRequest(principal=principal.to_proto(),
                                                           thread_id=thread_id))
