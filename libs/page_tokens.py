"""Opaque page tokens (AIP-158): versioned, base64url JSON, checked on the way in."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from libs.errors import InvalidArgument

_VERSION = 1
#: Ids and offsets in tokens: what a PostgreSQL bigint (and an int64 field) holds.
_MAX_POSITION = 2**63 - 1


def encode(**state: Any) -> str:
    payload = json.dumps({"v": _VERSION, **state}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode(token: str, field: str = "page_token") -> dict[str, Any]:
    """The state inside ``token``; INVALID_ARGUMENT naming ``field`` if it is not ours."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        state = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise InvalidArgument(field, "not a page token issued by this service") from None
    if not isinstance(state, dict) or state.pop("v", None) != _VERSION:
        raise InvalidArgument(field, "not a page token issued by this service")
    return state


def position(state: dict[str, Any], name: str, field: str = "page_token") -> int:
    """The id or offset ``name`` of a token's state. Tokens are not signed: a forged
    one is refused here, before its number reaches a query."""
    value = state.get(name)
    if type(value) is not int or not 0 <= value <= _MAX_POSITION:
        raise InvalidArgument(field, "not a page token issued by this service")
    return value
