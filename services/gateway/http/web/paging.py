"""Paging both ways over page tokens that only lead forward (AIP-158).

A list page's URL carries its own token (``page``) and the tokens of the pages
before it (``back``, oldest first, the first page's empty token left out), so
"Previous page" is a plain link like "Next page". The tokens are the services'
own (opaque, checked by them when used); the page only copies them into links.
The trail keeps the last ``MAX_TRAIL`` pages: past that, "Previous" still works
that far back and "First page" the whole way.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass

MAX_TRAIL = 40
_SEPARATOR = "."  # not a base64url character


@dataclass(frozen=True)
class Position:
    token: str  # this page's ("" for the first)
    trail: tuple[str, ...]  # the tokens of the pages before it, after the first

    @classmethod
    def of(cls, query: Mapping[str, str]) -> Position:
        token = query.get("page", "")
        trail = tuple(t for t in query.get("back", "").split(_SEPARATOR) if t)
        return cls(token, trail[-MAX_TRAIL:] if token else ())


@dataclass(frozen=True)
class Links:
    first: str = ""
    previous: str = ""
    next: str = ""


def _url(path: str, kept: Mapping[str, str], token: str, trail: tuple[str, ...]) -> str:
    query = {k: v for k, v in kept.items() if v}
    if token:
        query["page"] = token
        if trail:
            query["back"] = _SEPARATOR.join(trail[-MAX_TRAIL:])
    return path + ("?" + urllib.parse.urlencode(query) if query else "")


def links(path: str, kept: Mapping[str, str], at: Position, next_token: str) -> Links:
    """The first, previous and next pages' URLs ("" where there is none); ``kept``: the
    query parameters every page of the list keeps (its filters)."""
    if not at.token:
        return Links(next=_url(path, kept, next_token, ()) if next_token else "")
    before = at.trail[-1] if at.trail else ""
    return Links(first=_url(path, kept, "", ()) if at.trail else "",  # else it is previous
                 previous=_url(path, kept, before, at.trail[:-1]),
                 next=_url(path, kept, next_token, (*at.trail, at.token)) if next_token
                 else "")
