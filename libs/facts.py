"""Rule-based fact extraction: the labelled offline fallback when no model is configured.

It keeps what users say plainly about themselves ("my name is", "call me",
"I'm a ... engineer", "I work at", "I live in", "I prefer") and about their
projects ("we use"), each with a stable key, so that a later statement about
the same thing (a new city, a new employer) lands on the same key. Used by
thread memory's pre-compaction flush and by agent memory's extraction after a
run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agentmemory.common.v1 import message_pb2

GENERATOR = "offline-rules-v1"
MAX_FACTS = 20


@dataclass(frozen=True)
class StatedFact:
    key: str
    content: str
    category: str  # user_profile | project_fact
    importance: float
    offset: int  # the user message it was said in


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:60] or "fact"


_USER_RULES: list[tuple[re.Pattern[str], str, str, float, str]] = [
    # (pattern, key, category, importance, content template)
    (re.compile(r"\b(?i:my name is) ([A-Z][\w'-]*(?: [A-Z][\w'-]*)?)"), "name", "user_profile",
     0.9, "The user's name is {0}."),
    (re.compile(r"\b(?i:call me) ([A-Z][\w'-]*)"), "preferred_name", "user_profile", 0.8,
     "The user likes to be called {0}."),
    (re.compile(r"\bI(?:'m| am) an? ((?:senior |junior |staff |lead )?[a-z]+ ?"
                r"(?:engineer|developer|designer|manager|scientist|analyst|architect))\b", re.I),
     "role", "user_profile", 0.8, "The user is a {0}."),
    (re.compile(r"\b(?i:I work (?:at|for)) ([A-Z][\w&-]*(?: [A-Z][\w&-]*)?)"), "employer",
     "user_profile", 0.8, "The user works at {0}."),
    (re.compile(r"\b(?i:I live in) ([A-Z][\w-]*(?: [A-Z][\w-]*)?)"), "home_city", "user_profile",
     0.8, "The user lives in {0}."),
    (re.compile(r"\bI (?:really )?(?:prefer|like|love) ([^.!?,;]{3,60})", re.I), "preference",
     "user_profile", 0.7, "The user prefers {0}."),
    (re.compile(r"\bwe use ([^.!?,;]{3,60})", re.I), "stack", "project_fact", 0.6,
     "The team uses {0}."),
]
# Keys naming one slot (a second value replaces the first); the others get the value's slug.
_SINGLE_SLOT = frozenset({"name", "preferred_name", "role", "employer", "home_city"})


def offline_facts(messages: Sequence[message_pb2.Message]) -> list[StatedFact]:
    """Facts users state plainly, the latest statement of a key winning."""
    facts: dict[str, StatedFact] = {}
    for message in messages:
        if message.role != message_pb2.ROLE_USER:
            continue
        for pattern, key, category, importance, template in _USER_RULES:
            for match in pattern.finditer(message.content):
                value = match.group(1).strip()
                full_key = key if key in _SINGLE_SLOT else f"{key}_{slug(value)}"
                facts.pop(full_key, None)
                facts[full_key] = StatedFact(full_key, template.format(value), category,
                                             importance, message.offset)
    return list(facts.values())[:MAX_FACTS]
