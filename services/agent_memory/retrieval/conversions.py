"""Proto <-> domain conversions of the RetrievalService, all in one place."""

from __future__ import annotations

from uuid import UUID

from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from agentmemory.common.v1 import run_pb2

from libs.conversions import optional_datetime, timestamp
from libs.errors import InvalidArgument
from libs.identity import require_id
from services.agent_memory.memories import conversions as memory_conversions
from services.agent_memory.memories import validation
from services.agent_memory.memories.rules import SourceKind
from services.agent_memory.retrieval import episodes, params, request
from services.agent_memory.retrieval.model import AsOfAxis, EpisodeRow, Receipt
from services.agent_memory.retrieval.request import Mode, RelevantRequest, RetrieveRequest
from services.agent_memory.retrieval.service import (
    Context,
    Diagnostics,
    MemoryItem,
    Relevant,
)
from services.agent_memory.retrieval.trust import Trust

_MODES = {pb.RETRIEVAL_MODE_UNSPECIFIED: Mode.DETERMINISTIC,
          pb.RETRIEVAL_MODE_DETERMINISTIC: Mode.DETERMINISTIC,
          pb.RETRIEVAL_MODE_ASSISTED: Mode.ASSISTED}
_MODE_VALUES = {Mode.DETERMINISTIC: pb.RETRIEVAL_MODE_DETERMINISTIC,
                Mode.ASSISTED: pb.RETRIEVAL_MODE_ASSISTED}
_AXES = {pb.AS_OF_AXIS_UNSPECIFIED: AsOfAxis.RECORDED, pb.AS_OF_AXIS_RECORDED: AsOfAxis.RECORDED,
         pb.AS_OF_AXIS_VALID: AsOfAxis.VALID}
# The journal's run outcomes (timed_out is its own: never stated by a caller).
_OUTCOMES = {run_pb2.RUN_OUTCOME_SUCCEEDED: "succeeded", run_pb2.RUN_OUTCOME_FAILED: "failed",
             run_pb2.RUN_OUTCOME_CANCELLED: "cancelled",
             run_pb2.RUN_OUTCOME_TIMED_OUT: "timed_out"}
_OUTCOME_VALUES = {v: k for k, v in _OUTCOMES.items()}
# Memories a turn shows already (pinned facts: ten at most, today).
MAX_EXCLUDED = 100

actor = memory_conversions.actor


def _member(mapping: dict, value: int, field: str, names: str):
    if value not in mapping:
        raise InvalidArgument(field, f"must be {names}")
    return mapping[value]


def _optional_id(value: str, field: str) -> str | None:
    return require_id(value, field) if value else None


def retrieve_request(message: pb.RetrieveContextRequest) -> RetrieveRequest:
    mode = _member(_MODES, message.mode, "mode", "RETRIEVAL_MODE_DETERMINISTIC or _ASSISTED")
    rerank = message.rerank if message.HasField("rerank") else None
    after = optional_datetime(message, "temporal_after")
    before = optional_datetime(message, "temporal_before")
    request.temporal(after, before)
    given = message.overrides
    return RetrieveRequest(
        run_id=require_id(message.run_id, "run_id"),
        query=request.query(message.semantic_query),
        thread_id=_optional_id(message.thread_id, "thread_id"),
        agent_id=_optional_id(message.agent_id, "agent_id"),
        user_id=_optional_id(message.user_id, "user_id"),
        top_n=request.top_n(message.top_n),
        tags=validation.tags(dict(message.tags), "tags"),
        min_score=request.min_score(message.min_score if message.HasField("min_score")
                                    else None),
        token_budget=request.token_budget(message.token_budget),
        mode=mode,
        rerank=request.rerank(mode, rerank),
        include_superseded=message.include_superseded,
        as_of=optional_datetime(message, "as_of"),
        as_of_axis=_member(_AXES, message.as_of_axis, "as_of_axis",
                           "AS_OF_AXIS_RECORDED or AS_OF_AXIS_VALID"),
        temporal_after=after, temporal_before=before,
        temporal_anchor=optional_datetime(message, "temporal_anchor"),
        raw=message.raw, explain=message.explain,
        overrides=request.overrides(
            given.rrf_k if given.HasField("rrf_k") else None, dict(given.leg_weights),
            dict(given.factor_weights),
            given.utility_weight if given.HasField("utility_weight") else None,
            given.value_aware, given.scoring_version),
        thread_summary=message.thread_summary or None,
    )


