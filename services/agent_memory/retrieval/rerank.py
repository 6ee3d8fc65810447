"""Assisted mode: the utility model parses the query and scores candidates 0-10.

Both are optional help: when no model is configured the call says so
(reranker status ``unavailable``) and the deterministic result stands; when
the model fails or answers nonsense, status ``failed`` and the same. Memory
text goes to the model escaped, inside numbered lines, under a prompt that
says it is data.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from libs.model import ChatModel, Prompt
from services.agent_memory.memories.rules import Kind
from services.agent_memory.retrieval.render import escape

logger = logging.getLogger(__name__)

RERANK_PROMPT = Prompt(Path(__file__).parent / "prompts" / "rerank.v1.md")
QUERY_PROMPT = Prompt(Path(__file__).parent / "prompts" / "query.v1.md")
RERANK_LIMIT = 20  # candidates sent to the model; the rest keep their order after them


@dataclass(frozen=True)
class ParsedQuery:
    entities: list[str] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    kinds: list[Kind] = field(default_factory=list)


def _json(text: str):
    match = re.search(r"\{.*\}", text, re.S)
    if match is None:
        raise ValueError("no JSON object in the answer")
    return json.loads(match.group())


async def parse_query(model: ChatModel, query: str) -> ParsedQuery:
    answer = _json(await model.complete(QUERY_PROMPT.text, f"<query>{escape(query)}</query>",
                                        max_tokens=300))
    kinds = [Kind(k) for k in answer.get("kinds", []) if k in Kind.__members__.values()]
    return ParsedQuery([str(e) for e in answer.get("entities", [])][:10],
                       [str(k) for k in answer.get("keywords", [])][:20], kinds)


async def scores(model: ChatModel, query: str, texts: list[str]) -> list[float]:
    """A 0-10 score per text, in order."""
    lines = "\n".join(f"[{i}] {escape(t)}" for i, t in enumerate(texts, start=1))
    answer = _json(await model.complete(
        RERANK_PROMPT.text, f"<query>{escape(query)}</query>\n<candidates>\n{lines}\n</candidates>",
        max_tokens=20 + 8 * len(texts)))
    given = answer["scores"]
    found = []
    for i in range(1, len(texts) + 1):
        value = float(given[str(i)])
        if not 0 <= value <= 10:
            raise ValueError(f"score {value} outside 0-10")
        found.append(value)
    return found
