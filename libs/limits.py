"""Count arguments (limits, page sizes, lengths): 0 means the default, else 1-maximum."""

from __future__ import annotations

from libs.errors import InvalidArgument


def count(value: int, field: str, *, default: int, maximum: int) -> int:
    if value == 0:
        return default
    if not 1 <= value <= maximum:
        raise InvalidArgument(field, f"must be 1-{maximum} (0 for the default, {default})")
    return value