def relevant_request(message: pb.RetrieveRelevantMemoriesRequest) -> RelevantRequest:
    if len(message.exclude_memory_ids) > MAX_EXCLUDED:
        raise InvalidArgument("exclude_memory_ids", f"at most {MAX_EXCLUDED}")
    return RelevantRequest(
        query=request.query(message.semantic_query),
        token_budget=request.relevant_budget(message.token_budget),
        run_id=require_id(message.run_id, "run_id") if message.run_id else "",
        thread_id=_optional_id(message.thread_id, "thread_id"),
        excluded=frozenset(memory_id(m, f"exclude_memory_ids[{i}]")
                           for i, m in enumerate(message.exclude_memory_ids)))


memory_id = memory_conversions.memory_id


def receipt_id(value: str) -> UUID:
    try:
        return UUID(value)
    except ValueError:
        raise InvalidArgument("receipt_id", "required: a receipt id") from None


def request_id(value: str) -> str:
    if not value:
        raise InvalidArgument("request_id", "required: retries with the same id credit once")
    if len(value) > 128 or "\x00" in value:
        raise InvalidArgument("request_id", "at most 128 characters, no NUL")
    return value


def outcome(value: int) -> str:
    return _member(_OUTCOMES, value, "outcome", "succeeded, failed, cancelled or timed_out")


def episode_fields(message: pb.RecordEpisodeRequest) -> dict:
    return {
        "thread_id": require_id(message.thread_id, "thread_id"),
        "run_id": require_id(message.run_id, "run_id"),
        "outcome": outcome(message.outcome),
        "task": validation.text(message.task, "task", episodes.MAX_TASK_CHARS),
        "summary": validation.text(message.summary, "summary", episodes.MAX_SUMMARY_CHARS),
        "finished_at": optional_datetime(message, "finish_time"),
    }


# -- responses -------------------------------------------------------------------------

def trust(value: Trust) -> pb.TrustBreakdown:
    return pb.TrustBreakdown(composite=value.composite, confidence=value.confidence,
                             evidence=value.evidence, freshness=value.freshness,
                             utility=value.utility, contradiction_risk=value.contradiction_risk,
                             source_authority=value.source_authority)


def memory(item: MemoryItem) -> pb.ContextMemory:
    message = pb.ContextMemory(
        memory=memory_conversions.entry(item.entry), trust=trust(item.trust), tokens=item.tokens,
        score=item.score or 0.0, superseded=item.superseded,
        tool_data=item.entry.source.kind == SourceKind.TOOL_RESULT)
    found = item.explanation
    if found is not None:
        reranker = pb.RerankerStatus(status=found.reranker_status)
        if found.reranker_score is not None:
            reranker.score = found.reranker_score
        message.explanation.CopyFrom(pb.RecallExplanation(
            legs=[pb.LegContribution(leg=_label(r.leg), rank=r.rank, raw_score=r.raw_score,
                                     rrf_contribution=r.contribution) for r in found.legs],
            rrf_score=found.rrf_score,
            factors=[pb.ScoreFactor(name=f.name, value=f.value, weight=f.weight,
                                    contribution=f.contribution) for f in found.factors],
            floor_applied=found.floor_applied, reranker=reranker,
            final_score=found.final_score, trust=trust(item.trust)))
    return message


def _label(leg: str) -> str:
    return params.LEG_LABELS.get(leg, leg)


