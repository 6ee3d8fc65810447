"""Checks on what callers send: text fields, tags, unit values, and the
write-time safety screen. Every failure names the field."""

from __future__ import annotations

import re

from libs.errors import InvalidArgument
from services.agent_memory import safety
from services.agent_memory.memories import rules

_TAG_KEY = re.compile(rf"[a-z0-9_.:-]{{1,{rules.MAX_TAG_KEY_CHARS}}}")


def text(value: str, field: str, limit: int) -> str:
    if not value.strip():
        raise InvalidArgument(field, "required")
    if len(value) > limit:
        raise InvalidArgument(field, f"at most {limit} characters")
    if "\x00" in value:
        raise InvalidArgument(field, "must not contain NUL characters")
    return value


def unit(value: float, field: str) -> float:
    if not 0.0 <= value <= 1.0:  # also refuses NaN
        raise InvalidArgument(field, "must be between 0.0 and 1.0")
    return value


def tags(values: dict[str, str], field: str) -> dict[str, str]:
    if len(values) > rules.MAX_TAGS:
        raise InvalidArgument(field, f"at most {rules.MAX_TAGS} tags")
    for key, value in values.items():
        if not _TAG_KEY.fullmatch(key):
            named = 0 < len(key) <= rules.MAX_TAG_KEY_CHARS  # else the path would echo it
            raise InvalidArgument(f"{field}[{key!r}]" if named else field,
                                  "tag keys are 1-64 characters of a-z 0-9 _ . : -")
        if not value or len(value) > rules.MAX_TAG_VALUE_CHARS or "\x00" in value:
            raise InvalidArgument(f"{field}[{key!r}]",
                                  f"tag values are 1-{rules.MAX_TAG_VALUE_CHARS} characters")
    return dict(values)


def screen(fields: dict[str, str], kind: rules.Kind | None = None) -> dict[str, list[str]]:
    """Reject injection attempts (UNSAFE_CONTENT, naming the field and the rule family or
    classifier that refused); return, per field, what sensitive data it holds (credentials,
    personal data), which only personal scopes may keep. Fields without any are left out."""
    sensitive: dict[str, list[str]] = {}
    for field, value in fields.items():
        screening = safety.screen(value, policy=kind in rules.POLICY_KINDS)
        if screening.rejected:
            rule = screening.rule or ""
            by = "the classifier" if rule == safety.CLASSIFIER else f"the rule family '{rule}'"
            raise InvalidArgument(field, f"rejected by {by}: contains {screening.rejected}",
                                  reason="UNSAFE_CONTENT", metadata={"rule": rule})
        if screening.sensitive:
            sensitive[field] = screening.sensitive
    return sensitive


def sensitive_error(found: dict[str, list[str]], why: str, reason: str) -> InvalidArgument:
    """The refusal of sensitive data where it may not be kept, naming the first field that
    holds some and what kinds ("key: contains password; ...")."""
    field, kinds = next(iter(found.items()))
    return InvalidArgument(field, f"contains {', '.join(kinds)}; {why}", reason=reason,
                           metadata={"kinds": ", ".join(kinds)})
