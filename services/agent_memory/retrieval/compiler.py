"""The context compiler (seed step 7): sections into a token budget, in order.

Order: blocks -> user profile -> platform rules -> tenant floors -> tenant
rules -> procedures -> workspace memories -> relevant episodes -> run summary
-> run memories. Platform rules and tenant floors (the admin rules) and the
closing receipt line are reserved first: if the budget cannot hold them the
call fails with FAILED_PRECONDITION, reason CONTEXT_BUDGET_TOO_SMALL (the
tokens they need in the metadata). Then each section takes its items in
order while they fit; an item that does not fit is dropped (and counted) and
the next, possibly shorter, one is tried.

BuildContext's relevant memories (:func:`compile_relevant`) are one section
framed as an inert block: its closing lines are reserved first, then its
items taken in order as above; with no item there is no block at all.

Tokens are counted with the journal's tokenizer (cl100k, ``libs.tokens``),
per rendered line including its newline; a section's header is charged to
it with its first item. The rendered text's token count is exactly
``tokens_used``. A line's count is remembered by the line's text: a memory
renders the same line until it (or its trust) changes, and then it is
another line, so a count is never stale.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from libs.errors import FailedPrecondition
from libs.tokens import count_tokens
from services.agent_memory.retrieval import render

SECTIONS = ("blocks", "userProfile", "platformEntries", "tenantFloors", "tenantEntries",
            "procedures", "workspaceEntries", "relevantEpisodes", "sessionSummary",
            "sessionEntries")
RESERVED = ("platformEntries", "tenantFloors")
RELEVANT = "relevantMemories"
# Lines whose token counts are remembered (a request renders up to a few hundred).
LINES_COUNTED = 8192


@dataclass(frozen=True)
class Item:
    """One thing a section may deliver: its rendered line and what it stands for."""

    line: str
    # By section: a Candidate, Scored, EpisodeRow, Procedure or the summary (text, source)
    subject: Any
    tool_data: bool = False  # rendered in the workspace section's inert tool block


@dataclass
class SectionUsage:
    name: str
    included: int = 0
    dropped: int = 0
    tokens: int = 0


@dataclass
class Compiled:
    budget: int
    sections: dict[str, list[Item]] = field(default_factory=dict)
    usage: dict[str, SectionUsage] = field(default_factory=dict)
    text: str = ""
    tokens_used: int = 0
    reserved_tokens: int = 0


@functools.lru_cache(maxsize=LINES_COUNTED)
def line_tokens(line: str) -> int:
    return count_tokens(line + "\n")


class _Section:
    """Budget bookkeeping of one section: its header is paid with its first item."""

    def __init__(self, name: str, usage: SectionUsage) -> None:
        self.name = name
        self.usage = usage
        self.plain: list[Item] = []
        self.tools: list[Item] = []

    def cost(self, item: Item) -> int:
        cost = line_tokens(item.line)
        if not self.plain and not self.tools:
            cost += line_tokens(render.HEADERS[self.name])
        if item.tool_data and not self.tools:
            cost += line_tokens(render.TOOL_DATA_OPEN) + line_tokens(render.TOOL_DATA_CLOSE)
        return cost

    def take(self, item: Item, cost: int) -> None:
        (self.tools if item.tool_data else self.plain).append(item)
        self.usage.included += 1
        self.usage.tokens += cost

    def lines(self) -> list[str]:
        if not self.plain and not self.tools:
            return []
        found = [render.HEADERS[self.name], *(i.line for i in self.plain)]
        if self.tools:
            found += [render.TOOL_DATA_OPEN, *(i.line for i in self.tools), render.TOOL_DATA_CLOSE]
        return found

    def items(self) -> list[Item]:
        return self.plain + self.tools


def compile_context(offered: Mapping[str, Sequence[Item]], budget: int,
                    receipt_id: str) -> Compiled:
    usage = {name: SectionUsage(name) for name in SECTIONS}
    sections = {name: _Section(name, usage[name]) for name in SECTIONS}
    closing = render.receipt(receipt_id)
    reserved = count_tokens(closing)
    for name in RESERVED:
        for item in offered.get(name, ()):
            cost = sections[name].cost(item)
            sections[name].take(item, cost)
            reserved += cost
    if reserved > budget:
        raise FailedPrecondition(
            f"the token budget ({budget}) cannot hold the platform rules and tenant floors"
            f" ({reserved} tokens with the receipt line)", reason="CONTEXT_BUDGET_TOO_SMALL",
            metadata={"token_budget": str(budget), "required_tokens": str(reserved)})
    left = budget - reserved
    for name in SECTIONS:
        if name in RESERVED:
            continue
        section = sections[name]
        for item in offered.get(name, ()):
            cost = section.cost(item)
            if cost <= left:
                section.take(item, cost)
                left -= cost
            else:
                usage[name].dropped += 1
    lines = [line for name in SECTIONS for line in sections[name].lines()]
    text = "\n".join([*lines, closing])
    return Compiled(budget=budget, sections={n: s.items() for n, s in sections.items()},
                    usage=usage, text=text, tokens_used=budget - left,
                    reserved_tokens=reserved)


def compile_relevant(offered: Sequence[Item], budget: int) -> Compiled:
    """The ``<relevant_memories>`` block: its header paid with its first item, its
    closing tag and disclaimer reserved."""
    usage = SectionUsage(RELEVANT)
    section = _Section(RELEVANT, usage)
    reserved = line_tokens(render.RELEVANT_CLOSE) + count_tokens(render.RELEVANT_DISCLAIMER)
    left = budget - reserved
    for item in offered:
        cost = section.cost(item)
        if cost <= left:
            section.take(item, cost)
            left -= cost
        else:
            usage.dropped += 1
    lines = section.lines()
    if not lines:
        return Compiled(budget=budget, sections={RELEVANT: []}, usage={RELEVANT: usage})
    return Compiled(budget=budget, sections={RELEVANT: section.items()}, usage={RELEVANT: usage},
                    text="\n".join([*lines, render.RELEVANT_CLOSE, render.RELEVANT_DISCLAIMER]),
                    tokens_used=budget - left, reserved_tokens=reserved)
