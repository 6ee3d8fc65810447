"""The text analyzer shared by indexing and querying, and snippet marking.

Terms: lower-cased word tokens, English stop words removed, Snowball-stemmed
(PyStemmer), so "deploying", "deploys" and "deployed" all match "deploy".
ClickHouse stores and compares each term as a 64-bit hash of its stem
(:func:`term_ids`): integer arrays scan several times faster than strings.
"""

from __future__ import annotations

import functools
import hashlib
import re

_WORD = re.compile(r"\w+", re.UNICODE)
STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
""".split())
MAX_TERM_CHARS = 40


@functools.cache
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def terms(text: str) -> list[str]:
    """Every term of ``text`` in order, repeats kept (term frequency matters)."""
    words = [w for w in _WORD.findall(text.lower()) if w not in STOP_WORDS
             and len(w) <= MAX_TERM_CHARS]
    return _stemmer().stemWords(words)


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, in order."""
    return list(dict.fromkeys(terms(text)))


def term_id(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "big")


def term_ids(stems: list[str]) -> list[int]:
    return [term_id(t) for t in stems]


def snippet(content: str, wanted: list[str], width: int = 240) -> str:
    """A passage of ``content`` around the first match, matched words marked **like this**."""
    wanted_set = set(wanted)
    matches = [m for m in _WORD.finditer(content)
               if _stemmer().stemWord(m.group().lower()) in wanted_set
               and m.group().lower() not in STOP_WORDS]
    if matches:
        start = max(0, matches[0].start() - width // 3)
    else:
        start = 0
    end = min(len(content), start + width)
    if start > 0:
        space = content.find(" ", start)
        start = space + 1 if 0 <= space < matches[0].start() else start
    parts, cursor = [], start
    for match in matches:
        if match.start() < start or match.end() > end:
            continue
        parts += [content[cursor:match.start()], f"**{match.group()}**"]
        cursor = match.end()
    parts.append(content[cursor:end])
    text = "".join(parts).replace("\n", " ")
    return ("…" if start > 0 else "") + text + ("…" if end < len(content) else "")
