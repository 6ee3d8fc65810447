"""BM25 sparse vectors, computed locally; Qdrant applies the IDF (Modifier.IDF).

Term weights are BM25 term-frequency saturation (k1 1.2, b 0.75, average
length 256) over lower-cased, stop-word-filtered, Snowball-stemmed English
tokens, the same shape as Qdrant's own BM25 model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@functools.cache
def _model():
    from libs.bm25 import Bm25, Bm25Config

    return Bm25(Bm25Config(k=1.2, b=0.75, avg_len=256.0, language="english"))


def document_vector(text: str) -> SparseVector:
    vector = _model().embed_document(text)
    return SparseVector(list(vector.indices), list(vector.values))


def query_vector(text: str) -> SparseVector:
    vector = _model().embed_query(text)
    return SparseVector(list(vector.indices), list(vector.values))
