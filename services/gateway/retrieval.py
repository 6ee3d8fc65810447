"""Retrieval for every surface (gRPC here; REST and MCP call the same handler).

Each call of ``agentmemory.gateway.v1.RetrievalService`` is relayed to agent
memory's RetrievalService with the caller's principal, by the gateway's wire
relay (``relay.py``). RetrieveContext adds two things only the gateway can do
with one hop each:

- with ``thread_id``: the thread must be the caller's (its record is here),
  and its rolling summary (thread memory, cached in Redis) is passed on as
  the session summary for a run that has no episode yet;
- with ``expand_sessions``: after agent memory answers, the journal messages
  around the provenance (thread, offsets) of the first delivered workspace
  memories, read concurrently with the caller's principal, so a thread the
  caller cannot read expands to nothing. The gateway already talks to the
  journal; agent memory would need a new dependency and a second hop for
  the messages to come back through it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from agentmemory.agent_memory.v1 import retrieval_pb2 as memory_pb
from agentmemory.gateway.v1 import gateway_service_pb2 as gateway_pb
from agentmemory.gateway.v1 import retrieval_service_pb2 as pb
from google.protobuf.message import Message

from libs.clients.agent_memory import RETRIEVAL
from libs.errors import InvalidArgument
from libs.identity import Principal, require_id
from services.gateway.relay import Mirror
from services.gateway.threads import Threads
from services.gateway.upstreams import Upstreams

METHODS = tuple(pb.DESCRIPTOR.services_by_name["RetrievalService"].methods_by_name)
# The gateway's own fields of RetrieveContextRequest (agent memory reserves them).
_GATEWAY_FIELDS: Final = ("expand_sessions", "expand_session_count", "expand_session_window")
EXPAND_COUNT_DEFAULT, EXPAND_COUNT_MAX = 3, 10
EXPAND_WINDOW_DEFAULT, EXPAND_WINDOW_MAX = 2, 20


def _bounded(value: int, field: str, default: int, maximum: int) -> int:
    if not 0 <= value <= maximum:
        raise InvalidArgument(field, f"must be 1-{maximum} (0: {default})")
    return value or default


class Retrieval:
    def __init__(self, upstreams: Upstreams, threads: Threads | None = None) -> None:
        """Without ``threads`` (the MCP tool search_memory, which names no thread), a
        request with a thread_id is refused."""
        self._upstreams = upstreams
        self._agent_memory = Mirror(upstreams.agent_memory, RETRIEVAL, pb, memory_pb)
        self._threads = threads

    async def call(self, method: str, principal: Principal, request: Message) -> Any:
        """The gateway response of ``method`` to ``request``."""
        if isinstance(request, pb.RetrieveContextRequest):
            return await self.retrieve(principal, request)
        return await self._agent_memory.call(method, principal, request)

    async def retrieve(self, principal: Principal,
                       request: pb.RetrieveContextRequest) -> pb.RetrieveContextResponse:
        count = _bounded(request.expand_session_count, "expand_session_count",
                         EXPAND_COUNT_DEFAULT, EXPAND_COUNT_MAX)
        window = _bounded(request.expand_session_window, "expand_session_window",
                          EXPAND_WINDOW_DEFAULT, EXPAND_WINDOW_MAX)
        body = pb.RetrieveContextRequest()
        body.CopyFrom(request)
        for name in _GATEWAY_FIELDS:
            body.ClearField(name)
        relayed = self._agent_memory.request("RetrieveContext", principal, body)
        relayed.ClearField("thread_summary")  # only the gateway sets it
        if request.thread_id:
            if self._threads is None:
                raise InvalidArgument("thread_id", "not accepted here")
            thread_id = require_id(request.thread_id, "thread_id")
            await self._threads.require(principal, thread_id)
            relayed.thread_summary = await self._upstreams.thread_memory.summary(principal,
                                                                                 thread_id)
        response = await self._agent_memory.send("RetrieveContext", relayed)
        if request.expand_sessions:
            memories = [m.memory for m in [*response.workspace_entries, *response.results]
                        if m.memory.source.thread_id and m.memory.source.first_offset]
            response.expansions.extend(await asyncio.gather(
                *(self._expand(principal, m, window) for m in memories[:count])))
        return response

    async def _expand(self, principal: Principal, memory, window: int) -> pb.SessionExpansion:
        source = memory.source
        first = max(1, source.first_offset - window)
        last = max(source.last_offset, source.first_offset) + window
        read = await self._upstreams.journal.read_range(principal, source.thread_id, first,
                                                        last - first + 1)
        messages = [m for m in read if m.offset <= last]
        return pb.SessionExpansion(
            memory_id=memory.id, thread_id=source.thread_id,
            first_offset=messages[0].offset if messages else 0,
            last_offset=messages[-1].offset if messages else 0,
            messages=[gateway_pb.ContextMessage(role=m.role, content=m.content,
                                                tool_calls=m.tool_calls,
                                                tool_call_id=m.tool_call_id) for m in messages],
            tokens=sum(m.token_count for m in messages))