def episode(value: EpisodeRow, tokens: int = 0) -> pb.ContextEpisode:
    return pb.ContextEpisode(id=str(value.id), thread_id=value.thread_id, run_id=value.run_id,
                             outcome=_OUTCOME_VALUES[value.outcome], task=value.task,
                             summary=value.summary, finish_time=timestamp(value.finished_at),
                             tokens=tokens)


def _diagnostics(value: Diagnostics) -> pb.RetrievalDiagnostics:
    return pb.RetrievalDiagnostics(
        route=value.route,
        legs=[pb.LegDiagnostics(leg=r.leg, candidates=r.candidates, elapsed_ms=r.elapsed_ms,
                                weight=r.weight) for r in value.legs],
        fused=value.fused, filtered=value.filtered, threshold=value.threshold,
        adaptive_threshold=value.adaptive, rrf_k=value.rrf_k, leg_weights=value.leg_weights,
        factor_weights=value.factor_weights, utility_weight=value.utility_weight,
        value_aware=value.value_aware, scoring_version=value.scoring_version,
        reranker=value.reranker, query_parsing=value.query_parsing,
        stage_timings_ms=value.timings)


def context(value: Context) -> pb.RetrieveContextResponse:
    sections = {name: [memory(i) for i in items] for name, items in value.memories.items()}
    response = pb.RetrieveContextResponse(
        receipt_id=str(value.receipt_id),
        blocks=sections.get("blocks", []), user_profile=sections.get("userProfile", []),
        platform_entries=sections.get("platformEntries", []),
        tenant_floors=sections.get("tenantFloors", []),
        tenant_entries=sections.get("tenantEntries", []),
        procedures=[pb.ContextProcedure(id=p.procedure.id, task=p.procedure.task,
                                        steps=p.procedure.steps_text, tokens=p.tokens)
                    for p in value.procedures],
        workspace_entries=sections.get("workspaceEntries", []),
        relevant_episodes=[episode(e.episode, e.tokens) for e in value.episodes],
        session_entries=sections.get("sessionEntries", []),
        superseded_hidden_count=value.hidden_superseded,
        compilation=pb.Compilation(
            token_budget=value.token_budget, tokens_used=value.tokens_used,
            sections=[pb.SectionUsage(section=u.name, included=u.included, dropped=u.dropped,
                                      tokens=u.tokens) for u in value.usage],
            reserved_tokens=value.reserved_tokens),
        rendered=value.rendered,
        results=[memory(i) for i in value.results],
    )
    if value.summary is not None:
        response.session_summary.CopyFrom(pb.SessionSummary(
            text=value.summary.text, source=value.summary.source, tokens=value.summary.tokens))
    if value.diagnostics is not None:
        response.diagnostics.CopyFrom(_diagnostics(value.diagnostics))
    return response


def relevant(value: Relevant) -> pb.RetrieveRelevantMemoriesResponse:
    usage = value.usage
    return pb.RetrieveRelevantMemoriesResponse(
        receipt_id=str(value.receipt_id or ""), memories=[memory(i) for i in value.memories],
        superseded_hidden_count=value.hidden_superseded,
        compilation=pb.Compilation(
            token_budget=value.token_budget, tokens_used=value.tokens_used,
            sections=[pb.SectionUsage(section=usage.name, included=usage.included,
                                      dropped=usage.dropped, tokens=usage.tokens)],
            reserved_tokens=value.reserved_tokens),
        rendered=value.rendered)


def receipt(value: Receipt) -> pb.Receipt:
    return pb.Receipt(
        id=str(value.id), run_id=value.run_id, thread_id=value.thread_id or "",
        semantic_query=value.query, mode=_MODE_VALUES[Mode(value.mode)],
        token_budget=value.token_budget, tokens_used=value.tokens_used,
        sections=[pb.SectionUsage(section=name, included=u["included"], dropped=u["dropped"],
                                  tokens=u["tokens"]) for name, u in value.sections.items()],
        create_time=timestamp(value.created_at),
        items=[pb.ReceiptItem(memory_id=str(i.memory_id), version=i.version, section=i.section,
                              tokens=i.tokens) for i in value.items])
