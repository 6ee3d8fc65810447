"""Facts from a finished run: the utility model, or the labelled offline rules.

``ModelExtractor`` sends the run's transcript (each message tagged ``(#offset)``,
tool results marked as such) and the keys of the memories the thread already
sees, so a fact that updates one of them reuses its key; the reply is a JSON
list, validated here: at most ``MAX_FACTS``, one sentence each (at most
``MAX_FACT_CHARS``), a known kind, and offsets that are messages of the run.
``OfflineExtractor`` (no ``MODEL_BASE_URL``) applies ``libs.facts``' rules to
the user's messages.

Provenance decides the source, not the model: a fact citing any tool result
is ``tool_result`` (lower confidence, never an instruction); otherwise it is
``extraction``. Confidence is capped by the source's default.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from agentmemory.common.v1 import message_pb2

from libs import facts as offline_rules
from libs.model import ChatModel, Prompt
from services.agent_memory.learning.model import Fact, FinishedRun
from services.agent_memory.memories import rules
from services.agent_memory.memories.model import Source
from services.agent_memory.memories.rules import Kind, SourceKind

logger = logging.getLogger(__name__)

PROMPT = Prompt(Path(__file__).parent / "prompts" / "run_facts.v1.md")
MAX_FACTS = 20
MAX_FACT_CHARS = 500
MAX_TRANSCRIPT_CHARS = 60_000
EXTRACTABLE = frozenset({Kind.USER_PROFILE, Kind.PREFERENCE, Kind.PROJECT_FACT, Kind.DECISION,
                         Kind.OBSERVATION, Kind.INSTRUCTION})
_ROLES = {message_pb2.ROLE_USER: "user", message_pb2.ROLE_ASSISTANT: "assistant",
          message_pb2.ROLE_SYSTEM: "system", message_pb2.ROLE_TOOL: "tool result"}


class Extractor(Protocol):
    generator: str

    async def extract(self, run: FinishedRun, messages: Sequence[message_pb2.Message],
                      known_keys: Sequence[str]) -> list[Fact]: ...


def _source(run: FinishedRun, cited: Sequence[message_pb2.Message]) -> Source:
    tool = any(m.role == message_pb2.ROLE_TOOL for m in cited)
    offsets = [m.offset for m in cited]
    return Source(SourceKind.TOOL_RESULT if tool else SourceKind.EXTRACTION, run.thread_id,
                  tuple(m.id for m in cited), run.run_id, min(offsets), max(offsets))


def make_fact(run: FinishedRun, key: str, content: str, kind: Kind, confidence: float,
              cited: Sequence[message_pb2.Message]) -> Fact:
    source = _source(run, cited)
    if source.kind == SourceKind.TOOL_RESULT and kind == Kind.INSTRUCTION:
        kind = Kind.OBSERVATION  # a data source never instructs the agent
    cap = rules.DEFAULT_CONFIDENCE[source.kind]
    return Fact(offline_rules.slug(key), content, kind, min(max(confidence, 0.0), cap), source)


def transcript(messages: Sequence[message_pb2.Message]) -> str:
    lines = []
    for message in messages:
        text = message.content
        for call in message.tool_calls:
            text += f"\n  [calls {call.name}({call.arguments[:500]})]"
        lines.append(f"(#{message.offset}) {_ROLES.get(message.role, 'unknown')}: {text}")
    return "\n".join(lines)[-MAX_TRANSCRIPT_CHARS:]


def parse(reply: str, run: FinishedRun, messages: Sequence[message_pb2.Message]) -> list[Fact]:
    """The model's facts, validated; what does not validate is dropped, not guessed."""
    match = re.search(r"\[.*\]", reply, re.DOTALL)
    if match is None:
        raise ValueError("the model did not return a JSON list")
    by_offset = {m.offset: m for m in messages}
    found = []
    for item in json.loads(match.group()):
        if not isinstance(item, dict):
            continue
        content = " ".join(str(item.get("content", "")).split())
        try:
            kind = Kind(str(item.get("kind")))
            confidence = float(item.get("confidence", 0.5))
            cited = [by_offset[int(o)] for o in item.get("offsets") or () if int(o) in by_offset]
        except (TypeError, ValueError):
            continue
        if kind not in EXTRACTABLE or not content or len(content) > MAX_FACT_CHARS or not cited:
            continue
        found.append(make_fact(run, str(item.get("key") or content), content, kind, confidence,
                               cited))
    return found[:MAX_FACTS]


class ModelExtractor:
    def __init__(self, model: ChatModel) -> None:
        self._model = model
        self.generator = f"{PROMPT.id}:{model.name}"

    async def extract(self, run, messages, known_keys) -> list[Fact]:
        known = ", ".join(sorted(known_keys)[:200]) or "(none)"
        text = f"{transcript(messages)}\n\nKnown keys: {known}"
        return parse(await self._model.complete(PROMPT.text, text), run, messages)


class OfflineExtractor:
    """The labelled offline fallback: ``libs.facts``' rules on the user's own words."""

    generator = offline_rules.GENERATOR

    async def extract(self, run, messages, known_keys) -> list[Fact]:
        by_offset = {m.offset: m for m in messages}
        return [make_fact(run, f.key, f.content, Kind(f.category), f.importance,
                          [by_offset[f.offset]])
                for f in offline_rules.offline_facts(messages)]
