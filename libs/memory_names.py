"""Agent-memory enums by name: the one map between the names tools, prompts and
the domain use (``user_profile``, ``private``) and the proto enum values.

Derived from the proto enums themselves (``CATEGORY_USER_PROFILE`` is
``user_profile``), so a value added to the proto is named here at once.
"""

from __future__ import annotations

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb

from libs.errors import InvalidArgument


def _by_name(enum, prefix: str) -> dict[str, int]:
    return {value.name.removeprefix(prefix).lower(): value.number
            for value in enum.DESCRIPTOR.values if value.number != 0}


CATEGORIES: dict[str, int] = _by_name(pb.Category, "CATEGORY_")
VISIBILITIES: dict[str, int] = _by_name(pb.Visibility, "VISIBILITY_")
SOURCES: dict[str, int] = _by_name(pb.SourceKind, "SOURCE_KIND_")
_CATEGORY_NAMES = {number: name for name, number in CATEGORIES.items()}
_VISIBILITY_NAMES = {number: name for name, number in VISIBILITIES.items()}
_SOURCE_NAMES = {number: name for name, number in SOURCES.items()}


def category(name: str, field: str = "category") -> int:
    if name not in CATEGORIES:
        raise InvalidArgument(field, f"must be one of {', '.join(CATEGORIES)}")
    return CATEGORIES[name]


def category_name(value: int) -> str:
    return _CATEGORY_NAMES[value]


def visibility(name: str, field: str = "visibility") -> int:
    if name not in VISIBILITIES:
        raise InvalidArgument(field, f"must be one of {', '.join(VISIBILITIES)}")
    return VISIBILITIES[name]


def visibility_name(value: int) -> str:
    return _VISIBILITY_NAMES[value]


def source_name(value: int) -> str:
    """``tool_result``, ``user``, ...; ``unspecified`` for a memory of no known source."""
    return _SOURCE_NAMES.get(value, "unspecified")
