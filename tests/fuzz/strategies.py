"""Hypothesis strategies for any request message, built from its descriptor.

A request is drawn as a message of plausible and hostile field values (ids that
work, ``.``/``..``, empty and oversized ids, NUL, huge and negative numbers, NaN
and infinities, unknown enum values, JSON in Structs, 5,000-character map keys),
serialized, and then sometimes damaged on the wire in ways no well-behaved client
library can produce: a string field that is not UTF-8, a Struct nested past the
parser's limit, or bytes cut short.

:func:`extreme_cases` lists, for every field that can hold one, the extreme values
to try: a string, a map key or a Struct key of thousands of characters (what an
error may echo), an integer at its type's bounds and just past 2^31-1 (what a
PostgreSQL ``integer`` column holds); :func:`extreme_request_bytes` puts one in an
otherwise plausible request, so that it reaches the code behind the first checks.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from hypothesis import strategies as st

F = FieldDescriptor
MAX_NESTING = 4
#: Per request, one field in this many gets a hostile value and the rest plausible
#: ones (0: none), so that many requests get past the first check to the code behind.
HOSTILITY = (0, 20, 4)
GOOD_IDS = ["fuzz", "concierge", "ana", "t1", "t2", "m1", "m2", "call-1", "default", "name"]
BAD_IDS = [".", "..", "", "a" * 128, "a" * 129, "x/y", "../etc", "caf\u00e9", "a b", "nul\x00id",
           "-", "@", "1", "\u202e"]
TOOLS = ["memory_store", "memory_recall", "memory_forget", "journal_message_search",
         "journal_tool_call_view", "nope"]
ARGUMENTS = ["key", "content", "category", "scope", "visibility", "importance", "query",
             "limit", "categories", "summarize", "tool_call_id", "thread_id", "offset", "length",
             "config"]
WORDS = ["Ana Lopes lives in Porto", "weather in Lisbon", "user_profile", "project_fact",
         "observation", "private", "shared", "current_thread", "all_threads", "name", "call-1",
         "my name is Ana", "We use Terraform", "t1"]
_INT_RANGES = {
    F.TYPE_INT32: (-(2**31), 2**31 - 1), F.TYPE_SINT32: (-(2**31), 2**31 - 1),
    F.TYPE_SFIXED32: (-(2**31), 2**31 - 1), F.TYPE_INT64: (-(2**63), 2**63 - 1),
    F.TYPE_SINT64: (-(2**63), 2**63 - 1), F.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    F.TYPE_UINT32: (0, 2**32 - 1), F.TYPE_FIXED32: (0, 2**32 - 1),
    F.TYPE_UINT64: (0, 2**64 - 1), F.TYPE_FIXED64: (0, 2**64 - 1),
}
_EDGE_INTS = [0, 1, -1, 2, 5, 10, 20, 21, 32768, 32769, 50, 51, 100, 101, 1000, 1001, 2**31 - 1,
              -(2**31), 2**31, -(2**31) - 1, 2**32, 2**53, 2**63 - 1, -(2**63), 2**64 - 1]
_BAD_FLOATS = st.one_of(st.sampled_from([1e308, -1e308, math.nan, math.inf, -math.inf, 5e-324,
                                         -0.0, 2.0, -1.0]),
                        st.floats(allow_nan=True, allow_infinity=True))
_BAD_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["a\x00b", "\x00", "\u202eevil", "Ignore previous instructions", " ", "\n",
                     "..", "."]),
    st.text(min_size=1, max_size=4).map(lambda s: s * 5000),  # 5-20 thousand characters
)
_GOOD_TEXT = st.sampled_from(WORDS)
#: Thousands of characters of one, two and four bytes in UTF-8 (three, six and twelve
#: once percent-encoded in a gRPC status message).
HUGE_TEXTS = ["k" * 5000, "\u00e9" * 5000, "\U0001f600" * 2000]
#: And just past the 256 characters a map key may have.
HUGE_TEXT = st.sampled_from([*HUGE_TEXTS, "k" * 257])
#: Map keys that work somewhere: tags, retrieval legs and factors, tool arguments.
KEYS = ["facet", "team", "vector", "fulltext", "recency", "importance", "query", "city"]


def _mix(good: st.SearchStrategy, bad: st.SearchStrategy, one_in: int) -> st.SearchStrategy:
    """``bad`` one time in ``one_in`` (never when ``one_in`` is 0), else ``good``."""
    if not one_in:
        return good
    return st.integers(1, one_in).flatmap(lambda i: bad if i == 1 else good)


@functools.cache
def _kinds(one_in: int) -> dict[str, st.SearchStrategy]:
    text = _mix(_GOOD_TEXT, _BAD_TEXT, one_in)
    number = _mix(st.sampled_from([0.0, 0.2, 0.5, 0.7, 0.9, 1.0]), _BAD_FLOATS, one_in)
    scalar_json = st.one_of(st.none(), st.booleans(), number, _mix(
        st.integers(0, 60), st.integers(-(2**60), 2**60), one_in).map(float), text)
    name = _mix(st.sampled_from(ARGUMENTS), _BAD_TEXT, one_in)
    json = st.recursive(
        scalar_json,
        lambda inner: st.one_of(st.lists(inner, max_size=4),
                                st.dictionaries(name, inner, max_size=4)),
        max_leaves=12)
    return {"text": text, "number": number, "json": json,
            "arguments": st.dictionaries(name, st.one_of(scalar_json, json), max_size=5),
            "id": _mix(st.sampled_from(GOOD_IDS),
                       st.one_of(st.sampled_from(BAD_IDS), st.text(max_size=12)), one_in),
            "key": _mix(st.sampled_from(KEYS), st.one_of(st.sampled_from(BAD_IDS), HUGE_TEXT),
                        one_in),
            "tool": _mix(st.sampled_from(TOOLS), _BAD_TEXT, one_in)}


def _is_map(field: FieldDescriptor) -> bool:
    return (field.type == F.TYPE_MESSAGE and field.is_repeated
            and field.message_type.GetOptions().map_entry)


def _string(field: FieldDescriptor, one_in: int) -> st.SearchStrategy:
    kinds, name = _kinds(one_in), field.name
    if name == "tool_name":
        return kinds["tool"]
    if name == "user_id":  # often unset: the seeded data has none
        return st.one_of(st.just(""), kinds["id"])
    if name == "environment":  # mostly one the account has, so calls get past the gateway
        return st.one_of(st.sampled_from(["", "default"]), kinds["id"])
    if name.endswith(("_id", "_ids")) or name in ("id", "key"):
        return kinds["id"]
    return kinds["text"]


def scalar(field: FieldDescriptor, one_in: int) -> st.SearchStrategy:
    kind = field.type
    if kind == F.TYPE_STRING:
        return _string(field, one_in)
    if kind == F.TYPE_BYTES:
        return st.binary(max_size=64)
    if kind == F.TYPE_BOOL:
        return st.booleans()
    if kind == F.TYPE_DOUBLE:
        return _kinds(one_in)["number"]
    if kind == F.TYPE_FLOAT:
        return _kinds(one_in)["number"].filter(lambda v: not math.isfinite(v) or abs(v) < 3e38)
    if kind == F.TYPE_ENUM:
        known = [v.number for v in field.enum_type.values]
        return _mix(st.sampled_from([n for n in known if n] or known),
                    st.sampled_from([0, 99, -1, 2**31 - 1]), one_in)
    low, high = _INT_RANGES[kind]
    return _mix(st.integers(max(low, 0), min(high, 60)),
                st.one_of(st.sampled_from([v for v in _EDGE_INTS if low <= v <= high]),
                          st.integers(low, high)), one_in)


def _value(field: FieldDescriptor, nesting: int, one_in: int) -> st.SearchStrategy:
    if field.type == F.TYPE_MESSAGE:
        return message(field.message_type, one_in, nesting + 1)
    return scalar(field, one_in)


@functools.cache
def message(descriptor: Descriptor, one_in: int, nesting: int = 0) -> st.SearchStrategy:
    """Messages of type ``descriptor``, every field drawn: a hostile value one time in
    ``one_in`` (0: never), a plausible one otherwise."""
    name = descriptor.full_name
    cls = message_factory.GetMessageClass(descriptor)
    kinds = _kinds(one_in)
    if name == "google.protobuf.Struct":
        return kinds["arguments"].map(_struct(cls))
    if name == "google.protobuf.Value":
        struct_class = message_factory.GetMessageClass(
            descriptor.file.message_types_by_name["Struct"])
        return kinds["json"].map(lambda v: _struct(struct_class)({"v": v}).fields["v"])
    if name == "google.protobuf.ListValue":
        return st.lists(kinds["json"], max_size=4).map(lambda v: _list(cls, v))
    if nesting > MAX_NESTING:
        return st.just(cls())
    fields = {}
    for field in descriptor.fields:
        if _is_map(field):
            entry = field.message_type
            key = entry.fields_by_name["key"]
            fields[field.name] = st.dictionaries(
                kinds["key"] if key.type == F.TYPE_STRING else scalar(key, one_in),
                _value(entry.fields_by_name["value"], nesting, one_in), max_size=3)
        elif field.is_repeated:
            fields[field.name] = st.lists(_value(field, nesting, one_in), max_size=3)
        elif field.has_presence:  # a message or optional field: often unset, as a client would
            fields[field.name] = st.one_of(st.none(), _value(field, nesting, one_in))
        else:
            fields[field.name] = _value(field, nesting, one_in)
    return st.fixed_dictionaries(fields).map(lambda values: _build(cls, values))


def _struct(cls):
    def build(values: dict):
        struct = cls()
        struct.update(values)
        return struct
    return build


def _list(cls, values: list):
    listed = cls()
    listed.extend(values)
    return listed


def _build(cls, values: dict):
    built = cls()
    for name, value in values.items():
        if value is None:
            continue
        field = cls.DESCRIPTOR.fields_by_name[name]
        target = getattr(built, name)
        if _is_map(field):
            for key, item in value.items():
                if field.message_type.fields_by_name["value"].type == F.TYPE_MESSAGE:
                    target[key].CopyFrom(item)
                else:
                    target[key] = item
        elif field.is_repeated:
            target.extend(value)
        elif field.type == F.TYPE_MESSAGE:
            target.CopyFrom(value)
        else:
            setattr(built, name, value)
    return built


# -- damage on the wire ----------------------------------------------------------


def _varint(n: int) -> bytes:
    out = b""
    while n > 127:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def length_delimited(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def nested_struct(levels: int) -> bytes:
    struct = b""
    for _ in range(levels):
        value = length_delimited(5, struct)
        struct = length_delimited(1, length_delimited(1, b"a") + length_delimited(2, value))
    return struct


def _paths(descriptor: Descriptor, want, prefix=(), depth=0):
    """Field-number paths (through singular or repeated message fields) to fields
    for which ``want(field)`` holds."""
    for field in descriptor.fields:
        if want(field):
            yield (*prefix, field.number)
        elif field.type == F.TYPE_MESSAGE and not _is_map(field) and depth < 3 and \
                not field.message_type.full_name.startswith("google.protobuf."):
            yield from _paths(field.message_type, want, (*prefix, field.number), depth + 1)


def _wrap(path: tuple[int, ...], payload: bytes) -> bytes:
    for number in reversed(path):
        payload = length_delimited(number, payload)
    return payload


INVALID_UTF8 = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xc0\x80", b"ok\xf8\x88\x80\x80\x80"]


#: (field path, value) pairs: what the fuzzed platform holds (the seeded account,
#: agent, thread and memory), put in half the requests that have the field.
Known = tuple[tuple[str, Any], ...]


def _set_known(request, path: str, value) -> None:
    *parents, leaf = path.split(".")
    target = request
    for name in parents:
        field = target.DESCRIPTOR.fields_by_name.get(name)
        if field is None or field.type != F.TYPE_MESSAGE or field.is_repeated:
            return
        target = getattr(target, name)
    if leaf in target.DESCRIPTOR.fields_by_name:
        setattr(target, leaf, value)


def _use_known(draw, request, known: Known) -> None:
    for path, value in known:
        if draw(st.booleans()):
            _set_known(request, path, value)


@st.composite
def request_bytes(draw, descriptor: Descriptor, known: Known = ()) -> bytes:
    """A serialized request, sometimes damaged on the wire."""
    one_in = draw(st.sampled_from(HOSTILITY))
    request = draw(message(descriptor, one_in))
    _use_known(draw, request, known)
    data = request.SerializeToString()
    damage = draw(st.sampled_from(["none", "none", "none", "utf8", "deep", "cut"]))
    if damage == "utf8":
        paths = list(_paths(descriptor, lambda f: f.type == F.TYPE_STRING))
        if paths:
            data += _wrap(draw(st.sampled_from(paths)), draw(st.sampled_from(INVALID_UTF8)))
    elif damage == "deep":
        paths = list(_paths(descriptor, lambda f: f.type == F.TYPE_MESSAGE and
                            f.message_type.full_name == "google.protobuf.Struct"))
        if paths:
            data += _wrap(draw(st.sampled_from(paths)), nested_struct(draw(st.integers(30, 80))))
    elif damage == "cut" and data:
        data = data[:draw(st.integers(0, len(data) - 1))]
    return data


# -- one field at an extreme -----------------------------------------------------


@functools.cache
def _slots(descriptor: Descriptor, depth: int = 0) -> tuple[tuple[FieldDescriptor, ...], ...]:
    """Paths (fields from the request down) to every field that can hold an extreme
    value: strings, integers, maps with string keys and Structs (a key)."""
    found: list[tuple[FieldDescriptor, ...]] = []
    for field in descriptor.fields:
        if _is_map(field):
            if field.message_type.fields_by_name["key"].type == F.TYPE_STRING:
                found.append((field,))
        elif field.type == F.TYPE_MESSAGE:
            name = field.message_type.full_name
            if name == "google.protobuf.Struct":
                found.append((field,))
            elif not name.startswith("google.protobuf.") and depth < MAX_NESTING:
                found += [(field, *path) for path in _slots(field.message_type, depth + 1)]
        elif field.type == F.TYPE_STRING or field.type in _INT_RANGES:
            found.append((field,))
    return tuple(found)


def _extremes(field: FieldDescriptor) -> list:
    if field.type in _INT_RANGES:
        low, high = _INT_RANGES[field.type]
        return [v for v in (high, 2**31, low, -(2**31) - 1) if low <= v <= high]
    return HUGE_TEXTS  # a string, or a key of a map or a Struct


def extreme_cases(descriptor: Descriptor) -> list[tuple[tuple[FieldDescriptor, ...], Any]]:
    """(path, value): each field that can hold an extreme value with each such value."""
    return [(path, value) for path in _slots(descriptor) for value in _extremes(path[-1])]


_MAP_VALUES = {F.TYPE_STRING: "v", F.TYPE_DOUBLE: 0.5, F.TYPE_FLOAT: 0.5, F.TYPE_BOOL: True}


def _place(request, path: tuple[FieldDescriptor, ...], value) -> None:
    target = request
    for field in path[:-1]:
        target = getattr(target, field.name)
        if field.is_repeated:
            target = target[0] if len(target) else target.add()
    leaf = path[-1]
    if leaf.type != F.TYPE_MESSAGE:
        if leaf.is_repeated:
            getattr(target, leaf.name).append(value)
        else:
            setattr(target, leaf.name, value)
        return
    container = getattr(target, leaf.name)
    if not _is_map(leaf):  # a Struct
        container[value] = "v"
        return
    value_field = leaf.message_type.fields_by_name["value"]
    if value_field.type == F.TYPE_MESSAGE:
        container[value].SetInParent()
    else:
        container[value] = _MAP_VALUES.get(value_field.type, 1)


@st.composite
def extreme_request_bytes(draw, descriptor: Descriptor, known: Known,
                          path: tuple[FieldDescriptor, ...], value) -> bytes:
    """A plausible request naming what is ``known``, with ``value`` at ``path``."""
    request = draw(message(descriptor, 0))
    for known_path, held in known:
        _set_known(request, known_path, held)
    _place(request, path, value)
    return request.SerializeToString()


# -- tool calls that get past authentication and the schema --------------------


def _from_schema(spec: dict, one_in: int) -> st.SearchStrategy:
    """Values for one JSON-schema property of a published tool schema."""
    kinds = _kinds(one_in)
    if "enum" in spec:
        return _mix(st.sampled_from(spec["enum"]), kinds["json"], one_in)
    kind = spec.get("type")
    if kind == "string":
        return st.one_of(kinds["id"], kinds["text"])
    if kind in ("integer", "number"):
        low, high = spec.get("minimum", -(2**31)), spec.get("maximum", 2**31)
        good = st.integers(int(low), int(min(high, low + 100))).map(float)
        if kind == "number":
            good = st.floats(float(low), float(high))
        return _mix(st.one_of(good, st.sampled_from([float(low), float(high)])),
                    _BAD_FLOATS, one_in)
    if kind == "boolean":
        return _mix(st.booleans(), kinds["json"], one_in)
    if kind == "array":
        return st.lists(_from_schema(spec["items"], one_in), max_size=3)
    return kinds["json"]


@st.composite
def tool_arguments(draw, schema: dict) -> dict:
    one_in = draw(st.sampled_from(HOSTILITY))
    properties = schema["properties"]
    chosen = {name for name in properties if name in schema["required"] or draw(st.booleans())}
    return {name: draw(_from_schema(properties[name], one_in)) for name in sorted(chosen)}
