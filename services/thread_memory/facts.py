"""The pre-compaction flush's fact extraction: one silent model turn, or offline rules.

``ModelFactExtractor`` asks the configured model (``prompts/facts.v1.md``) for
a JSON list of facts; ``OfflineFactExtractor`` is the labelled rule-based
fallback: it keeps what users say plainly about themselves ("my name is",
"I prefer", "I work at", "I live in", "call me") and about their projects ("we
use"). Extracted facts still pass agent memory's write-time screening.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from agentmemory.common.v1 import message_pb2

from libs.model import ChatModel, Prompt
from services.thread_memory.summarizer import transcript
from services.thread_memory.upstreams import Fact

logger = logging.getLogger(__name__)

PROMPT = Prompt(Path(__file__).parent / "prompts" / "facts.v1.md")
MAX_FACTS = 20
_CATEGORIES = {"user_profile", "project_fact", "observation"}


class FactExtractor(Protocol):
    async def extract(self, messages: Sequence[message_pb2.Message]) -> list[Fact]: ...


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:60] or "fact"


def parse_facts(reply: str) -> list[Fact]:
    """The model's JSON list, validated; anything malformed is a failed flush."""
    match = re.search(r"\[.*\]", reply, re.DOTALL)
    if match is None:
        raise ValueError("the model did not return a JSON list")
    facts = []
    for item in json.loads(match.group())[:MAX_FACTS]:
        category = item.get("category")
        content = str(item.get("content", "")).strip()
        if category not in _CATEGORIES or not content:
            continue
        importance = min(1.0, max(0.0, float(item.get("importance", 0.5))))
        facts.append(Fact(_slug(str(item.get("key") or content)), content, category, importance))
    return facts


class ModelFactExtractor:
    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def extract(self, messages) -> list[Fact]:
        return parse_facts(await self._model.complete(PROMPT.text, transcript(messages)))


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


class OfflineFactExtractor:
    """Labelled offline fallback: plain statements users make about themselves."""

    async def extract(self, messages) -> list[Fact]:
        facts: dict[str, Fact] = {}
        for message in messages:
            if message.role != message_pb2.ROLE_USER:
                continue
            for pattern, key, category, importance, template in _USER_RULES:
                for match in pattern.finditer(message.content):
                    value = match.group(1).strip()
                    full_key = key if key in ("name", "preferred_name", "role", "employer",
                                              "home_city") else f"{key}_{_slug(value)}"
                    facts[full_key] = Fact(full_key, template.format(value), category, importance)
        return list(facts.values())[:MAX_FACTS]
