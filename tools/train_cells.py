"""Train the dense leg's cells for the local model; write their centroids.

    python -m tools.train_cells --data DIR

DIR holds ``Synthetic-Persona-Chat_valid.csv`` from Synthetic-Persona-Chat
(Jandaghi et al., 2023; CC BY 4.0;
https://github.com/google-research-datasets/Synthetic-Persona-Chat, ``data/``):
about 20,000 distinct turns of open-domain conversation, neither REALTALK nor
LoCoMo, the search benchmarks. Each turn of three words or more is embedded as
a document by the local model; spherical k-means (k-means++ seeding from a
fixed seed, then Lloyd's iterations on cosine similarity) finds ``CELLS``
centroids, written as float16 to ``services/search/cells/<model>.npy``. The
same data gives the same centroids. The cells' sizes on the training turns
are printed: a query's probes read about ``probes / CELLS`` of a scope only if
the cells are balanced.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
from pathlib import Path

import numpy

from libs.embeddings import LocalEmbedder
from services.search import cells
from testkit.persona_chat import embedded, turns

CELLS = 256
ITERATIONS = 40
SEED = 20261130


def spherical_kmeans(points: numpy.ndarray, count: int) -> numpy.ndarray:
    rng = numpy.random.default_rng(SEED)
    centroids = [points[rng.integers(len(points))]]
    distance = 1 - points @ centroids[0]
    for _ in range(count - 1):  # k-means++: far points are likelier seeds
        weights = numpy.maximum(distance, 0) ** 2
        chosen = points[rng.choice(len(points), p=weights / weights.sum())]
        centroids.append(chosen)
        distance = numpy.minimum(distance, 1 - points @ chosen)
    centers = numpy.asarray(centroids)
    for _ in range(ITERATIONS):
        assigned = numpy.argmax(points @ centers.T, axis=1)
        for cell in range(count):
            members = points[assigned == cell]
            if len(members):
                total = members.sum(axis=0)
                centers[cell] = total / numpy.linalg.norm(total)
    return centers


def main(data: Path) -> None:
    texts = turns(data / "Synthetic-Persona-Chat_valid.csv")
    points = asyncio.run(embedded(texts))
    centers = spherical_kmeans(points, CELLS).astype(numpy.float16)
    out = cells.centroids_path(LocalEmbedder)
    out.parent.mkdir(exist_ok=True)
    numpy.save(out, centers)
    sizes = numpy.bincount(numpy.argmax(points @ centers.astype(numpy.float32).T, axis=1),
                           minlength=CELLS)
    print(f"{CELLS} cells from {len(texts):,} turns; turns per cell: min {sizes.min()},"
          f" median {int(numpy.median(sizes))}, max {sizes.max()}")
    print(f"wrote {out} (sha256 {hashlib.sha256(out.read_bytes()).hexdigest()})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="a folder with Synthetic-Persona-Chat_valid.csv")
    main(parser.parse_args().data)
