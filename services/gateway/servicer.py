"""The gRPC GatewayService: authenticate, validate, compose, convert."""

from __future__ import annotations

import grpc
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc

from libs.errors import DomainError, InvalidArgument
from libs.identity import Principal, require_id
from services.gateway import context as turn_context
from services.gateway import conversions, tools
from services.gateway.bindings import MemoryBindings
from services.gateway.callers import Callers
from services.gateway.threads import Threads
from services.gateway.upstreams import Upstreams


class GatewayServicer(pb_grpc.GatewayServiceServicer):
    def __init__(self, callers: Callers, threads: Threads, upstreams: Upstreams,
                 bindings: MemoryBindings, contexts: turn_context.ContextBuilder) -> None:
        self._callers = callers
        self._threads = threads
        self._upstreams = upstreams
        self._bindings = bindings
        self._contexts = contexts

    async def _principal(self, context, caller: pb.Caller) -> Principal:
        principal = await self._callers.principal(context, caller)
        conversions.check_capabilities(caller)
        return principal

    async def AppendMessages(self, request: pb.AppendMessagesRequest,
                             context) -> pb.AppendMessagesResponse:
        principal = await self._principal(context, request.caller)
        conversions.surface(request.caller)
        thread_id = conversions.thread_id(request.thread_id)
        if not request.messages:
            raise InvalidArgument("messages", "at least one message is required")
        metadata = conversions.thread_metadata(request.thread_metadata, "thread_metadata")
        await self._threads.ensure(principal, thread_id, metadata)
        reply = await self._upstreams.journal.append(principal, thread_id, request.messages)
        return pb.AppendMessagesResponse(offsets=[r.offset for r in reply.results])

    async def BuildContext(self, request: pb.BuildContextRequest,
                           context) -> pb.BuildContextResponse:
        principal = await self._principal(context, request.caller)
        surface = conversions.surface(request.caller)
        thread_id = conversions.thread_id(request.thread_id, required=not request.delegated)
        stored = None if request.delegated or thread_id is None else \
            await self._threads.require(principal, thread_id)
        window = conversions.window_limit(stored, conversions.thread_metadata(
            request.thread_metadata, "thread_metadata"))
        if len(request.task) > turn_context.MAX_TASK_CHARS:
            raise InvalidArgument("task", f"at most {turn_context.MAX_TASK_CHARS} characters")
        run_id = require_id(request.run_id, "run_id") if request.run_id else ""
        binding = await self._bindings.binding(principal)
        built = await self._contexts.build(turn_context.Turn(
            principal, thread_id, window, request.delegated, request.task.strip(), run_id,
            binding.relevant_memories_budget))
        return pb.BuildContextResponse(
            messages=built.messages,
            tools=conversions.offered_tools(surface, binding.memory_bound,
                                            principal.act_for_users),
            relevant_memories_status=built.relevant.status,
            relevant_memories_receipt_id=built.relevant.receipt_id)

    async def ListTools(self, request: pb.ListToolsRequest, context) -> pb.ListToolsResponse:
        principal = await self._principal(context, request.caller)
        surface = conversions.surface(request.caller)
        bound = await self._bindings.bound(principal)
        return pb.ListToolsResponse(
            tools=conversions.offered_tools(surface, bound, principal.act_for_users),
            notice=tools.notice(principal, surface, bound))

    async def CallTool(self, request: pb.CallToolRequest, context) -> pb.CallToolResponse:
        principal = await self._principal(context, request.caller)
        surface = conversions.surface(request.caller)
        thread_id = conversions.thread_id(request.thread_id, required=False)
        if thread_id is not None:
            await self._threads.require(principal, thread_id)
        if not request.tool_name:
            raise InvalidArgument("tool_name", "required")
        if len(request.tool_name) > tools.MAX_NAME_CHARS:
            raise InvalidArgument("tool_name", f"at most {tools.MAX_NAME_CHARS} characters")
        call = tools.Call(principal, surface, thread_id, conversions.arguments(request.arguments),
                          request.request_id)
        bound = await self._bindings.bound(principal)
        value, is_error = await tools.run(self._upstreams, request.tool_name, call, bound)
        return conversions.result(value, is_error)

    async def UpdateThread(self, request: pb.UpdateThreadRequest,
                           context) -> pb.UpdateThreadResponse:
        principal = await self._principal(context, request.caller)
        thread_id = conversions.thread_id(request.thread_id)
        metadata = conversions.thread_metadata(request.metadata, "metadata")
        await self._threads.update_metadata(principal, thread_id, metadata)
        return pb.UpdateThreadResponse(metadata=conversions.struct(metadata))

    async def DeleteThread(self, request: pb.DeleteThreadRequest,
                           context) -> pb.DeleteThreadResponse:
        principal = await self._principal(context, request.caller)
        await self._threads.delete(principal, conversions.thread_id(request.thread_id))
        return pb.DeleteThreadResponse()

    async def PurgeThread(self, request: pb.PurgeThreadRequest,
                          context) -> pb.PurgeThreadResponse:
        principal = await self._principal(context, request.caller)
        thread_id = conversions.thread_id(request.thread_id)
        await self._threads.require(principal, thread_id)
        upstreams = self._upstreams
        try:  # first the authority, so nothing new is derived from the thread
            await upstreams.journal.purge_thread(principal, thread_id)
        except DomainError as exc:
            if exc.code != grpc.StatusCode.NOT_FOUND:  # NOT_FOUND: it never had a message
                raise
        await upstreams.search.purge_thread(principal, thread_id)
        await upstreams.thread_memory.purge_thread(principal, thread_id)
        await self._threads.delete(principal, thread_id)
        return pb.PurgeThreadResponse()
