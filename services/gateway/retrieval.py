"""Retrieval for every surface (gRPC here; REST and MCP call the same handler).

Each call of ``agentmemory.gateway.v1.RetrievalService`` is relayed to agent
memory's RetrievalService with the caller's principal; the messages mirror
agent memory's field for field (``caller`` in place of ``principal``; checked
by ``tests/gateway/test_retrieval_shapes.py``), so requests and responses
relay by their wire form. RetrieveContext adds two things only the gateway
can do with one hop each:

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
from typing import Any, Final, TypeVar

from agentmemory.agent_memory.v1 import retrieval_pb2 as memory_pb
from agentmemory.gateway.v1 import gateway_service_pb2 as gateway_pb
from agentmemory.gateway.v1 import retrieval_service_pb2 as pb
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as thread_pb
from google.protobuf.message import Message

from libs.clients import upstream
from libs.errors import InvalidArgument
from libs.identity import Principal, require_id
from services.gateway.threads import Threads
from services.gateway.upstreams import Upstreams

METHODS = tuple(pb.DESCRIPTOR.services_by_name["RetrievalService"].methods_by_name)
Relayed = TypeVar("Relayed", bound=Message)
# The gateway's own fields of RetrieveContextRequest (agent memory reserves them).
_GATEWAY_FIELDS: Final = ("expand_sessions", "expand_session_count", "expand_session_window")
EXPAND_COUNT_DEFAULT, EXPAND_COUNT_MAX = 3, 10
EXPAND_WINDOW_DEFAULT, EXPAND_WINDOW_MAX = 2, 20


def _relayed(request: Message, target: type[Relayed], principal: Principal) -> Relayed:
    body = type(request)()
    body.CopyFrom(request)
    body.ClearField("caller")
    relayed: Any = target.FromString(body.SerializeToString())  # each target has a principal
    relayed.principal.CopyFrom(principal.to_proto())
    return relayed


def _bounded(value: int, field: str, default: int, maximum: int) -> int:
    if not 0 <= value <= maximum:
        raise InvalidArgument(field, f"must be 1-{maximum} (0: {default})")
    return value or default


class Retrieval:
    def __init__(self, upstreams: Upstreams, threads: Threads | None = None) -> None:
        """Without ``threads`` (the MCP tool search_memory, which names no thread), a
        request with a thread_id is refused."""
        self._upstreams = upstreams
        self._threads = threads

    async def call(self, method: str, principal: Principal, request: Message) -> Any:
        """The gateway response of ``method`` to ``request``."""
        if isinstance(request, pb.RetrieveContextRequest):
            return await self.retrieve(principal, request)
        relayed = _relayed(request, getattr(memory_pb, f"{method}Request"), principal)
        async with upstream("agent_memory"):
            reply = await getattr(self._upstreams.retrieval, method)(relayed)
        return getattr(pb, f"{method}Response").FromString(reply.SerializeToString())

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
        relayed = _relayed(body, memory_pb.RetrieveContextRequest, principal)
        relayed.ClearField("thread_summary")  # only the gateway sets it
        if request.thread_id:
            if self._threads is None:
                raise InvalidArgument("thread_id", "not accepted here")
            thread_id = require_id(request.thread_id, "thread_id")
            await self._threads.require(principal, thread_id)
            relayed.thread_summary = await self._summary(principal, thread_id)
        async with upstream("agent_memory"):
            reply = await self._upstreams.retrieval.RetrieveContext(relayed)
        response = pb.RetrieveContextResponse.FromString(reply.SerializeToString())
        if request.expand_sessions:
            memories = [m.memory for m in [*response.workspace_entries, *response.results]
                        if m.memory.source.thread_id and m.memory.source.first_offset]
            response.expansions.extend(await asyncio.gather(
                *(self._expand(principal, m, window) for m in memories[:count])))
        return response

    async def _summary(self, principal: Principal, thread_id: str) -> str:
        async with upstream("thread_memory"):
            reply = await self._upstreams.thread_memory.GetSummary(thread_pb.GetSummaryRequest(
                principal=principal.to_proto(), thread_id=thread_id))
        return reply.summary.content if reply.HasField("summary") else ""

    async def _expand(self, principal: Principal, memory, window: int) -> pb.SessionExpansion:
        source = memory.source
        first = max(1, source.first_offset - window)
        last = max(source.last_offset, source.first_offset) + window
        async with upstream("journal"):
            journal = await self._upstreams.journal.for_thread(principal.account_id, source.thread_id)
            reply = await journal.ReadRange(journal_pb.ReadRangeRequest(
                principal=principal.to_proto(), thread_id=source.thread_id,
                from_offset=first, page_size=last - first + 1))
        messages = [m for m in reply.messages if m.offset <= last]
        return pb.SessionExpansion(
            memory_id=memory.id, thread_id=source.thread_id,
            first_offset=messages[0].offset if messages else 0,
            last_offset=messages[-1].offset if messages else 0,
            messages=[gateway_pb.ContextMessage(role=m.role, content=m.content,
                                                tool_calls=m.tool_calls,
                                                tool_call_id=m.tool_call_id) for m in messages],
            tokens=sum(m.token_count for m in messages))
