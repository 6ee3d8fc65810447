"""Synthetic-Persona-Chat's turns (Jandaghi et al., 2023; CC BY 4.0), read from a checkout.

https://github.com/google-research-datasets/Synthetic-Persona-Chat, ``data/``: the
``valid`` split trains the dense leg's cells (``tools/train_cells.py``), the ``test``
split evaluates them (``bench/dense_cells.py``) and can stand in for chat messages in
``bench/search_bench.py --chat``. Nothing of it is copied into the repository.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy

from libs.embeddings import LocalEmbedder

BATCH = 256


def turns(path: Path) -> list[str]:
    """Every distinct turn of three words or more, in file order."""
    seen: dict[str, None] = {}
    with path.open(newline="") as file:
        for row in csv.DictReader(file):
            for line in row["Best Generated Conversation"].splitlines():
                text = re.sub(r"^User [12]:\s*", "", line).strip()
                if len(text.split()) >= 3:
                    seen.setdefault(text, None)
    return list(seen)


async def embedded(texts: list[str]) -> numpy.ndarray:
    """``texts`` embedded as documents by the local model, with progress on stdout."""
    embedder = LocalEmbedder(cache_size=0)
    try:
        vectors = []
        for start in range(0, len(texts), BATCH):
            vectors += await embedder.embed_documents(texts[start:start + BATCH])
            print(f"\rembedded {len(vectors):,} of {len(texts):,}", end="", flush=True)
        print()
        return numpy.asarray(vectors, dtype=numpy.float32)
    finally:
        await embedder.close()
