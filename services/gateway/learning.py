"""The Learning tab (suggestions, procedures, learning audit), for every surface.

Each call of ``agentmemory.gateway.v1.LearningService`` is relayed to agent
memory's LearningService call of the same name with the caller's principal, by
the gateway's wire relay (``relay.py``), as the memory library is.
"""

from __future__ import annotations

from agentmemory.agent_memory.v1 import learning_service_pb2 as memory_pb
from agentmemory.gateway.v1 import learning_service_pb2 as pb
from agentmemory.gateway.v1 import learning_service_pb2_grpc as pb_grpc

from libs.clients.agent_memory import LEARNING
from services.gateway.callers import Callers
from services.gateway.relay import Mirror, add_handlers
from services.gateway.upstreams import Upstreams

METHODS = tuple(pb.DESCRIPTOR.services_by_name["LearningService"].methods_by_name)


class LearningServicer(pb_grpc.LearningServiceServicer):
    def __init__(self, callers: Callers, upstreams: Upstreams) -> None:
        self._callers = callers
        self._agent_memory = Mirror(upstreams.agent_memory, LEARNING, pb, memory_pb)

    async def _relay(self, method: str, request, context):
        principal = await self._callers.principal(context, request.caller)
        return await self._agent_memory.call(method, principal, request)


add_handlers(LearningServicer, METHODS, LearningServicer._relay)
