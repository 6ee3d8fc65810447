"""Errors in each HTTP surface's own words.

The servicers name fields as the protos spell them (``caller.agent_id``); a REST caller
wrote JSON (``caller.agentId``, or seed 002's ``applicationId``) and an MCP client wrote
tool arguments and headers (``runId``, ``X-Agent-Id``). These functions rename the
fields an error names, in its field violations, its ``field`` metadata and the start of
its message, and say what was wrong with a value that does not parse, instead of the
parser's own words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from google.protobuf import descriptor

from libs.errors import DomainError, ErrorDetails, InvalidArgument, from_details, shorten

FD = descriptor.FieldDescriptor
_SEGMENT = re.compile(r"([A-Za-z0-9_]+)((?:\[[^\]]*\])*)")
#: MCP callers state themselves in headers, not in a Caller message, and name the tool
#: in tools/call's ``name``.
MCP_NAMES = {"caller.agent_id": "X-Agent-Id", "caller.user_id": "X-User-Id",
             "caller.environment": "X-Environment", "tool_name": "name"}


def json_path(path: str) -> str:
    """``messages[0].tool_calls`` -> ``messages[0].toolCalls`` (the JSON mapping's names)."""
    return ".".join(_SEGMENT.sub(lambda m: _camel(m.group(1)) + m.group(2), part)
                    for part in path.split("."))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def renamed(error: DomainError, rename: Callable[[str], str]) -> DomainError:
    """``error`` with every field it names renamed (a new error; ``error`` is unchanged)."""
    named = {field for field, _ in error.field_violations()}
    if "field" in error.metadata:
        named.add(error.metadata["field"])
    names = {old: rename(old) for old in named}
    if all(old == new for old, new in names.items()):
        return error
    return from_details(ErrorDetails(
        error.code, _renamed_message(error.message, lambda head: names.get(head, head)),
        error.reason, {k: names.get(v, v) if k == "field" else v
                       for k, v in error.metadata.items()},
        {names.get(f, f): d for f, d in error.field_violations()}))


def for_rest(error: DomainError, aliases: Mapping[str, str]) -> DomainError:
    """JSON names, and a route's aliases (``caller.agentId`` -> ``applicationId``)."""
    by_target = {target: alias for alias, target in aliases.items()}
    return renamed(error, lambda path: by_target.get(json_path(path), json_path(path)))


def mcp_name(path: str) -> str:
    """Tool arguments by their own names, the caller by its headers."""
    return MCP_NAMES.get(path) or path.removeprefix("arguments.")


def for_mcp(error: DomainError) -> DomainError:
    return renamed(error, mcp_name)


def mcp_body(body: dict) -> dict:
    """A tool's error result (``libs.errors.as_json``) with MCP's names."""
    return {**body, "message": _renamed_message(body["message"], mcp_name),
            "metadata": {k: mcp_name(v) if k == "field" else v
                         for k, v in body["metadata"].items()},
            "fieldViolations": [{**v, "field": mcp_name(v["field"])}
                                for v in body["fieldViolations"]]}


def _renamed_message(message: str, rename: Callable[[str], str]) -> str:
    head, colon, rest = message.partition(":")
    return rename(head) + colon + rest if colon and " " not in head else message


# -- values that do not parse ---------------------------------------------------------

_STEP = re.compile(r"Failed to parse (\w+) field: ")
_UNKNOWN = re.compile(r'has no field named "([^"]+)"')
_WELL_KNOWN = {
    "google.protobuf.Timestamp": "must be an RFC 3339 time with a time zone, e.g. "
                                 "2026-12-01T09:30:00Z",
    "google.protobuf.Duration": "must be a duration in seconds, e.g. 1.5s",
    "google.protobuf.FieldMask": "must be field names separated by commas, e.g. "
                                 "memoryBound,extractionMode",
    "google.protobuf.Struct": "must be a JSON object",
    "google.protobuf.Value": "must be a JSON value",
    "google.protobuf.ListValue": "must be a JSON array",
}
_INTEGERS = {FD.TYPE_INT32: (-(2**31), 2**31 - 1), FD.TYPE_SINT32: (-(2**31), 2**31 - 1),
             FD.TYPE_SFIXED32: (-(2**31), 2**31 - 1), FD.TYPE_UINT32: (0, 2**32 - 1),
             FD.TYPE_FIXED32: (0, 2**32 - 1), FD.TYPE_INT64: (-(2**63), 2**63 - 1),
             FD.TYPE_SINT64: (-(2**63), 2**63 - 1), FD.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
             FD.TYPE_UINT64: (0, 2**64 - 1), FD.TYPE_FIXED64: (0, 2**64 - 1)}


def parse_failure(text: str, message: descriptor.Descriptor,
                  short_names: Callable[[descriptor.EnumDescriptor], list[str]]
                  ) -> InvalidArgument:
    """What json_format refused (its message ``text``), as INVALID_ARGUMENT naming the
    field by its JSON path and saying what it must be."""
    steps = _STEP.findall(text)
    kind: descriptor.Descriptor | None = message
    field: FD | None = None
    for step in steps:
        field = kind.fields_by_camelcase_name.get(step) or kind.fields_by_name.get(step) \
            if kind is not None else None
        kind = field.message_type if field is not None else None
    path = ".".join(steps)
    unknown = _UNKNOWN.search(text)
    if unknown:
        name = unknown.group(1)
        where = kind if steps else message
        known = ", ".join(f.json_name for f in where.fields) if where is not None else ""
        return InvalidArgument(".".join([*steps, shorten(name)]),
                               f"not a field of this request (its fields: {known})"
                               if not steps else f"not a field here (known: {known})")
    if field is None:
        return InvalidArgument(path or "body", "must be a JSON object")
    return InvalidArgument(path, _expected(field, text, short_names))


def _expected(field: FD, text: str, short_names) -> str:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value = field.message_type.fields_by_name["value"]
        return f"must be an object; each value {_single(value, text, short_names)}"
    single = _single(field, text, short_names)
    if field.is_repeated and "list" in text.lower():
        return f"must be a list; each item {single}"
    return single


def _single(field: FD, text: str, short_names) -> str:
    if field.enum_type is not None:
        return f"must be one of {', '.join(short_names(field.enum_type))}"
    if field.message_type is not None:
        return _WELL_KNOWN.get(field.message_type.full_name, "must be a JSON object")
    if field.type in _INTEGERS:
        low, high = _INTEGERS[field.type]
        return f"must be an integer from {low} to {high}"
    if field.type in (FD.TYPE_DOUBLE, FD.TYPE_FLOAT):
        return "must be a number"
    if field.type == FD.TYPE_BOOL:
        return "must be true or false"
    if field.type == FD.TYPE_BYTES:
        return "must be base64"
    return "must be a string"
