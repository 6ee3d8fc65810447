"""The tools an agent sees, per surface, and their execution.

- ``memory_store``, ``memory_recall``, ``memory_forget``: exactly these three,
  and only when the Memory capability is bound;
- ``journal_message_search``, ``journal_tool_call_view``: on agent surfaces
  always, whatever the Memory capability, and never for MCP-gateway callers.

A tool not on the caller's surface is PERMISSION_DENIED. Arguments are checked
against the tool's schema (INVALID_ARGUMENT naming ``arguments.<name>``). What
a tool refuses on its own merits (unsafe content, capacity, an unknown tool
call) comes back as a result with ``is_error`` set, so the model can react.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.common.v1 import principal_pb2
from agentmemory.search.v1 import search_service_pb2 as search_pb

from libs.clients import upstream
from libs.errors import DomainError, InvalidArgument, PermissionDenied
from libs.identity import Principal
from services.gateway.upstreams import Upstreams

AGENT = principal_pb2.SURFACE_AGENT
CATEGORIES = ["user_profile", "project_fact", "observation"]
_CATEGORY = {"user_profile": memory_pb.CATEGORY_USER_PROFILE,
             "project_fact": memory_pb.CATEGORY_PROJECT_FACT,
             "observation": memory_pb.CATEGORY_OBSERVATION}
_CATEGORY_NAME = {v: k for k, v in _CATEGORY.items()}
_VISIBILITY = {"private": memory_pb.VISIBILITY_PRIVATE, "shared": memory_pb.VISIBILITY_SHARED}
_VISIBILITY_NAME = {v: k for k, v in _VISIBILITY.items()}
# Refusals that are the tool's answer, not the caller's mistake.
_TOOL_ERRORS = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED,
                grpc.StatusCode.NOT_FOUND, grpc.StatusCode.OUT_OF_RANGE,
                grpc.StatusCode.FAILED_PRECONDITION}


@dataclass(frozen=True)
class Call:
    principal: Principal
    surface: int
    thread_id: str | None
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    memory: bool  # needs the Memory capability
    agent_surface_only: bool
    run: Callable[[Upstreams, Call], Awaitable[dict[str, Any]]]

    def offered(self, surface: int, memory_bound: bool) -> bool:
        if self.memory and not memory_bound:
            return False
        return not (self.agent_surface_only and surface != AGENT)


def _schema(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


def _check(arguments: dict[str, Any], schema: dict) -> dict[str, Any]:
    """A small JSON-schema check: types, enums, bounds, required, no extras."""
    for name in schema["required"]:
        if name not in arguments:
            raise InvalidArgument(f"arguments.{name}", "required")
    for name, value in arguments.items():
        spec = schema["properties"].get(name)
        field = f"arguments.{name}"
        if spec is None:
            raise InvalidArgument(field, "unknown argument")
        kind = spec["type"]
        if kind == "string" and (not isinstance(value, str) or not value.strip()):
            raise InvalidArgument(field, "must be a non-empty string")
        if kind == "integer" and (not isinstance(value, int | float) or value != int(value)):
            raise InvalidArgument(field, "must be an integer")
        if kind == "number" and not isinstance(value, int | float):
            raise InvalidArgument(field, "must be a number")
        if kind == "boolean" and not isinstance(value, bool):
            raise InvalidArgument(field, "must be true or false")
        if kind == "array" and (not isinstance(value, list) or any(
                v not in spec["items"]["enum"] for v in value)):
            raise InvalidArgument(field, f"must be a list of {', '.join(spec['items']['enum'])}")
        if "enum" in spec and value not in spec["enum"]:
            raise InvalidArgument(field, f"must be one of {', '.join(spec['enum'])}")
        if "minimum" in spec and value < spec["minimum"] or "maximum" in spec and \
                value > spec["maximum"]:
            raise InvalidArgument(field, f"must be {spec.get('minimum')}-{spec.get('maximum')}")
    return arguments


async def _store(upstreams: Upstreams, call: Call) -> dict[str, Any]:
    a = call.arguments
    request = memory_pb.StoreRequest(
        principal=call.principal.to_proto(), key=a["key"], content=a["content"],
        category=_CATEGORY[a["category"]],
        visibility=_VISIBILITY.get(a.get("visibility", ""), memory_pb.VISIBILITY_UNSPECIFIED),
        source=memory_pb.Source(kind=memory_pb.SOURCE_KIND_AGENT_TOOL,
                                thread_id=call.thread_id or ""))
    if "importance" in a:
        request.importance = float(a["importance"])
    async with upstream("agent_memory"):
        reply = await upstreams.agent_memory.Store(request)
    used = _VISIBILITY_NAME[reply.visibility]
    result = {"stored": True, "key": reply.entry.key, "visibility": used,
              "unchanged": reply.unchanged, "replaced": reply.replaced}
    if a.get("visibility") == "private" and used == "shared":
        result["note"] = ("stored as shared: there is no authenticated user to keep a "
                          "private entry for")
    elif used == "private" and a.get("visibility") == "shared":
        result["note"] = "stored as private: it contains credentials or personal data"
    return result


async def _recall(upstreams: Upstreams, call: Call) -> dict[str, Any]:
    a = call.arguments
    async with upstream("agent_memory"):
        reply = await upstreams.agent_memory.Recall(memory_pb.RecallRequest(
            principal=call.principal.to_proto(), query=a["query"], limit=int(a.get("limit", 0)),
            categories=[_CATEGORY[c] for c in a.get("categories", [])]))
    return {"entries": [{"key": r.entry.key, "content": r.entry.content,
                         "category": _CATEGORY_NAME[r.entry.category],
                         "score": round(r.score, 6)} for r in reply.entries],
            "fallback": reply.fallback}


async def _forget(upstreams: Upstreams, call: Call) -> dict[str, Any]:
    async with upstream("agent_memory"):
        reply = await upstreams.agent_memory.Forget(memory_pb.ForgetRequest(
            principal=call.principal.to_proto(), key=call.arguments["key"]))
    return {"forgotten": reply.forgotten}


async def _search(upstreams: Upstreams, call: Call) -> dict[str, Any]:
    a = call.arguments
    scope = a.get("scope", "all_threads")
    if scope == "current_thread" and not call.thread_id:
        raise InvalidArgument("thread_id", "required for scope current_thread")
    request = search_pb.SearchMessagesRequest(
        principal=call.principal.to_proto(), surface=call.surface, query=a["query"],
        scope=search_pb.SCOPE_CURRENT_THREAD if scope == "current_thread"
        else search_pb.SCOPE_ALL_THREADS,
        thread_id=call.thread_id or "" if scope == "current_thread" else "",
        limit=int(a.get("limit", 0)), summarize=bool(a.get("summarize", True)))
    async with upstream("search"):
        reply = await upstreams.search.SearchMessages(request)
    return {"hits": [{"thread_id": h.thread_id, "message_id": h.message_id, "offset": h.offset,
                      "role": "user" if h.role == 1 else "assistant", "snippet": h.snippet,
                      "time": h.created_at.ToJsonString(), "score": round(h.score, 6)}
                     for h in reply.hits],
            "summaries": [{"thread_id": s.thread_id, "summary": s.summary} for s in
                          reply.summaries]}


async def _view(upstreams: Upstreams, call: Call) -> dict[str, Any]:
    a = call.arguments
    async with upstream("search"):
        reply = await upstreams.search.ViewToolCall(search_pb.ViewToolCallRequest(
            principal=call.principal.to_proto(), surface=call.surface,
            tool_call_id=a["tool_call_id"], offset=int(a.get("offset", 0)),
            length=int(a.get("length", 0))))
    return {"data": reply.data.decode(errors="replace"), "offset": int(a.get("offset", 0)),
            "next_offset": reply.next_offset, "total_size": reply.total_size,
            "has_more": reply.has_more}


TOOLS = [
    Tool("memory_store", "Remember a durable fact about the user or their projects.",
         _schema({"key": {"type": "string", "description": "Short snake_case key"},
                  "content": {"type": "string", "description": "The fact, one sentence"},
                  "category": {"type": "string", "enum": CATEGORIES},
                  "visibility": {"type": "string", "enum": ["private", "shared"]},
                  "importance": {"type": "number", "minimum": 0, "maximum": 1}},
                 ["key", "content", "category"]), True, False, _store),
    Tool("memory_recall", "Recall remembered facts relevant to a query.",
         _schema({"query": {"type": "string"},
                  "limit": {"type": "integer", "minimum": 1, "maximum": 20},
                  "categories": {"type": "array", "items": {"type": "string", "enum": CATEGORIES}}},
                 ["query"]), True, False, _recall),
    Tool("memory_forget", "Forget a remembered fact by its key.",
         _schema({"key": {"type": "string"}}, ["key"]), True, False, _forget),
    Tool("journal_message_search", "Search what was said in earlier conversations.",
         _schema({"query": {"type": "string"},
                  "scope": {"type": "string", "enum": ["current_thread", "all_threads"]},
                  "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                  "summarize": {"type": "boolean"}}, ["query"]), False, True, _search),
    Tool("journal_tool_call_view",
         "Read the full arguments and result of an earlier tool call, 32 KiB at a time.",
         _schema({"tool_call_id": {"type": "string"},
                  "offset": {"type": "integer", "minimum": 0, "maximum": 2**53},
                  "length": {"type": "integer", "minimum": 1, "maximum": 32768}},
                 ["tool_call_id"]), False, True, _view),
]
_BY_NAME = {tool.name: tool for tool in TOOLS}


def offered(surface: int, memory_bound: bool) -> list[Tool]:
    return [tool for tool in TOOLS if tool.offered(surface, memory_bound)]


async def run(upstreams: Upstreams, name: str, call: Call,
              memory_bound: bool) -> tuple[dict[str, Any], bool]:
    """(result, is_error)."""
    tool = _BY_NAME.get(name)
    if tool is None or not tool.offered(call.surface, memory_bound):
        raise PermissionDenied(f"tool {name!r} is not available to this caller",
                               reason="TOOL_NOT_AVAILABLE", metadata={"tool": name})
    _check(call.arguments, tool.parameters)
    try:
        return await tool.run(upstreams, call), False
    except DomainError as exc:
        if exc.code in _TOOL_ERRORS:
            return {"error": exc.message, "reason": exc.reason}, True
        raise
