"""BM25 sparse vectors as Qdrant's engine computes them, without the engine.

Qdrant's BM25 with its English defaults: split the text on every character that is
neither alphabetic nor numeric, lower-case each token, drop English stop words,
Snowball-stem the rest; a token's index is its murmur3 hash (seed 0) as a signed
32-bit integer, made positive; a document weighs each distinct token by BM25
term-frequency saturation, a query gives each distinct token 1.0. Qdrant applies the
IDF (``Modifier.IDF``).

Both index paths of agent memory use it, so their vectors are the same; it exists
because the production image leaves the embedded engines (``qdrant-edge-py``
among them) out. Against ``qdrant_edge.Bm25`` a test holds every number equal with
stemming off; with it on, the stems are Snowball's current English (PyStemmer, as
transcript search uses) where qdrant-edge carries an older revision, so a few words
differ ("added" is "add" here, "ad" there).
"""

from __future__ import annotations

import array
from collections import Counter
from dataclasses import dataclass
from typing import NamedTuple

import mmh3
import regex
import Stemmer

# Qdrant's English stop words (lib/segment/.../stop_words/english.rs), NLTK's list.
STOP_WORDS = frozenset("""
i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
yourselves he him his himself she she's her hers herself it it's its itself they them their
theirs themselves what which who whom this that that'll these those am is are was were be been
being have has had having do does did doing a an the and but if or because as until while of at
by for with about against between into through during before after above below to from up down
in out on off over under again further then once here there when where why how all any both
each few more most other some such no nor not only own same so than too very s t can will just
don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't
doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't
needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn wouldn't
""".split())

# Rust's char::is_alphanumeric: the Unicode Alphabetic property or a Number category.
_SEPARATORS = regex.compile(r"[^\p{Alphabetic}\p{N}]+")


class SparseEmbedding(NamedTuple):
    indices: list[int]
    values: list[float]


@dataclass(frozen=True)
class Bm25Config:
    """Qdrant's ``Bm25Config``, the part of it used here."""

    k: float = 1.2
    b: float = 0.75
    avg_len: float = 256.0
    language: str = "english"  # stop words are English whatever this says; it picks the stemmer
    stemming: bool = True


class Bm25:
    def __init__(self, config: Bm25Config | None = None) -> None:
        self.config = config or Bm25Config()
        self._stemmer = Stemmer.Stemmer(self.config.language) if self.config.stemming else None

    def tokens(self, text: str) -> list[str]:
        words = (word.lower() for word in _SEPARATORS.split(text) if word)
        kept = [word for word in words if word not in STOP_WORDS]
        return self._stemmer.stemWords(kept) if self._stemmer else kept

    def embed_query(self, text: str) -> SparseEmbedding:
        indices = sorted({_token_id(token) for token in self.tokens(text)})
        return SparseEmbedding(indices, [1.0] * len(indices))

    def embed_document(self, text: str) -> SparseEmbedding:
        tokens = self.tokens(text)
        k, b, avg_len = self.config.k, self.config.b, self.config.avg_len
        norm = k * (1 - b + b * len(tokens) / avg_len)
        weights = {_token_id(token): count * (k + 1) / (norm + count)
                   for token, count in Counter(tokens).items()}
        indices = sorted(weights)
        # Qdrant's weights are 32-bit floats.
        return SparseEmbedding(indices, list(array.array("f", (weights[i] for i in indices))))


def _token_id(token: str) -> int:
    return abs(mmh3.hash(token, 0, signed=True))
