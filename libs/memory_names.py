"""Agent-memory enums by name: the one map between the names tools, prompts and
the domain use (``user_profile``, ``private``) and the proto enum values.

Derived from the proto enums themselves (``CATEGORY_USER_PROFILE`` is
``user_profile``), so a value added to the proto is named here at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb

from libs.errors import InvalidArgument

if TYPE_CHECKING:  # the stubs' generic base of the generated enums (not a runtime name)
    from google.protobuf.internal.enum_type_wrapper import _EnumTypeWrapper

EnumValue = TypeVar("EnumValue", bound=int)


def _by_name(enum: _EnumTypeWrapper[EnumValue], prefix: str) -> dict[str, EnumValue]:
    return {value.name.removeprefix(prefix).lower(): enum.Value(value.name)
            for value in enum.DESCRIPTOR.values if value.number != 0}


CATEGORIES = _by_name(pb.Category, "CATEGORY_")
VISIBILITIES = _by_name(pb.Visibility, "VISIBILITY_")
SOURCES = _by_name(pb.SourceKind, "SOURCE_KIND_")
# By the number on the wire (a reply's field, read as an int).
_CATEGORY_NAMES: dict[int, str] = {number: name for name, number in CATEGORIES.items()}
_VISIBILITY_NAMES: dict[int, str] = {number: name for name, number in VISIBILITIES.items()}
_SOURCE_NAMES: dict[int, str] = {number: name for name, number in SOURCES.items()}


def category(name: str, field: str = "category") -> pb.Category.ValueType:
    if name not in CATEGORIES:
        raise InvalidArgument(field, f"must be one of {', '.join(CATEGORIES)}")
    return CATEGORIES[name]


def category_name(value: int) -> str:
    return _CATEGORY_NAMES[value]


def visibility(name: str, field: str = "visibility") -> pb.Visibility.ValueType:
    if name not in VISIBILITIES:
        raise InvalidArgument(field, f"must be one of {', '.join(VISIBILITIES)}")
    return VISIBILITIES[name]


def visibility_name(value: int) -> str:
    return _VISIBILITY_NAMES[value]


def source_name(value: int) -> str:
    """``tool_result``, ``user``, ...; ``unspecified`` for a memory of no known source."""
    return _SOURCE_NAMES.get(value, "unspecified")
