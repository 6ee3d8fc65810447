"""The same calls over gRPC, to compare the HTTP surfaces with."""

from __future__ import annotations

from typing import Any

import grpc
from agentmemory.common.v1 import principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from agentmemory.gateway.v1 import (
    key_service_pb2,
    key_service_pb2_grpc,
    learning_service_pb2,
    learning_service_pb2_grpc,
    memory_library_service_pb2,
    memory_library_service_pb2_grpc,
    retrieval_service_pb2,
    retrieval_service_pb2_grpc,
    run_service_pb2,
    run_service_pb2_grpc,
)
from google.protobuf import json_format, struct_pb2

from libs import clients
from libs.errors import error_details

#: Each gateway method's stub class and request module.
_SERVICES = [(pb, pb_grpc.GatewayServiceStub),
             (memory_library_service_pb2, memory_library_service_pb2_grpc.MemoryLibraryServiceStub),
             (retrieval_service_pb2, retrieval_service_pb2_grpc.RetrievalServiceStub),
             (run_service_pb2, run_service_pb2_grpc.RunServiceStub),
             (learning_service_pb2, learning_service_pb2_grpc.LearningServiceStub),
             (key_service_pb2, key_service_pb2_grpc.KeyServiceStub)]
STUBS = {method: stub for module, stub in _SERVICES
         for service in module.DESCRIPTOR.services_by_name.values()
         for method in service.methods_by_name}
REQUESTS = {method: getattr(module, f"{method}Request") for module, _ in _SERVICES
            for service in module.DESCRIPTOR.services_by_name.values()
            for method in service.methods_by_name}


def caller(agent: str, user: str = "", surface: int = principal_pb2.SURFACE_AGENT) -> pb.Caller:
    return pb.Caller(agent_id=agent, user_id=user, surface=surface)


async def call_tool(address: str, key: str, caller_: pb.Caller, tool: str,
                    arguments: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    struct = struct_pb2.Struct()
    struct.update(arguments)
    async with clients.channel(address, default_timeout=30) as channel:
        reply = await pb_grpc.GatewayServiceStub(channel).CallTool(
            pb.CallToolRequest(caller=caller_, tool_name=tool, arguments=struct),
            metadata=(("authorization", f"Bearer {key}"),))
    return json_format.MessageToDict(reply.result), reply.is_error


async def invoke(address: str, key: str | None, method: str, request) -> dict[str, Any]:
    """The reply as proto3 JSON, or the error as the REST error body would carry it."""
    metadata = (("authorization", f"Bearer {key}"),) if key else ()
    async with clients.channel(address, default_timeout=30) as channel:
        try:
            reply = await getattr(STUBS[method](channel), method)(request, metadata=metadata)
        except grpc.aio.AioRpcError as exc:
            details = error_details(exc)
            return {"code": details.code.name, "reason": details.reason,
                    "message": details.message, "metadata": details.metadata,
                    "fieldViolations": [{"field": f, "description": d}
                                        for f, d in details.field_violations.items()]}
    return json_format.MessageToDict(reply, always_print_fields_with_no_presence=True)
