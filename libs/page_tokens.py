"""Opaque page tokens (AIP-158): versioned, base64url JSON, checked on the way in."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from libs.errors import InvalidArgument

_VERSION = 1


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
