"""The Learning tab (suggestions, procedures, learning audit), for every surface.

Each call of ``agentmemory.gateway.v1.LearningService`` is relayed to agent
memory's LearningService call of the same name with the caller's principal:
the gateway messages mirror agent memory's field for field (``caller`` in
place of ``principal``), so a request relays by its wire form, as the memory
library does (``library.py``).
"""

from __future__ import annotations

from agentmemory.agent_memory.v1 import learning_service_pb2 as memory_pb
from agentmemory.gateway.v1 import learning_service_pb2 as pb
from agentmemory.gateway.v1 import learning_service_pb2_grpc as pb_grpc

from libs.clients import upstream
from services.gateway.callers import Callers
from services.gateway.upstreams import Upstreams

METHODS = tuple(pb.DESCRIPTOR.services_by_name["LearningService"].methods_by_name)


def _handler(method: str):
    async def handle(self, request, context):
        principal = await self._callers.principal(context, request.caller)
        body = type(request)()
        body.CopyFrom(request)
        body.ClearField("caller")
        relayed = getattr(memory_pb, f"{method}Request").FromString(body.SerializeToString())
        relayed.principal.CopyFrom(principal.to_proto())
        async with upstream("agent_memory"):
            reply = await getattr(self._upstreams.learning, method)(relayed)
        return getattr(pb, f"{method}Response").FromString(reply.SerializeToString())

    handle.__name__ = method
    return handle


class LearningServicer(pb_grpc.LearningServiceServicer):
    def __init__(self, callers: Callers, upstreams: Upstreams) -> None:
        self._callers = callers
        self._upstreams = upstreams


for _method in METHODS:
    setattr(LearningServicer, _method, _handler(_method))
