"""Opaque page tokens (AIP-158): versioned, base64url JSON, checked on the way in.

Every list call's tokens are made here, in one format: a list ordered by time and
id (newest first or oldest first) continues after ``{"after": time, "id": uuid}``;
a list ordered by a numeric id continues ``{"before": id}``; the journal's
ranges carry their own state (thread and next offset). A token of another shape,
such as one the Learning tab issued before its tokens took this format (``t`` and
``i``), is INVALID_ARGUMENT naming ``page_token``: tokens are short-lived cursors,
and the client starts the list again.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from uuid import UUID

from libs.errors import InvalidArgument

_VERSION = 1
#: Ids and offsets in tokens: what a PostgreSQL bigint (and an int64 field) holds.
_MAX_POSITION = 2**63 - 1
NOT_OURS = "not a page token issued by this service"


def encode(**state: Any) -> str:
    payload = json.dumps({"v": _VERSION, **state}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode(token: str, field: str = "page_token") -> dict[str, Any]:
    """The state inside ``token``; INVALID_ARGUMENT naming ``field`` if it is not ours."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        state = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidArgument(field, NOT_OURS) from None
    if not isinstance(state, dict) or state.pop("v", None) != _VERSION:
        raise InvalidArgument(field, NOT_OURS)
    return state


def position(state: dict[str, Any], name: str, field: str = "page_token") -> int:
    """The id or offset ``name`` of a token's state. Tokens are not signed: a forged
    one is refused here, before its number reaches a query."""
    value = state.get(name)
    if type(value) is not int or not 0 <= value <= _MAX_POSITION:
        raise InvalidArgument(field, NOT_OURS)
    return value


def time_position(token: str) -> tuple[datetime, UUID] | None:
    """Where a list ordered by (time, id) continues; None: from its start."""
    if not token:
        return None
    state = decode(token)
    try:
        return datetime.fromisoformat(state["after"]), UUID(state["id"])
    except (KeyError, TypeError, ValueError):
        raise InvalidArgument("page_token", NOT_OURS) from None


def time_token(at: datetime, item_id: UUID) -> str:
    return encode(after=at.isoformat(), id=str(item_id))


def id_position(token: str) -> int | None:
    """Where a list ordered by a numeric id, newest first, continues; None: its start."""
    return position(decode(token), "before") if token else None


def id_token(item_id: int) -> str:
    return encode(before=item_id)


def next_token(page: Sequence, page_size: int, token_after) -> str:
    """``token_after(last item)`` when ``page`` is full (more may follow), else ''."""
    return token_after(page[-1]) if page and len(page) >= page_size else ""
