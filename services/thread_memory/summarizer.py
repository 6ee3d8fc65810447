"""Progressive summaries: the previous summary plus only the messages after it.

``ModelSummarizer`` asks the configured model (prompt ``prompts/summary.v1.md``);
``OfflineSummarizer`` is the deterministic fallback used when no model is
configured: extractive, labelled ``offline-extractive-v1`` in the summary's
generator field and in the logs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from agentmemory.common.v1 import message_pb2

from libs import tokens
from libs.model import ChatModel, Prompt

PROMPT = Prompt(Path(__file__).parent / "prompts" / "summary.v1.md")
OFFLINE_GENERATOR = "offline-extractive-v1"
OFFLINE_BUDGET_TOKENS = 600

_ROLE = {message_pb2.ROLE_USER: "User", message_pb2.ROLE_ASSISTANT: "Assistant",
         message_pb2.ROLE_SYSTEM: "System", message_pb2.ROLE_TOOL: "Tool"}


class Summarizer(Protocol):
    generator: str

    async def summarize(self, previous: str | None,
                        messages: Sequence[message_pb2.Message]) -> str: ...


def transcript(messages: Sequence[message_pb2.Message], per_message_chars: int = 4000) -> str:
    """The messages as the model reads them (reasoning text is never included)."""
    lines = []
    for message in messages:
        text = message.content.strip()
        if message.tool_calls:
            text += " " + " ".join(f"[called {c.name}]" for c in message.tool_calls)
        lines.append(f"{_ROLE.get(message.role, 'Message')} (#{message.offset}): "
                     f"{text[:per_message_chars]}")
    return "\n".join(lines)


def summary_request(previous: str | None, messages: Sequence[message_pb2.Message]) -> str:
    return (f"<previous_summary>\n{previous or ''}\n</previous_summary>\n"
            f"<new_messages>\n{transcript(messages)}\n</new_messages>")


class ModelSummarizer:
    def __init__(self, model: ChatModel) -> None:
        self._model = model
        self.generator = f"{model.name} ({PROMPT.id})"

    async def summarize(self, previous, messages) -> str:
        return await self._model.complete(PROMPT.text, summary_request(previous, messages),
                                          max_tokens=600)


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _first_sentence(text: str, limit: int = 200) -> str:
    first = _SENTENCE.split(" ".join(text.split()), maxsplit=1)[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


class OfflineSummarizer:
    """Extractive and deterministic: the previous summary, then the first sentence of
    each new user and assistant message, trimmed from the oldest to a token budget."""

    generator = OFFLINE_GENERATOR

    async def summarize(self, previous, messages) -> str:
        lines = [line for line in (previous or "").splitlines() if line.strip()]
        for message in messages:
            if message.role in (message_pb2.ROLE_USER, message_pb2.ROLE_ASSISTANT) and \
                    message.content.strip():
                lines.append(f"{_ROLE[message.role]}: {_first_sentence(message.content)}")
        while len(lines) > 1 and tokens.count_tokens("\n".join(lines)) > OFFLINE_BUDGET_TOKENS:
            lines.pop(0)
        return "\n".join(lines)
