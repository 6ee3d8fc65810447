"""Proto <-> domain conversions of the journal service, all in one place."""

from __future__ import annotations

from agentmemory.common.v1 import principal_pb2, run_pb2
from agentmemory.journal.v1 import journal_service_pb2 as pb

from libs import page_tokens
from libs.conversions import from_milliseconds
from libs.errors import InvalidArgument
from libs.identity import require_id
from services.journal.runs import CALLER_OUTCOMES, Boundary, BoundaryKind, Outcome, RunRecord
from services.journal.shard import AppendResult, FeedEvent, Shard, ThreadStats
from services.journal.tool_calls import Page, ToolCallRecord


def optional_thread_id(value: str) -> str | None:
    return require_id(value, "thread_id") if value else None


def append_response(results: list[AppendResult], last_offset: int) -> pb.AppendResponse:
    return pb.AppendResponse(
        results=[
            pb.AppendResult(message_id=r.message_id, offset=r.offset, deduplicated=r.deduplicated)
            for r in results
        ],
        last_offset=last_offset,
    )


def range_start(request: pb.ReadRangeRequest) -> int:
    """The first offset of a ReadRange page, from the page token or the request."""
    if request.page_token:
        state = page_tokens.decode(request.page_token)
        if state.get("thread") != request.thread_id:
            raise InvalidArgument("page_token", "was issued for another thread or request")
        return page_tokens.position(state, "next")
    if request.from_offset < 0:
        raise InvalidArgument("from_offset", "must not be negative")
    return request.from_offset


def range_page_token(thread_id: str, next_offset: int | None) -> str:
    return "" if next_offset is None else page_tokens.encode(thread=thread_id, next=next_offset)


def stats_after(request: pb.GetThreadStatsRequest) -> int:
    if request.after_offset < 0:
        raise InvalidArgument("after_offset", "must not be negative")
    return request.after_offset


def stats_response(stats: ThreadStats | None) -> pb.GetThreadStatsResponse:
    if stats is None:
        return pb.GetThreadStatsResponse()
    state = stats.state
    return pb.GetThreadStatsResponse(
        message_count=state.message_count,
        last_offset=state.message_count,
        token_count=state.token_count,
        messages_after=stats.messages_after,
        tokens_after=stats.tokens_after,
        owner=principal_pb2.Principal(
            account_id=stats.thread.account_id,
            agent_id=stats.thread.agent_id,
            user_id=state.owner_user or "",
            environment=state.environment,
        ),
    )


def tool_call_response(record: ToolCallRecord, page: Page) -> pb.GetToolCallResponse:
    return pb.GetToolCallResponse(
        data=page.data,
        total_size=page.total_size,
        next_offset=page.next_offset,
        has_more=page.has_more,
        thread_id=record.thread_id,
        message_id=record.message_id,
        message_offset=record.message_offset,
        name=record.call.name,
        status=record.call.status,
    )


def feed_event(event: FeedEvent) -> pb.SubscribeResponse:
    return pb.SubscribeResponse(
        sequence=event.sequence,
        shard=event.shard,
        principal=principal_pb2.Principal(
            account_id=event.thread.account_id,
            agent_id=event.thread.agent_id,
            user_id=event.owner_user or "",
            environment=event.environment,
        ),
        thread_id=event.thread.thread_id,
        message=event.message,
        run_boundary=None if event.boundary is None else boundary(event.thread.thread_id,
                                                                   event.boundary),
    )


_OUTCOMES = {
    Outcome.SUCCEEDED: run_pb2.RUN_OUTCOME_SUCCEEDED, Outcome.FAILED: run_pb2.RUN_OUTCOME_FAILED,
    Outcome.CANCELLED: run_pb2.RUN_OUTCOME_CANCELLED,
    Outcome.TIMED_OUT: run_pb2.RUN_OUTCOME_TIMED_OUT,
}
_BOUNDARIES = {BoundaryKind.STARTED: run_pb2.RUN_BOUNDARY_KIND_STARTED,
               BoundaryKind.FINISHED: run_pb2.RUN_BOUNDARY_KIND_FINISHED}


def caller_outcome(value: int) -> Outcome:
    """A FinishRun outcome: succeeded, failed or cancelled."""
    found = next((o for o, v in _OUTCOMES.items() if v == value), None)
    if found not in CALLER_OUTCOMES:
        raise InvalidArgument("outcome", "must be RUN_OUTCOME_SUCCEEDED, RUN_OUTCOME_FAILED or "
                                         "RUN_OUTCOME_CANCELLED")
    return found


def run(thread_id: str, record: RunRecord) -> run_pb2.Run:
    found = run_pb2.Run(
        thread_id=thread_id, run_id=record.run_id, after_offset=record.after_offset,
        last_offset=record.last_offset, start_time=from_milliseconds(record.started_ms),
        state=run_pb2.RUN_STATE_OPEN if record.open else run_pb2.RUN_STATE_FINISHED)
    if record.outcome is not None and record.finished_ms is not None:  # finished
        found.outcome = _OUTCOMES[record.outcome]
        found.finish_time.CopyFrom(from_milliseconds(record.finished_ms))
    return found


def boundary(thread_id: str, value: Boundary) -> run_pb2.RunBoundary:
    return run_pb2.RunBoundary(kind=_BOUNDARIES[value.kind], run=run(thread_id, value.run))


def feed_content(value: int) -> int:
    if value not in pb.FeedContent.values():
        raise InvalidArgument("content", "unknown feed content")
    return value


def shards_response(shard_count: int, shards: list[Shard]) -> pb.DescribeShardsResponse:
    """The journal's shard count, and the shards this process holds."""
    return pb.DescribeShardsResponse(
        shard_count=shard_count,
        shards=[
            pb.ShardInfo(shard=s.index, durable_sequence=s.durable_sequence, writable=s.serving())
            for s in shards
        ],
    )
