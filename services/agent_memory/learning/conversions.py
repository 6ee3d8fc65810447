"""Proto <-> domain conversions of the LearningService, all in one place."""

from __future__ import annotations

from uuid import UUID

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import learning_service_pb2 as pb
from agentmemory.common.v1 import message_pb2

from libs import page_tokens
from libs.conversions import struct, timestamp
from libs.errors import InvalidArgument
from libs.identity import require_id
from services.agent_memory.learning.model import (
    LearningAudit,
    Procedure,
    Recall,
    SkillState,
    Suggestion,
    SuggestionKind,
    SuggestionStatus,
)
from services.agent_memory.memories import conversions as memory_conversions
from services.agent_memory.memories.model import Source
from services.agent_memory.memories.rules import Kind, Scope, SourceKind

_KINDS = {kind: getattr(memory_pb, f"MEMORY_KIND_{kind.name}") for kind in Kind}
_SCOPES = {scope: getattr(memory_pb, f"MEMORY_SCOPE_{scope.name}") for scope in Scope}
_SOURCES = {SourceKind.EXTRACTION: memory_pb.SOURCE_KIND_EXTRACTION,
            SourceKind.TOOL_RESULT: memory_pb.SOURCE_KIND_TOOL_RESULT}
_SUGGESTION_KINDS = {k: getattr(pb, f"SUGGESTION_KIND_{k.name}") for k in SuggestionKind}
_STATUSES = {s: getattr(pb, f"SUGGESTION_STATUS_{s.name}") for s in SuggestionStatus}
_SKILLS = {s: getattr(pb, f"SKILL_STATE_{s.name}") for s in SkillState}
RATINGS: dict[int, str] = {pb.RUN_RATING_THUMBS_UP: "up", pb.RUN_RATING_THUMBS_DOWN: "down"}


def uuid_field(value: str, field: str) -> UUID:
    if not value:
        raise InvalidArgument(field, "required")
    try:
        return UUID(value)
    except ValueError:
        raise InvalidArgument(field, "not a UUID") from None


def status(value: int) -> SuggestionStatus:
    if value == pb.SUGGESTION_STATUS_UNSPECIFIED:
        return SuggestionStatus.PENDING
    found = next((s for s, v in _STATUSES.items() if v == value), None)
    if found is None:
        raise InvalidArgument("status", "unknown status")
    return found


def rating(value: int) -> str:
    if value not in RATINGS:
        raise InvalidArgument("rating", "must be RUN_RATING_THUMBS_UP or RUN_RATING_THUMBS_DOWN")
    return RATINGS[value]


def run_reference(thread_id: str, run_id: str) -> tuple[str, str] | None:
    """An optional (thread, run): both or neither."""
    if not thread_id and not run_id:
        return None
    return require_id(thread_id, "thread_id"), require_id(run_id, "run_id")


def _source(value: Source | None) -> memory_pb.Source | None:
    if value is None:
        return None
    return memory_pb.Source(kind=_SOURCES.get(value.kind, memory_pb.SOURCE_KIND_UNSPECIFIED),
                            thread_id=value.thread_id or "",
                            message_ids=list(value.message_ids), run_id=value.run_id or "",
                            first_offset=value.first_offset or 0,
                            last_offset=value.last_offset or 0)


def suggestion(value: Suggestion) -> pb.Suggestion:
    return pb.Suggestion(
        id=str(value.id), kind=_SUGGESTION_KINDS[value.kind], status=_STATUSES[value.status],
        key=value.key, content=value.content,
        memory_kind=(_KINDS[value.memory_kind] if value.memory_kind
                     else memory_pb.MEMORY_KIND_UNSPECIFIED),
        scope=_SCOPES[value.scope], confidence=value.confidence, source=_source(value.source),
        supersedes_memory_id=str(value.supersedes_memory_id or ""),
        superseded_content=value.superseded_content,
        procedure_id=str(value.procedure_id or ""), memory_id=str(value.memory_id or ""),
        stored_content=value.stored_content, agent_id=value.agent_id, user_id=value.owner_user_id or "",
        create_time=timestamp(value.created_at), decide_time=timestamp(value.decided_at),
        decided_by=memory_conversions.author(value.decided_by) if value.decided_by else None)


def procedure(value: Procedure) -> pb.Procedure:
    return pb.Procedure(
        id=str(value.id), agent_id=value.agent_id, user_id=value.owner_user_id or "",
        scope=_SCOPES[value.scope], task=value.task,
        steps=[pb.ProcedureStep(tool_name=s.tool_name, arguments=s.arguments,
                                status=message_pb2.TOOL_CALL_STATUS_SUCCEEDED, result=s.result)
               for s in value.steps],
        thread_id=value.thread_id, run_id=value.run_id, turn_offset=value.turn_offset,
        successes=value.successes, thumbs_up=value.thumbs_up, thumbs_down=value.thumbs_down,
        recallable=value.recallable, skill_state=_SKILLS[value.skill_state],
        create_time=timestamp(value.created_at), delete_time=timestamp(value.deleted_at),
        purge_after=timestamp(value.purge_after))


def recalled(recall: Recall) -> pb.RecallProceduresResponse:
    return pb.RecallProceduresResponse(
        procedures=[pb.RecalledProcedure(procedure=procedure(r.procedure),
                                         similarity=r.similarity) for r in recall.found],
        rendered=recall.rendered, partial=recall.partial)


def audit_record(value: LearningAudit) -> pb.LearningAuditRecord:
    return pb.LearningAuditRecord(
        id=value.id, action=getattr(pb, f"LEARNING_AUDIT_ACTION_{value.action.name}"),
        subject_id=str(value.subject_id or ""), actor=memory_conversions.author(value.actor),
        time=timestamp(value.at), before=struct(value.before), after=struct(value.after))


time_position = page_tokens.time_position


def time_token(items: list, created: str, size: int) -> str:
    return page_tokens.next_token(
        items, size, lambda last: page_tokens.time_token(getattr(last, created), last.id))


# Audit pages: newest first, by record id (the same tokens as the memory audit's).
audit_position = memory_conversions.audit_position
audit_token = memory_conversions.audit_token
