"""Thread memory's client (the gateway's: a turn's window and summary, purges)."""

from __future__ import annotations

from collections.abc import Sequence

from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2_grpc as pb_grpc

from libs.clients import ServiceClient
from libs.identity import Principal
from libs.settings import Secret


class ThreadMemoryClient(ServiceClient):
    def __init__(self, target: str, *, timeout: float = 10.0,
                 internal_token: Secret | None = None, interceptors: Sequence = ()) -> None:
        super().__init__("thread_memory", target, timeout=timeout,
                         internal_token=internal_token, interceptors=interceptors)
        self._stub = pb_grpc.ThreadMemoryServiceStub(self.channel)

    async def get_thread_context(self, request: pb.GetThreadContextRequest
                                 ) -> pb.GetThreadContextResponse:
        return await self._stub.GetThreadContext(request)

    async def summary(self, principal: Principal, thread_id: str) -> str:
        """The thread's rolling summary ('' before the first)."""
        reply = await self._stub.GetSummary(pb.GetSummaryRequest(
            principal=principal.to_proto(), thread_id=thread_id))
        return reply.summary.content if reply.HasField("summary") else ""

    async def purge_thread(self, principal: Principal, thread_id: str) -> None:
        await self._stub.PurgeThread(pb.PurgeThreadRequest(principal=principal.to_proto(),
                                                           thread_id=thread_id))
