"""Proto <-> domain conversions of the agent-memory service, all in one place."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from agentmemory.common.v1 import principal_pb2
from google.protobuf import field_mask_pb2

from libs import memory_names, page_tokens
from libs.conversions import optional_datetime, struct, timestamp
from libs.errors import InvalidArgument
from libs.identity import parse_principal, require_id
from libs.postgres import INTEGER_MAX
from services.agent_memory.memories import rules
from services.agent_memory.memories.model import (
    AccountSettings,
    AccountUsage,
    Action,
    Actor,
    AgentSettings,
    AuditRecord,
    Author,
    Edit,
    Entry,
    Explanation,
    MemoryCount,
    MemoryFilter,
    NewMemory,
    Quotas,
    RecallResult,
    Role,
    Source,
    StoreOutcome,
    StoreResult,
    Version,
)
from services.agent_memory.memories.rules import ExtractionMode, Kind, Scope, SourceKind, Visibility

# Seed 000's categories and visibilities: kinds and views of the same names (the one map
# of those names is libs.memory_names).
_CATEGORIES = {number: Kind(name) for name, number in memory_names.CATEGORIES.items()}
_KINDS = {getattr(pb, f"MEMORY_KIND_{kind.name}"): kind for kind in Kind}
_SCOPES = {getattr(pb, f"MEMORY_SCOPE_{scope.name}"): scope for scope in Scope}
_VISIBILITIES = {number: Visibility(name) for name, number in memory_names.VISIBILITIES.items()}
_SOURCES = {
    pb.SOURCE_KIND_AGENT_TOOL: SourceKind.AGENT, pb.SOURCE_KIND_PRE_COMPACTION_FLUSH:
    SourceKind.FLUSH, pb.SOURCE_KIND_USER: SourceKind.USER, pb.SOURCE_KIND_ADMIN: SourceKind.ADMIN,
    pb.SOURCE_KIND_EXTRACTION: SourceKind.EXTRACTION,
    pb.SOURCE_KIND_TOOL_RESULT: SourceKind.TOOL_RESULT,
}
_ROLES = {principal_pb2.KEY_ROLE_UNSPECIFIED: Role.SERVICE, principal_pb2.KEY_ROLE_AGENT: Role.AGENT,
          principal_pb2.KEY_ROLE_ADMIN: Role.ADMIN, principal_pb2.KEY_ROLE_OPERATOR: Role.OPERATOR}
_ACTIONS = {getattr(pb, f"AUDIT_ACTION_{action.name}"): action for action in Action}
_EXTRACTION = {pb.EXTRACTION_MODE_IMMEDIATE: ExtractionMode.IMMEDIATE,
               pb.EXTRACTION_MODE_SUGGESTIONS: ExtractionMode.SUGGESTIONS,
               pb.EXTRACTION_MODE_OFF: ExtractionMode.OFF}


def _reverse(mapping: dict) -> dict:
    return {value: key for key, value in mapping.items()}


_KIND_VALUES, _SCOPE_VALUES = _reverse(_KINDS), _reverse(_SCOPES)
_SOURCE_VALUES, _ROLE_VALUES = _reverse(_SOURCES), _reverse(_ROLES)
_CATEGORY_VALUES, _VISIBILITY_VALUES = _reverse(_CATEGORIES), _reverse(_VISIBILITIES)
_ACTION_VALUES, _EXTRACTION_VALUES = _reverse(_ACTIONS), _reverse(_EXTRACTION)


def actor(message, field: str = "principal", *, agent_required: bool = True) -> Actor:
    principal = parse_principal(message, field, agent_required=agent_required)
    return Actor.of(principal, _ROLES[principal.role])


def _member(mapping: dict, value: int, field: str, names: str):
    if value not in mapping:
        raise InvalidArgument(field, f"must be {names}")
    return mapping[value]


def _one_of(names: Iterable[str]) -> str:
    *rest, last = names
    return f"{', '.join(rest)} or {last}" if rest else last


def category(value: int, field: str = "category") -> Kind:
    return _member(_CATEGORIES, value, field, _one_of(memory_names.CATEGORIES))


def categories(values, field: str = "categories") -> list[Kind]:
    return [category(v, f"{field}[{i}]") for i, v in enumerate(values)]


def kind(value: int, field: str) -> Kind:
    return _member(_KINDS, value, field, "a MemoryKind")


def scope(value: int, field: str) -> Scope:
    return _member(_SCOPES, value, field, "a MemoryScope")


def visibility(value: int) -> Visibility | None:
    if value == pb.VISIBILITY_UNSPECIFIED:
        return None
    return _member(_VISIBILITIES, value, "visibility", _one_of(memory_names.VISIBILITIES))


def _offset(value: int, field: str) -> int | None:
    if value < 0:
        raise InvalidArgument(field, "must not be negative")
    return value or None


def source(message: pb.Source, field: str = "source",
           default: SourceKind = SourceKind.AGENT) -> Source:
    kind_ = default
    if message.kind:
        kind_ = _member(_SOURCES, message.kind, f"{field}.kind", "a SourceKind")
    thread_id = require_id(message.thread_id, f"{field}.thread_id") if message.thread_id else None
    ids = tuple(require_id(m, f"{field}.message_ids[{i}]")
                for i, m in enumerate(message.message_ids))
    run_id = require_id(message.run_id, f"{field}.run_id") if message.run_id else None
    return Source(kind_, thread_id, ids, run_id, _offset(message.first_offset,
                                                          f"{field}.first_offset"),
                  _offset(message.last_offset, f"{field}.last_offset"))


def request_id(value: str, field: str = "request_id") -> str | None:
    if not value:
        return None
    if len(value) > 128 or "\x00" in value:
        raise InvalidArgument(field, "at most 128 characters, no NUL")
    return value


def memory_id(value: str, field: str = "memory_id") -> UUID:
    try:
        return UUID(value)
    except ValueError:
        raise InvalidArgument(field, "required: a memory id (UUID)") from None


def author(value: Author) -> pb.Author:
    return pb.Author(key_id=value.key_id, agent_id=value.agent_id, user_id=value.user_id,
                     role=_ROLE_VALUES[value.role])


def entry(value: Entry) -> pb.Entry:
    return pb.Entry(
        id=str(value.id), key=value.key, content=value.content,
        category=_CATEGORY_VALUES.get(value.kind, pb.CATEGORY_UNSPECIFIED),
        visibility=_VISIBILITY_VALUES[value.visibility] if value.scope != Scope.PLATFORM
        else pb.VISIBILITY_UNSPECIFIED,
        importance=value.importance, content_hash=value.content_hash,
        expires_at=timestamp(value.expires_at), recall_count=value.recall_count,
        last_recalled_at=timestamp(value.last_recalled_at),
        created_at=timestamp(value.created_at), updated_at=timestamp(value.updated_at),
        user_id=value.owner_user_id or "",
        source=pb.Source(
            kind=_SOURCE_VALUES[value.source.kind], thread_id=value.source.thread_id or "",
            message_ids=list(value.source.message_ids), run_id=value.source.run_id or "",
            first_offset=value.source.first_offset or 0,
            last_offset=value.source.last_offset or 0),
        scope=_SCOPE_VALUES[value.scope], kind=_KIND_VALUES[value.kind], agent_id=value.agent_id,
        tags=value.tags, confidence=value.confidence, version=value.version,
        author=author(value.author), deleted_at=timestamp(value.deleted_at),
        superseded_by=str(value.superseded_by) if value.superseded_by else "",
        superseded_at=timestamp(value.superseded_at),
        purge_after=timestamp(value.purge_after),
    )


def version(value: Version) -> pb.MemoryVersion:
    return pb.MemoryVersion(version=value.entry.version, entry=entry(value.entry),
                            action=_ACTION_VALUES[value.action],
                            recorded_at=timestamp(value.recorded_at),
                            recorded_until=timestamp(value.recorded_until))


def audit_record(value: AuditRecord) -> pb.AuditRecord:
    return pb.AuditRecord(id=value.id, action=_ACTION_VALUES[value.action],
                          memory_id=str(value.memory_id) if value.memory_id else "",
                          version=value.version or 0, actor=author(value.actor),
                          time=timestamp(value.at), before=struct(value.before),
                          after=struct(value.after))


def explanation(value: Explanation) -> pb.ExplainMemoryResponse:
    return pb.ExplainMemoryResponse(
        memory=entry(value.entry), versions=[version(v) for v in value.versions],
        audit=[audit_record(a) for a in value.audit],
        supersedes=[str(i) for i in value.supersedes])


def store_response(result: StoreResult) -> pb.StoreResponse:
    return pb.StoreResponse(
        entry=entry(result.entry),
        visibility=_VISIBILITY_VALUES[result.entry.visibility],
        unchanged=result.outcome == StoreOutcome.UNCHANGED,
        replaced=result.outcome == StoreOutcome.REPLACED,
    )


def recalled(result: RecallResult) -> pb.RecallResponse:
    return pb.RecallResponse(
        entries=[pb.RecalledEntry(entry=entry(r.entry), score=r.score) for r in result.entries],
        fallback=result.fallback, reranked=result.reranked,
    )


def _unit(value: float, field: str) -> float:
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidArgument(field, "must be between 0.0 and 1.0")
    return value


def new_memory(message: pb.NewMemory, caller: Actor, field: str = "memory") -> NewMemory:
    if message.scope == pb.MEMORY_SCOPE_UNSPECIFIED:
        scope_ = Scope.PRIVATE if caller.user_id else Scope.AGENT
    else:
        scope_ = scope(message.scope, f"{field}.scope")
    default_source = SourceKind.ADMIN if caller.role in (Role.ADMIN, Role.OPERATOR) \
        else SourceKind.USER
    source_ = source(message.source, f"{field}.source", default_source)
    importance = (_unit(message.importance, f"{field}.importance")
                  if message.HasField("importance") else rules.DEFAULT_IMPORTANCE)
    confidence = (_unit(message.confidence, f"{field}.confidence")
                  if message.HasField("confidence") else rules.DEFAULT_CONFIDENCE[source_.kind])
    return NewMemory(scope=scope_, kind=kind(message.kind, f"{field}.kind"),
                     key=message.key or None, content=message.content, importance=importance,
                     confidence=confidence, tags=dict(message.tags), source=source_)


def memory_filter(message: pb.MemoryFilter, field: str = "filter") -> MemoryFilter:
    return MemoryFilter(
        scopes=tuple(scope(v, f"{field}.scopes[{i}]") for i, v in enumerate(message.scopes)),
        kinds=tuple(kind(v, f"{field}.kinds[{i}]") for i, v in enumerate(message.kinds)),
        sources=tuple(_member(_SOURCES, v, f"{field}.sources[{i}]", "a SourceKind")
                      for i, v in enumerate(message.sources)),
        tags=dict(message.tags), text=message.text,
        include_deleted=message.include_deleted, include_superseded=message.include_superseded,
        as_of=optional_datetime(message, "as_of"))


_EDITABLE = ("key", "content", "kind", "importance", "confidence", "tags")


def mask(value: field_mask_pb2.FieldMask, allowed: Sequence[str],
         field: str = "update_mask") -> list[str]:
    if not value.paths:
        raise InvalidArgument(field, f"required: any of {', '.join(allowed)}")
    for i, path in enumerate(value.paths):
        if path not in allowed:
            raise InvalidArgument(f"{field}.paths[{i}]", f"must be one of {', '.join(allowed)}")
    return list(dict.fromkeys(value.paths))


def edit(message: pb.MemoryEdit, update_mask: field_mask_pb2.FieldMask) -> Edit:
    fields = mask(update_mask, _EDITABLE)
    values: dict[str, Any] = {}
    if "key" in fields:
        values["key"] = message.key
    if "content" in fields:
        values["content"] = message.content
    if "kind" in fields:
        values["kind"] = kind(message.kind, "edit.kind")
    for name in ("importance", "confidence"):
        if name in fields:
            values[name] = _unit(getattr(message, name), f"edit.{name}")
    if "tags" in fields:
        values["tags"] = dict(message.tags)
    return Edit(**values)


def expected_version(value: int, field: str = "expected_version", *,
                     required: bool = False) -> int:
    return version_number(value, field, "the version being changed", required=required)


def version_number(value: int, field: str, what: str, *, required: bool) -> int:
    """A version a request names (0: none, when not ``required``); versions are
    ``integer`` columns."""
    if required and value == 0:
        raise InvalidArgument(field, f"required: {what}")
    if not 0 <= value <= INTEGER_MAX:
        raise InvalidArgument(field, f"must be 1-{INTEGER_MAX}")
    return value


# -- page tokens -------------------------------------------------------------------

time_position = page_tokens.time_position
audit_position = page_tokens.id_position


def time_token(entries: list[Entry], page_size: int) -> str:
    return page_tokens.next_token(entries, page_size,
                                  lambda last: page_tokens.time_token(last.created_at, last.id))


def position_token(position: tuple[datetime, UUID] | None) -> str:
    return "" if position is None else page_tokens.time_token(*position)


class _Numbered(Protocol):
    """An audit record of either trail (memories' or learning's): paged by its id."""

    @property
    def id(self) -> int: ...


def audit_token(records: Sequence[_Numbered], page_size: int) -> str:
    return page_tokens.next_token(records, page_size, lambda last: page_tokens.id_token(last.id))


# -- settings ----------------------------------------------------------------------

ACCOUNT_SETTINGS = ("memory_enabled", "retention_days", "default_token_budget", "environments",
                    *(f"quotas.{name}" for name in rules.QUOTA_DEFAULTS))
AGENT_SETTINGS = ("memory_bound", "extraction_mode", "procedures_enabled",
                  "relevant_memories_enabled", "relevant_memories_token_budget")


def account_settings(value: AccountSettings) -> pb.AccountSettings:
    return pb.AccountSettings(memory_enabled=value.memory_enabled,
                              retention_days=value.retention_days,
                              default_token_budget=value.default_token_budget,
                              update_time=timestamp(value.updated_at),
                              environments=value.environments,
                              quotas=pb.AccountQuotas(**dataclasses.asdict(value.quotas)))


MAX_SUMMARY_AGENTS = 100


def agent_ids(values: Sequence[str], field: str = "agent_ids") -> list[str]:
    if len(values) > MAX_SUMMARY_AGENTS:
        raise InvalidArgument(field, f"at most {MAX_SUMMARY_AGENTS} agents")
    return [require_id(v, f"{field}[{i}]") for i, v in enumerate(values)]


def memory_count(value: MemoryCount) -> pb.MemoryCount:
    return pb.MemoryCount(agent_id=value.agent_id, scope=_SCOPE_VALUES[value.scope],
                          kind=_KIND_VALUES[value.kind], memories=value.memories,
                          last_update_time=timestamp(value.last_updated_at))


def account_usage(value: AccountUsage) -> pb.AccountUsage:
    return pb.AccountUsage(**dataclasses.asdict(value))


def agent_settings(value: AgentSettings) -> pb.AgentSettings:
    return pb.AgentSettings(memory_bound=value.memory_bound,
                            extraction_mode=_EXTRACTION_VALUES[value.extraction_mode],
                            procedures_enabled=value.procedures_enabled,
                            update_time=timestamp(value.updated_at),
                            relevant_memories_enabled=value.relevant_memories_enabled,
                            relevant_memories_token_budget=value.relevant_memories_token_budget)


def account_settings_update(message: pb.AccountSettings) -> AccountSettings:
    """The values of an update; a quota of 0 stands for the platform's default."""
    quotas = {name: getattr(message.quotas, name) or default
              for name, default in rules.QUOTA_DEFAULTS.items()}
    return AccountSettings(message.memory_enabled, message.retention_days,
                           message.default_token_budget,
                           environments=tuple(message.environments), quotas=Quotas(**quotas))


def agent_settings_update(message: pb.AgentSettings, fields: Sequence[str]) -> AgentSettings:
    mode = rules.DEFAULT_EXTRACTION_MODE
    if "extraction_mode" in fields:
        mode = _member(_EXTRACTION, message.extraction_mode, "settings.extraction_mode",
                       "immediate, suggestions or off")
    return AgentSettings(message.memory_bound, mode, message.procedures_enabled,
                         relevant_memories_enabled=message.relevant_memories_enabled,
                         relevant_memories_token_budget=(message.relevant_memories_token_budget
                                                         or rules.SETTINGS_RELEVANT_BUDGET))
