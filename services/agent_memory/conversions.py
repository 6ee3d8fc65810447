"""Proto <-> domain conversions of the agent-memory service, all in one place."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from google.protobuf import timestamp_pb2

from libs import page_tokens
from libs.errors import InvalidArgument
from libs.identity import require_id
from services.agent_memory.model import Entry, Recalled, Source, StoreOutcome, StoreResult
from services.agent_memory.rules import Category, SourceKind, Visibility

_CATEGORIES = {
    pb.CATEGORY_USER_PROFILE: Category.USER_PROFILE,
    pb.CATEGORY_PROJECT_FACT: Category.PROJECT_FACT,
    pb.CATEGORY_OBSERVATION: Category.OBSERVATION,
}
_VISIBILITIES = {pb.VISIBILITY_PRIVATE: Visibility.PRIVATE, pb.VISIBILITY_SHARED: Visibility.SHARED}
_SOURCES = {pb.SOURCE_KIND_AGENT_TOOL: SourceKind.AGENT_TOOL,
            pb.SOURCE_KIND_PRE_COMPACTION_FLUSH: SourceKind.PRE_COMPACTION_FLUSH}


def _reverse(mapping: dict) -> dict:
    return {value: key for key, value in mapping.items()}


def category(value: int, field: str = "category") -> Category:
    if value not in _CATEGORIES:
        raise InvalidArgument(field, "must be user_profile, project_fact or observation")
    return _CATEGORIES[value]


def categories(values, field: str = "categories") -> list[Category]:
    return [category(v, f"{field}[{i}]") for i, v in enumerate(values)]


def visibility(value: int) -> Visibility | None:
    if value == pb.VISIBILITY_UNSPECIFIED:
        return None
    if value not in _VISIBILITIES:
        raise InvalidArgument("visibility", "must be private or shared")
    return _VISIBILITIES[value]


def source(message: pb.Source) -> Source:
    if message.kind and message.kind not in _SOURCES:
        raise InvalidArgument("source.kind", "unknown source kind")
    kind = _SOURCES.get(message.kind, SourceKind.AGENT_TOOL)
    thread_id = require_id(message.thread_id, "source.thread_id") if message.thread_id else None
    ids = tuple(require_id(m, f"source.message_ids[{i}]") for i, m in enumerate(message.message_ids))
    return Source(kind, thread_id, ids)


def request_id(value: str) -> str | None:
    if not value:
        return None
    if len(value) > 128:
        raise InvalidArgument("request_id", "at most 128 characters")
    return value


def _timestamp(value: datetime | None) -> timestamp_pb2.Timestamp | None:
    if value is None:
        return None
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(value)
    return stamp


def entry(value: Entry) -> pb.Entry:
    return pb.Entry(
        id=str(value.id),
        key=value.key,
        content=value.content,
        category=_reverse(_CATEGORIES)[value.category],
        visibility=_reverse(_VISIBILITIES)[value.visibility],
        importance=value.importance,
        content_hash=value.content_hash,
        expires_at=_timestamp(value.expires_at),
        recall_count=value.recall_count,
        last_recalled_at=_timestamp(value.last_recalled_at),
        created_at=_timestamp(value.created_at),
        updated_at=_timestamp(value.updated_at),
        user_id=value.owner_user_id or "",
        source=pb.Source(
            kind=_reverse(_SOURCES)[value.source.kind],
            thread_id=value.source.thread_id or "",
            message_ids=list(value.source.message_ids),
        ),
    )


def store_response(result: StoreResult) -> pb.StoreResponse:
    return pb.StoreResponse(
        entry=entry(result.entry),
        visibility=_reverse(_VISIBILITIES)[result.entry.visibility],
        unchanged=result.outcome == StoreOutcome.UNCHANGED,
        replaced=result.outcome == StoreOutcome.REPLACED,
    )


def recalled(values: list[Recalled], fallback: bool) -> pb.RecallResponse:
    return pb.RecallResponse(
        entries=[pb.RecalledEntry(entry=entry(r.entry), score=r.score) for r in values],
        fallback=fallback,
    )


def list_position(token: str) -> tuple[datetime, UUID] | None:
    if not token:
        return None
    state = page_tokens.decode(token)
    try:
        return datetime.fromisoformat(state["after"]), UUID(state["id"])
    except (KeyError, TypeError, ValueError):
        raise InvalidArgument("page_token", "not a page token issued by this service") from None


def next_list_token(entries: list[Entry], page_size: int) -> str:
    if len(entries) < page_size:
        return ""
    last = entries[-1]
    return page_tokens.encode(after=last.created_at.isoformat(), id=str(last.id))


