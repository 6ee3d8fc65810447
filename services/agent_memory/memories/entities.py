"""Entities named in a text: rule-based, offline, deterministic.

What counts as an entity:

- ``name``: a run of capitalised words ("Ana Lopes", "Globex", "New York"),
  or an acronym ("AWS"), minus sentence-initial function words ("The", "We");
- ``handle``: ``@ana_lopes``; ``hashtag``: ``#billing``;
- ``quoted``: a short "double-", 'single-' or `back-quoted` term;
- ``identifier``: code-shaped words: snake_case, camelCase / PascalCase with an
  inner capital, dotted paths (``billing.invoices.next_number``), ``a::b``,
  file names (``invoice.py``).

When a utility model is configured, the projector also asks it for the names
the rules miss (lower-case product names, ...), after its transaction has
committed (:func:`model_entities`, kind ``model``).

Each entity has a display ``name`` and a ``norm`` (lower case, single
spaces, outer punctuation stripped) that queries are matched against: the
query side never extracts, it looks up its own word n-grams (:func:`query_grams`),
so a lower-case question still finds "Ana Lopes".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from libs.model import ChatModel, Prompt

PROMPT = Prompt(Path(__file__).parent / "prompts" / "entities.v1.md")

MAX_ENTITIES = 32  # per memory
MAX_WORDS = 4  # the longest entity (and query n-gram), in words
_MAX_CHARS = 80

_STOP = frozenset("""
a an and are as at be but by can could did do does for from had has have he her his how
i if in is it its let may me my no not of on or our she so that the their them then there
these they this to us was we were what when where which who why will with would you your
yes ok okay hi hello hey thanks thank please also just maybe sure well oh
monday tuesday wednesday thursday friday saturday sunday
""".split())

_WORD = r"[A-Z][\w'’-]*[\w]|[A-Z]"
_NAME = re.compile(rf"(?<![\w@#.])(?:{_WORD})(?:[ \t]+(?:{_WORD}))*")
_HANDLE = re.compile(r"(?<![\w@])@[A-Za-z0-9_][A-Za-z0-9_.-]*[A-Za-z0-9_]")
_HASHTAG = re.compile(r"(?<![\w#&])#[A-Za-z][\w-]*")
_QUOTED = re.compile(r"\"([^\"\n]{2,60})\"|“([^”\n]{2,60})”|`([^`\n]{2,60})`"
                     r"|(?<!\w)'([^'\n]{2,60})'(?!\w)")
_IDENTIFIER = re.compile(
    r"(?<![\w.@#])(?:"
    r"[A-Za-z_][\w]*(?:(?:\.|::)[A-Za-z_][\w]*)+"  # dotted paths, a::b, file.py
    r"|[A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"  # snake_case
    r"|[a-z]+(?:[A-Z][a-z0-9]*)+"  # camelCase
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"  # PascalCase
    r")(?![\w])")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)$")


@dataclass(frozen=True)
class Entity:
    norm: str
    name: str
    kind: str


def normalize(text: str) -> str:
    text = " ".join(text.lower().strip(" \t\n.,;:!?()[]{}\"'`“”‘’").split())
    return re.sub(r"['’]s$", "", text)


def extract(text: str) -> list[Entity]:
    """The entities of ``text``, first occurrence first, at most MAX_ENTITIES."""
    found: dict[str, Entity] = {}

    def add(name: str, kind: str) -> None:
        norm = normalize(name)
        if norm and len(norm) <= _MAX_CHARS and len(norm.split()) <= MAX_WORDS \
                and norm not in found and len(found) < MAX_ENTITIES:
            found[norm] = Entity(norm, name.strip(), kind)

    for match in _HANDLE.finditer(text):
        add(match.group(), "handle")
    for match in _HASHTAG.finditer(text):
        add(match.group(), "hashtag")
    for match in _QUOTED.finditer(text):
        add(next(g for g in match.groups() if g), "quoted")
    for match in _IDENTIFIER.finditer(text):
        add(match.group(), "identifier")
    for match in _NAME.finditer(text):
        for name in _names(text, match):
            add(name, "name")
    return list(found.values())


def _names(text: str, match: re.Match) -> list[str]:
    """A capitalised run, less function words (a sentence-initial "The" or "I"); a run
    broken by one is split there."""
    names: list[str] = []
    current: list[str] = []
    at_start = bool(_SENTENCE_START.search(text[:match.start()]))
    for index, word in enumerate(match.group().split()):
        stripped = word.strip("'’-")
        function_word = stripped.lower() in _STOP or (
            index == 0 and at_start and len(stripped) == 1)
        if function_word:
            if current:
                names.append(" ".join(current))
            current = []
        else:
            current.append(stripped)
    if current:
        names.append(" ".join(current))
    return [n for n in names if len(n) > 1]


def query_grams(text: str) -> list[str]:
    """Every run of 1-4 words of the query, normalised: what entity norms are matched
    against. Function words alone are left out."""
    words = [normalize(w) for w in re.split(r"\s+", text)]
    words = [w for w in words if w]
    grams: dict[str, None] = {}
    for size in range(1, MAX_WORDS + 1):
        for start in range(len(words) - size + 1):
            gram = " ".join(words[start:start + size])
            if size == 1 and gram in _STOP:
                continue
            grams[gram] = None
    return list(grams)


async def model_entities(model: ChatModel, text: str) -> list[Entity]:
    """The names the utility model finds in ``text`` (escaped, under a prompt that says
    it is data)."""
    inert = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    answer = await model.complete(PROMPT.text, f"<memory>{inert}</memory>", max_tokens=300)
    match = re.search(r"\{.*\}", answer, re.S)
    names = json.loads(match.group()).get("entities", []) if match else []
    found: dict[str, Entity] = {}
    for name in names[:MAX_ENTITIES]:
        norm = normalize(str(name))
        if norm and len(norm) <= _MAX_CHARS and len(norm.split()) <= MAX_WORDS:
            found.setdefault(norm, Entity(norm, str(name).strip(), "model"))
    return list(found.values())
