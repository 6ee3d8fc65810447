"""Every request message, before any handler sees it: parsed, then held to the
rules that hold for every field of every service.

The server interceptor (:mod:`libs.server`) receives the raw bytes of each
request and calls :func:`parse`, so nothing a client sends can fail inside
grpc's own deserializer (which answers UNKNOWN with no field):

- bytes that are not a valid message, a string field that is not UTF-8, or a
  Struct nested deeper than the parser's limit (100 levels) become
  INVALID_ARGUMENT naming the field (found by re-reading the wire format only
  when parsing failed);
- then every string (map keys and Struct keys included) must be free of NUL
  (U+0000): PostgreSQL cannot store it, and text here ends up there (agent
  memory directly, journal messages through the pre-compaction flush), in
  ClickHouse and in prompts. No field needs it: binary data travels in
  ``bytes`` fields;
- every map key and Struct key must be at most 256 characters: keys are names
  (tags, weights, tool arguments, metadata), and a field path names its key, so
  an error about the value under a key echoes it;
- every float and double must be finite (JSON, Struct conversion and every
  store reject NaN and infinities);
- every enum field must hold a value the enum defines (proto3 keeps unknown
  numbers; no handler can act on one);
- every Timestamp and Duration must be in its valid range (nanos 0-999,999,999,
  years 1-9999): converting one out of range raises.

Field paths read like the JSON a client wrote: ``messages[2].content``,
``metadata["k"]``, and inside a Struct ``arguments.city`` or
``arguments.tags[1]``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, cast

from google.protobuf import message as message_lib
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from libs.errors import InvalidArgument

#: upb's default recursion limit: deeper messages do not parse.
MAX_DEPTH = 100
MAX_KEY_CHARS = 256
_STRUCT = "google.protobuf.Struct"
_VALUE = "google.protobuf.Value"
_LIST = "google.protobuf.ListValue"
_JSON_CONTAINERS = {_STRUCT, _VALUE, _LIST}
# Well-known types with a valid range of their own (nanos 0-999,999,999, years 1-9999):
# converting one out of range raises, so it is refused here, naming the field.
_RANGED = {"google.protobuf.Timestamp": "ToDatetime", "google.protobuf.Duration": "ToTimedelta"}
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FLOATS = {FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT}


def parse(deserializer: Callable[[bytes], Any], data: bytes):
    """The request message, or INVALID_ARGUMENT naming what is wrong with it."""
    try:
        request = deserializer(data)
    except message_lib.DecodeError:
        descriptor = _descriptor_of(deserializer)
        found = _scan(descriptor, memoryview(data), "", 1, None) if descriptor else None
        field, problem = found or ("request", f"not a valid {_type_name(descriptor)} message")
        raise InvalidArgument(field, problem, reason="MALFORMED_REQUEST") from None
    if isinstance(request, message_lib.Message):
        check(request)
    return request


def _descriptor_of(deserializer) -> Descriptor | None:
    owner = getattr(deserializer, "__self__", None)
    return getattr(owner, "DESCRIPTOR", None)


def _type_name(descriptor: Descriptor | None) -> str:
    return descriptor.full_name if descriptor is not None else "protobuf"


# -- paths -------------------------------------------------------------------


def _field_path(path: str, field: FieldDescriptor, index: int | None) -> str:
    """The path of ``field`` (element ``index`` when repeated) under ``path``.
    Inside a Struct the wrapper messages add nothing: only keys and indexes."""
    container = _container_of(field).full_name
    if container in (_STRUCT, _VALUE):  # a Struct's keys are added by _key_path
        return path
    if container == _LIST:
        return f"{path}[{index}]"
    step = f"{path}.{field.name}" if path else field.name
    return step if index is None else f"{step}[{index}]"


def _key_path(path: str, container: str, key: Any) -> str:
    if isinstance(key, str) and len(key) > MAX_KEY_CHARS:
        return path  # refused as a key of the map: echoed, it would fill the error
    if container == _STRUCT and isinstance(key, str) and _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


# -- after parsing: NUL, non-finite numbers, unknown enum values --------------
# The walk builds no paths: a violation collects its steps as it unwinds, so a
# valid request (the common case) pays only for visiting its fields.


class _Violation(Exception):
    def __init__(self, problem: str) -> None:
        self.problem = problem
        self.steps: list[tuple[FieldDescriptor, Any]] = []  # innermost first

    def path(self) -> str:
        path = ""
        for field, where in reversed(self.steps):
            if where is _NO_INDEX:
                path = _field_path(path, field, None)
            elif _is_map(field):
                path = _key_path(_field_path(path, field, None), _container_of(field).full_name,
                                 where)
            else:
                path = _field_path(path, field, where)
        return path


_NO_INDEX = object()
_CHECKED_TYPES = {FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_ENUM, *_FLOATS}
_NEEDS_CHECK: dict[str, bool] = {}


def check(message: message_lib.Message) -> None:
    """INVALID_ARGUMENT naming the first field that breaks the rules above (for requests
    that arrive parsed already, such as JSON over HTTP)."""
    try:
        _check(message)
    except _Violation as violation:
        raise InvalidArgument(violation.path() or "request", violation.problem) from None


def _check(message: message_lib.Message) -> None:
    for field, value in message.ListFields():
        shape = _shape(field)
        if shape is _SKIP:
            continue
        try:
            if shape is _SINGLE:
                _check_value(field, value)
            elif shape is _REPEATED:
                _check_items(field, value)
            else:
                _check_map(field, value)
        except _Violation as violation:
            if shape is _SINGLE:
                violation.steps.append((field, _NO_INDEX))
            raise


_SKIP, _SINGLE, _REPEATED, _MAP = "skip", "single", "repeated", "map"
_SHAPES: dict[FieldDescriptor, str] = {}


def _shape(field: FieldDescriptor) -> str:
    """How to check a field, worked out once per field (descriptor calls are slow)."""
    shape = _SHAPES.get(field)
    if shape is None:
        if field.type == FieldDescriptor.TYPE_MESSAGE and not _needs_check(_message_of(field)):
            shape = _SKIP
        elif field.type not in _CHECKED_TYPES and field.type != FieldDescriptor.TYPE_MESSAGE:
            shape = _SKIP
        elif _is_map(field):
            shape = _MAP
        else:
            shape = _REPEATED if field.is_repeated else _SINGLE
        _SHAPES[field] = shape
    return shape


def _check_items(field: FieldDescriptor, values) -> None:
    for index, item in enumerate(values):
        try:
            _check_value(field, item)
        except _Violation as violation:
            violation.steps.append((field, index))
            raise


def _check_map(field: FieldDescriptor, value) -> None:
    value_field = _message_of(field).fields_by_name["value"]
    for key, item in value.items():
        if isinstance(key, str):
            _check_key(field, key)
        try:
            _check_value(value_field, item)
        except _Violation as violation:
            violation.steps.append((field, key))
            raise


def _check_key(field: FieldDescriptor, key: str) -> None:
    """A bad key is reported on the map itself: its path would echo the key."""
    problem = None
    if "\x00" in key:
        problem = "keys must not contain NUL (U+0000)"
    elif len(key) > MAX_KEY_CHARS:
        problem = f"a key of {len(key):,} characters: keys are at most {MAX_KEY_CHARS}"
    if problem:
        violation = _Violation(problem)
        violation.steps.append((field, _NO_INDEX))
        raise violation


def _check_value(field: FieldDescriptor, value) -> None:
    kind = field.type
    if kind == FieldDescriptor.TYPE_MESSAGE:
        convert = _RANGED.get(_message_of(field).full_name)
        if convert is None:
            _check(value)
            return
        try:
            getattr(value, convert)()
        except (ValueError, OverflowError) as exc:
            raise _Violation(f"out of range: {exc}") from None
    elif kind == FieldDescriptor.TYPE_STRING:
        if "\x00" in value:
            raise _Violation("must not contain NUL (U+0000)")
    elif kind in _FLOATS:
        if not math.isfinite(value):
            raise _Violation("must be a finite number (not NaN or infinity)")
    elif kind == FieldDescriptor.TYPE_ENUM and value not in _enum_of(field).values_by_number:
        raise _Violation(f"unknown {_enum_of(field).name} value {value}")


def _needs_check(descriptor: Descriptor) -> bool:
    """Whether messages of this type can hold a string, a float, an enum or a ranged
    well-known type at all."""
    name = descriptor.full_name
    if name in _RANGED:
        return True
    if name not in _NEEDS_CHECK:
        _NEEDS_CHECK[name] = True  # recursive types (Struct) count as needing it
        _NEEDS_CHECK[name] = any(
            f.type in _CHECKED_TYPES or (f.type == FieldDescriptor.TYPE_MESSAGE
                                         and _needs_check(_message_of(f)))
            for f in descriptor.fields)
    return _NEEDS_CHECK[name]


def _is_map(field: FieldDescriptor) -> bool:
    return (field.type == FieldDescriptor.TYPE_MESSAGE and field.is_repeated
            and _message_of(field).GetOptions().map_entry)


# The stubs type a field's message, enum and containing type as optional (a scalar field
# has no message type); these are asked only of fields that have one.


def _message_of(field: FieldDescriptor) -> Descriptor:
    return cast(Descriptor, field.message_type)


def _enum_of(field: FieldDescriptor) -> EnumDescriptor:
    return cast(EnumDescriptor, field.enum_type)


def _container_of(field: FieldDescriptor) -> Descriptor:
    return cast(Descriptor, field.containing_type)


# -- when parsing failed: find the field on the wire ---------------------------


class _Malformed(Exception):
    pass


def _scan(descriptor: Descriptor, data: memoryview, path: str, depth: int,
          json_root: str | None) -> tuple[str, str] | None:
    """(field path, problem) of the first string that is not UTF-8 or the first
    Struct nested past the limit; None when the bytes are broken in another way."""
    if depth > MAX_DEPTH:
        return json_root or path or "request", f"nested deeper than {MAX_DEPTH} levels"
    seen: dict[int, int] = {}
    try:
        for number, chunk in _length_delimited(data):
            field = descriptor.fields_by_number.get(number)
            if field is None or field.type not in (FieldDescriptor.TYPE_STRING,
                                                   FieldDescriptor.TYPE_MESSAGE):
                continue
            index = seen.get(number, 0)
            seen[number] = index + 1
            found = _scan_field(field, chunk, path, index, depth, json_root)
            if found:
                return found
    except _Malformed:
        return None
    return None


def _scan_field(field: FieldDescriptor, chunk: memoryview, path: str, index: int, depth: int,
                json_root: str | None) -> tuple[str, str] | None:
    if _is_map(field):
        return _scan_entry(field, chunk, _field_path(path, field, None), depth, json_root)
    where = _field_path(path, field, index if field.is_repeated else None)
    if field.type == FieldDescriptor.TYPE_STRING:
        return None if _is_utf8(chunk) else (where, "not valid UTF-8")
    if json_root is None and _message_of(field).full_name in _JSON_CONTAINERS:
        json_root = where
    return _scan(_message_of(field), chunk, where, depth + 1, json_root)


def _scan_entry(field: FieldDescriptor, chunk: memoryview, path: str, depth: int,
                json_root: str | None) -> tuple[str, str] | None:
    entry = _message_of(field)
    parts = dict(_length_delimited(chunk))
    key_field, value_field = entry.fields_by_name["key"], entry.fields_by_name["value"]
    key: Any = "?"
    if key_field.type == FieldDescriptor.TYPE_STRING and 1 in parts:
        if not _is_utf8(parts[1]):
            return path, "a key is not valid UTF-8"
        key = bytes(parts[1]).decode()
    if _container_of(field).full_name == _STRUCT and json_root is None:
        json_root = path
    where = _key_path(path, _container_of(field).full_name, key)
    value = parts.get(2)
    if value is None or value_field.type not in (FieldDescriptor.TYPE_STRING,
                                                 FieldDescriptor.TYPE_MESSAGE):
        return None
    if value_field.type == FieldDescriptor.TYPE_STRING:
        return None if _is_utf8(value) else (where, "not valid UTF-8")
    return _scan(_message_of(value_field), value, where, depth + 2, json_root)


def _is_utf8(chunk: memoryview) -> bool:
    try:
        bytes(chunk).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _length_delimited(data: memoryview):
    """(field number, payload) of each length-delimited field; other wire types skipped."""
    position, end = 0, len(data)
    while position < end:
        key, position = _varint(data, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            _, position = _varint(data, position)
        elif wire_type == 1:
            position += 8
        elif wire_type == 5:
            position += 4
        elif wire_type == 2:
            size, position = _varint(data, position)
            if position + size > end:
                raise _Malformed
            yield number, data[position:position + size]
            position += size
        else:
            raise _Malformed
        if position > end:
            raise _Malformed


def _varint(data: memoryview, position: int) -> tuple[int, int]:
    result = shift = 0
    while position < len(data) and shift < 64:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
    raise _Malformed
