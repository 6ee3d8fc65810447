"""RunService: runs on a thread, and feedback on a run's reply.

The journal records the boundaries (the thread's order, durable before the
answer); the gateway checks the thread is the caller's, hands a run's
credentials to agent memory (held in memory there, for masking; never stored
or logged) *before* the boundary that could end the run, and relays feedback
to agent memory for the procedures the run recalled.
"""

from __future__ import annotations

from agentmemory.agent_memory.v1 import learning_service_pb2 as learning_pb
from agentmemory.common.v1 import run_pb2
from agentmemory.gateway.v1 import run_service_pb2 as pb
from agentmemory.gateway.v1 import run_service_pb2_grpc as pb_grpc

from libs.errors import DomainError, InvalidArgument, ResourceExhausted
from libs.identity import Principal, require_id
from services.gateway import conversions
from services.gateway.callers import Callers
from services.gateway.threads import Threads
from services.gateway.upstreams import Upstreams

MAX_CREDENTIALS = 100
MAX_CREDENTIAL_CHARS = 4096


def _credentials(values) -> list[str]:
    if len(values) > MAX_CREDENTIALS:
        raise InvalidArgument("credentials", f"at most {MAX_CREDENTIALS}")
    for index, value in enumerate(values):
        if not value or len(value) > MAX_CREDENTIAL_CHARS:
            raise InvalidArgument(f"credentials[{index}]", f"1-{MAX_CREDENTIAL_CHARS} characters")
    return list(values)


class RunServicer(pb_grpc.RunServiceServicer):
    def __init__(self, callers: Callers, threads: Threads, upstreams: Upstreams) -> None:
        self._callers = callers
        self._threads = threads
        self._upstreams = upstreams

    async def _hold(self, principal: Principal, thread_id: str, run_id: str,
                    credentials: list[str]) -> None:
        if credentials:
            await self._upstreams.agent_memory.hold_run_credentials(
                learning_pb.HoldRunCredentialsRequest(
                    principal=principal.to_proto(), thread_id=thread_id, run_id=run_id,
                    credentials=credentials))

    async def StartRun(self, request: pb.StartRunRequest, context) -> pb.StartRunResponse:
        principal = await self._callers.principal(context, request.caller)
        thread_id = conversions.thread_id(request.thread_id)
        run_id = require_id(request.run_id, "run_id")
        credentials = _credentials(request.credentials)
        accounts = self._callers.accounts
        try:
            await accounts.check_run_quota(principal)
        except ResourceExhausted:
            started = await self._already_started(principal, thread_id, run_id)
            if started is None:
                raise
            return pb.StartRunResponse(run=started, deduplicated=True)  # a retried start
        await self._threads.ensure(principal, thread_id)
        await self._hold(principal, thread_id, run_id, credentials)
        reply = await self._upstreams.journal.start_run(principal, thread_id, run_id)
        if not reply.deduplicated:
            await accounts.count_run(principal)
        return pb.StartRunResponse(run=reply.run, deduplicated=reply.deduplicated)

    async def _already_started(self, principal: Principal, thread_id: str, run_id: str):
        """The open run, if this very start was made before (its reply lost, say)."""
        try:
            await self._threads.require(principal, thread_id)
            reply = await self._upstreams.journal.get_run(principal, thread_id, run_id)
        except DomainError:
            return None
        return reply.run if reply.run.state == run_pb2.RUN_STATE_OPEN else None

    async def FinishRun(self, request: pb.FinishRunRequest, context) -> pb.FinishRunResponse:
        principal = await self._callers.principal(context, request.caller)
        thread_id = conversions.thread_id(request.thread_id)
        run_id = require_id(request.run_id, "run_id")
        credentials = _credentials(request.credentials)
        await self._threads.require(principal, thread_id)
        await self._hold(principal, thread_id, run_id, credentials)
        reply = await self._upstreams.journal.finish_run(principal, thread_id, run_id,
                                                         request.outcome)
        return pb.FinishRunResponse(run=reply.run, deduplicated=reply.deduplicated)

    async def GetRun(self, request: pb.GetRunRequest, context) -> pb.GetRunResponse:
        principal = await self._callers.principal(context, request.caller)
        thread_id = conversions.thread_id(request.thread_id)
        run_id = require_id(request.run_id, "run_id") if request.run_id else ""
        await self._threads.require(principal, thread_id)
        reply = await self._upstreams.journal.get_run(principal, thread_id, run_id)
        return pb.GetRunResponse(run=reply.run)

    async def RecordRunFeedback(self, request: pb.RecordRunFeedbackRequest,
                                context) -> pb.RecordRunFeedbackResponse:
        principal = await self._callers.principal(context, request.caller)
        thread_id = conversions.thread_id(request.thread_id)
        run_id = require_id(request.run_id, "run_id")
        await self._threads.require(principal, thread_id)
        await self._upstreams.journal.get_run(principal, thread_id, run_id)  # RUN_NOT_FOUND
        reply = await self._upstreams.agent_memory.record_run_feedback(
            learning_pb.RecordRunFeedbackRequest(
                principal=principal.to_proto(), thread_id=thread_id, run_id=run_id,
                rating=request.rating))
        return pb.RecordRunFeedbackResponse(procedure_ids=reply.procedure_ids)
