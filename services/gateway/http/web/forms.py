"""HTML form fields <-> the library and learning request messages, in one place.

Form values are strings; they become the same request messages a gRPC client
sends, and the handlers validate them as they validate any request. Only what
a string cannot carry is checked here (a number that is not one, a tag without
``=``), naming the form field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import learning_service_pb2 as learning_pb
from google.protobuf import descriptor, field_mask_pb2, json_format
from google.protobuf.message import Message

from libs import memory_writers
from libs.errors import InvalidArgument
from services.gateway.http.rest import enum_prefix

if TYPE_CHECKING:  # the stubs' generic base of the generated enums (not a runtime name)
    from google.protobuf.internal.enum_type_wrapper import _EnumTypeWrapper

PAGE_SIZE = 25
MAX_TAGS_CHARS = 8192


def choices(enum: descriptor.EnumDescriptor, *, skip: tuple[str, ...] = ()) -> list[str]:
    """The short names of an enum's values (``account`` for MEMORY_SCOPE_ACCOUNT)."""
    prefix = enum_prefix(enum)
    return [v.name.removeprefix(prefix).lower() for v in enum.values[1:]
            if v.name.removeprefix(prefix).lower() not in skip]


SCOPES = choices(memory_pb.MemoryScope.DESCRIPTOR)
KINDS = choices(memory_pb.MemoryKind.DESCRIPTOR)
SOURCES = choices(memory_pb.SourceKind.DESCRIPTOR)
EXTRACTION_MODES = choices(memory_pb.ExtractionMode.DESCRIPTOR)
SUGGESTION_STATUSES = choices(learning_pb.SuggestionStatus.DESCRIPTOR)


def writable(role: str, with_user: bool, scope: str = "") -> tuple[list[str], list[str]]:
    """The scopes and kinds a credential of ``role`` (with a user or not) may write, by
    the rule agent memory enforces (``libs.memory_writers``), in the forms' order; with
    ``scope``, the kinds of that scope."""
    scopes = [s for s in SCOPES if (not scope or s == scope) and any(
        memory_writers.may_write(role, s, k, with_user=with_user) for k in KINDS)]
    kinds = [k for k in KINDS if any(
        memory_writers.may_write(role, s, k, with_user=with_user) for s in scopes)]
    return scopes, kinds


EnumValue = TypeVar("EnumValue", bound=int)


def enum_value(enum: _EnumTypeWrapper[EnumValue], short: str, field: str) -> EnumValue:
    """The value of ``enum`` (``memory_pb.MemoryKind``) named ``short`` (``project_fact``)."""
    full = enum_prefix(enum.DESCRIPTOR) + short.upper()
    if not short or full not in enum.DESCRIPTOR.values_by_name:
        raise InvalidArgument(field, f"must be one of {', '.join(choices(enum.DESCRIPTOR))}")
    return enum.Value(full)


def optional_enum(enum: _EnumTypeWrapper[EnumValue], form: Mapping[str, str],
                  field: str) -> EnumValue:
    """As ``enum_value``; the unspecified value when the form leaves ``field`` empty."""
    short = form.get(field, "")
    return enum_value(enum, short, field) if short else enum.Value(enum.DESCRIPTOR.values[0].name)


def number(form: Mapping[str, str], field: str) -> float | None:
    text = form.get(field, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise InvalidArgument(field, "must be a number") from None
    if not math.isfinite(value):
        raise InvalidArgument(field, "must be a number")
    return value


def integer(form: Mapping[str, str], field: str, default: int = 0) -> int:
    text = form.get(field, "").strip()
    if not text:
        return default
    if not text.lstrip("-").isdigit() or len(text) > 18:
        raise InvalidArgument(field, "must be a whole number")
    return int(text)


def tags(text: str, field: str = "tags") -> dict[str, str]:
    """``team=billing, lang=en`` (commas or new lines between pairs)."""
    if len(text) > MAX_TAGS_CHARS:
        raise InvalidArgument(field, f"at most {MAX_TAGS_CHARS} characters")
    pairs = {}
    for item in text.replace("\n", ",").split(","):
        if not item.strip():
            continue
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise InvalidArgument(field, "write each tag as key=value")
        pairs[key.strip()] = value.strip()
    return pairs


def checkbox(form: Mapping[str, str], field: str) -> bool:
    return form.get(field) == "on"


# -- requests ------------------------------------------------------------------

def memory_filter(query: Mapping[str, str]) -> memory_pb.MemoryFilter:
    return memory_pb.MemoryFilter(
        scopes=[enum_value(memory_pb.MemoryScope, query["scope"], "scope")]
        if query.get("scope") else [],
        kinds=[enum_value(memory_pb.MemoryKind, query["kind"], "kind")]
        if query.get("kind") else [],
        sources=[enum_value(memory_pb.SourceKind, query["source"], "source")]
        if query.get("source") else [],
        tags=tags(query.get("tag", ""), "tag"), text=query.get("text", "").strip(),
        include_deleted=checkbox(query, "deleted"),
        include_superseded=checkbox(query, "superseded"))


def new_memory(form: Mapping[str, str]) -> memory_pb.NewMemory:
    memory = memory_pb.NewMemory(
        scope=optional_enum(memory_pb.MemoryScope, form, "scope"),
        kind=enum_value(memory_pb.MemoryKind, form.get("kind", ""), "kind"),
        key=form.get("key", "").strip(), content=form.get("content", ""),
        tags=tags(form.get("tags", "")))
    for name in ("importance", "confidence"):
        value = number(form, name)
        if value is not None:
            setattr(memory, name, value)
    return memory


def edit(form: Mapping[str, str], current: memory_pb.Entry) -> tuple[memory_pb.MemoryEdit,
                                                                      field_mask_pb2.FieldMask]:
    """The edit and the mask of the fields whose value the form changed."""
    new = memory_pb.MemoryEdit(
        key=form.get("key", "").strip(), content=form.get("content", ""),
        kind=enum_value(memory_pb.MemoryKind, form.get("kind", ""), "kind"),
        tags=tags(form.get("tags", "")))
    for name in ("importance", "confidence"):
        value = number(form, name)
        setattr(new, name, getattr(current, name) if value is None else value)
    changed = [name for name in ("key", "content", "kind", "importance", "confidence")
               if getattr(new, name) != getattr(current, name)]
    if dict(new.tags) != dict(current.tags):
        changed.append("tags")
    return new, field_mask_pb2.FieldMask(paths=changed)


def account_settings(form: Mapping[str, str]) -> memory_pb.AccountSettings:
    return memory_pb.AccountSettings(
        memory_enabled=checkbox(form, "memory_enabled"),
        retention_days=integer(form, "retention_days"),
        default_token_budget=integer(form, "default_token_budget"))


def agent_settings(form: Mapping[str, str]) -> memory_pb.AgentSettings:
    return memory_pb.AgentSettings(
        memory_bound=checkbox(form, "memory_bound"),
        extraction_mode=enum_value(memory_pb.ExtractionMode,
                                   form.get("extraction_mode", ""), "extraction_mode"),
        procedures_enabled=checkbox(form, "procedures_enabled"),
        relevant_memories_enabled=checkbox(form, "relevant_memories_enabled"),
        relevant_memories_token_budget=integer(form, "relevant_memories_token_budget"))


# -- replies, for the templates ------------------------------------------------

def view(message: Message) -> dict[str, Any]:
    """A reply as plain data for a template (field names as in the proto)."""
    return json_format.MessageToDict(message, preserving_proto_field_name=True,
                                      always_print_fields_with_no_presence=True)
