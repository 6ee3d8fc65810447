"""Proto <-> domain conversions of the gateway, all in one place."""

from __future__ import annotations

import functools
import math
from typing import Any, Literal, overload

from agentmemory.common.v1 import principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from google.protobuf import json_format, struct_pb2

from libs.errors import InvalidArgument
from libs.identity import require_id
from services.gateway import tools
from services.gateway.tools import Tool

_SURFACES = {principal_pb2.SURFACE_AGENT, principal_pb2.SURFACE_MCP_GATEWAY}
MAX_THREAD_METADATA_BYTES = 64 * 1024
_INT32 = (-(2**31), 2**31 - 1)


def surface(caller: pb.Caller) -> principal_pb2.Surface.ValueType:
    if caller.surface not in _SURFACES:
        raise InvalidArgument("caller.surface", "must be SURFACE_AGENT or SURFACE_MCP_GATEWAY")
    return caller.surface


def check_capabilities(caller: pb.Caller) -> None:
    """Deprecated field, checked for valid values only: the Memory binding is the
    agent setting ``memory_bound`` (services/gateway/bindings.py)."""
    for index, capability in enumerate(caller.capabilities):
        if capability not in principal_pb2.Capability.values() or \
                capability == principal_pb2.CAPABILITY_UNSPECIFIED:
            raise InvalidArgument(f"caller.capabilities[{index}]", "unknown capability")


@overload
def thread_id(value: str, *, required: Literal[True] = True) -> str: ...


@overload
def thread_id(value: str, *, required: bool) -> str | None: ...


def thread_id(value: str, *, required: bool = True) -> str | None:
    if not value and not required:
        return None
    return require_id(value, "thread_id")


def tool_definitions(tools: list[Tool], act_for_users: bool) -> list[pb.ToolDefinition]:
    definitions = []
    for tool in tools:
        parameters = struct_pb2.Struct()
        parameters.update(tool.published(act_for_users))
        definitions.append(pb.ToolDefinition(name=tool.name, description=tool.description,
                                             parameters=parameters))
    return definitions


@functools.cache
def offered_tools(surface: principal_pb2.Surface.ValueType, memory_bound: bool,
                  act_for_users: bool) -> tuple[pb.ToolDefinition, ...]:
    """The definitions of the tools a surface is offered: fixed, so converted once (a
    response copies them in; nothing may change them)."""
    return tuple(tool_definitions(tools.offered(surface, memory_bound), act_for_users))


def arguments(value: struct_pb2.Struct) -> dict[str, Any]:
    """Tool arguments as JSON values (the server wrapper has refused NaN and infinities)."""
    return json_format.MessageToDict(value)


def thread_metadata(value: struct_pb2.Struct, field: str) -> dict[str, Any]:
    if value.ByteSize() > MAX_THREAD_METADATA_BYTES:
        raise InvalidArgument(field, f"at most {MAX_THREAD_METADATA_BYTES // 1024} KiB")
    return json_format.MessageToDict(value)


def struct(value: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(value)
    return message


def window_limit(*metadata: dict[str, Any] | None) -> int | None:
    """The smallest integer ``config.max_working_memory_messages`` among the thread's
    metadata (stored and passed); non-integers are ignored, as the seed says. Thread
    memory clamps it to 1-20."""
    found = [v for v in map(_window_setting, metadata) if v is not None]
    return max(_INT32[0], min(_INT32[1], min(found))) if found else None


def _window_setting(metadata: dict[str, Any] | None) -> int | None:
    config = (metadata or {}).get("config")
    value = config.get("max_working_memory_messages") if isinstance(config, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value != int(value):
        return None
    return int(value)


def result(value: dict[str, Any], is_error: bool) -> pb.CallToolResponse:
    return pb.CallToolResponse(result=struct(value), is_error=is_error)
