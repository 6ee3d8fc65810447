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

from libs import memory_names
from libs.facts import MAX_FACTS, offline_facts, slug
from libs.model import ChatModel, Prompt
from services.thread_memory.summarizer import transcript
from services.thread_memory.upstreams import Fact

logger = logging.getLogger(__name__)

PROMPT = Prompt(Path(__file__).parent / "prompts" / "facts.v1.md")


class FactExtractor(Protocol):
    async def extract(self, messages: Sequence[message_pb2.Message]) -> list[Fact]: ...


def parse_facts(reply: str) -> list[Fact]:
    """The model's JSON list, validated; anything malformed is a failed flush."""
    match = re.search(r"\[.*\]", reply, re.DOTALL)
    if match is None:
        raise ValueError("the model did not return a JSON list")
    facts = []
    for item in json.loads(match.group())[:MAX_FACTS]:
        category = item.get("category")
        content = str(item.get("content", "")).strip()
        if category not in memory_names.CATEGORIES or not content:
            continue
        importance = min(1.0, max(0.0, float(item.get("importance", 0.5))))
        facts.append(Fact(slug(str(item.get("key") or content)), content, category, importance))
    return facts


class ModelFactExtractor:
    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def extract(self, messages) -> list[Fact]:
        return parse_facts(await self._model.complete(PROMPT.text, transcript(messages)))


class OfflineFactExtractor:
    """Labelled offline fallback: plain statements users make about themselves
    (the rules are shared with agent memory's extraction: ``libs.facts``)."""

    async def extract(self, messages) -> list[Fact]:
        return [Fact(f.key, f.content, f.category, f.importance)
                for f in offline_facts(messages)]
