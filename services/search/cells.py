"""Cells: a fixed partition of the embedding space, so that ranking a large
scope reads only the messages near the query (an inverted-file index).

Every message is filed in the cell of its nearest centroid; the vectors table
is keyed (account, agent, cell, thread, offset), so one cell of a scope is one
primary-key range. A large scope is ranked within the query's nearest cells:
at most ``PROBES`` that hold messages, and no more than about a budget of
messages (``SEARCH_DENSE_ROWS_BUDGET``), so a query in the crowded part of a scope
reads fewer cells (at 256 balanced cells, 16 probes read a sixteenth of the
scope). Neighbours across a cell boundary can be missed;
``bench/dense_cells.py`` measures how many.

The local model's centroids were trained offline on public conversation
(``tools/train_cells.py``) and ship beside this module, checked by their
sha256. An embedder without trained centroids (an OpenAI-compatible endpoint,
whose model we do not know) has one cell, so its ranking reads the whole scope
as it did before cells. The centroids are part of the table's name: other
centroids make another table, never a mix of two partitions.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from libs.embeddings import Embedder

PROBES = 16
_CENTROIDS_SHA256 = {
    "local-bge-small-en": "01edc244867febce3deb706f195293a93b68469dab51c0bf75ae8a40e6f0212e",
}


def slug(embedder: type[Embedder] | Embedder) -> str:
    """The embedder's name as an identifier (file and table names)."""
    return re.sub(r"[^a-z0-9]+", "_", embedder.name.lower()).strip("_")


def centroids_path(embedder: type[Embedder] | Embedder) -> Path:
    return Path(__file__).parent / "cells" / f"{slug(embedder)}.npy"


class Cells:
    """The centroids of one embedder (unit vectors), or none: a single cell."""

    def __init__(self, centroids=None, probes: int = PROBES) -> None:
        self._centroids = centroids  # numpy float32 (cells x dimensions) or None
        self.count = 1 if centroids is None else len(centroids)
        self.probes = min(probes, self.count)
        digest = b"" if centroids is None else centroids.tobytes()
        self.name = f"c{self.count}" + (
            "" if centroids is None else hashlib.blake2b(digest, digest_size=3).hexdigest())

    def with_probes(self, probes: int) -> Cells:
        return Cells(self._centroids, probes)

    def of(self, vectors: Sequence[Sequence[float]]) -> list[int]:
        """Each vector's cell: its nearest centroid."""
        if self._centroids is None:
            return [0] * len(vectors)
        import numpy

        similarities = numpy.asarray(vectors, dtype=numpy.float32) @ self._centroids.T
        return [int(c) for c in numpy.argmax(similarities, axis=1)]

    def probed(self, vector: Sequence[float], sizes: Mapping[int, int],
               budget: int) -> list[int]:
        """The cells to read for ``vector``, given how many messages each holds in the
        scope (``sizes``): nearest first, up to ``probes`` cells that hold messages and
        about ``budget`` messages in all (the nearest is always read). Empty cells passed
        on the way cost nothing and are read too: messages filed there since ``sizes``
        was counted are not missed."""
        if self._centroids is None:
            return [0]
        import numpy

        similarities = self._centroids @ numpy.asarray(vector, dtype=numpy.float32)
        chosen, held, rows = [], 0, 0
        for cell in numpy.argsort(-similarities, kind="stable").tolist():
            size = sizes.get(cell, 0)
            if size:
                if held and (held == self.probes or rows + size > budget):
                    break
                held, rows = held + 1, rows + size
            chosen.append(cell)
        return chosen


@functools.cache
def _trained(path: Path, sha256: str):
    import numpy

    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    if actual != sha256:
        raise RuntimeError(f"{path} has sha256 {actual}, expected {sha256}: restore it from the "
                           "release (python -m tools.train_cells rebuilds it)")
    return numpy.load(path).astype(numpy.float32)


def for_embedder(embedder: Embedder, probes: int = PROBES) -> Cells:
    """The trained cells of ``embedder``'s model, or a single cell if it has none."""
    sha256 = _CENTROIDS_SHA256.get(embedder.name)
    if sha256 is None:
        return Cells(None, probes)
    return Cells(_trained(centroids_path(embedder), sha256), probes)
