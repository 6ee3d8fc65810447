"""How much of the exact nearest neighbours the dense leg's cells keep.

    python -m bench.dense_cells --data DIR [--queries 500]

DIR holds ``Synthetic-Persona-Chat_test.csv`` (Synthetic-Persona-Chat, CC BY
4.0; the cells were trained on its ``valid`` split, never on this one). Its
turns are embedded by the local model as documents; ``--queries`` of them,
chosen by a fixed rule, are embedded again as queries (bge's instruction
prefix) and taken out of the documents. For each probe count, recall@20 is the
fraction of a query's exact top 20 (dot product over every document) found
when only the query's nearest cells are ranked (no budget), averaged over
queries, with the fraction of documents those cells hold (what a search reads).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import numpy

from libs.embeddings import LocalEmbedder
from services.search import cells
from testkit.persona_chat import embedded, turns

TOP = 20


async def embedded_queries(texts: list[str]) -> numpy.ndarray:
    embedder = LocalEmbedder(cache_size=0)
    try:
        return numpy.asarray([await embedder.embed_query(t) for t in texts], dtype=numpy.float32)
    finally:
        await embedder.close()


def main(data: Path, queries: int) -> None:
    texts = turns(data / "Synthetic-Persona-Chat_test.csv")
    chosen = set(range(0, len(texts), max(1, len(texts) // queries))[:queries])
    documents = asyncio.run(embedded([t for i, t in enumerate(texts) if i not in chosen]))
    asked = asyncio.run(embedded_queries([texts[i] for i in sorted(chosen)]))
    partition = cells.for_embedder(LocalEmbedder)
    filed = numpy.asarray(partition.of(documents))
    exact = numpy.argsort(-(asked @ documents.T), axis=1, kind="stable")[:, :TOP]
    print(f"{len(documents):,} documents, {len(asked)} queries, {partition.count} cells")
    sizes = dict(enumerate(numpy.bincount(filed, minlength=partition.count).tolist()))
    for probes in (1, 4, 8, 16, 32, 64):
        probed = partition.with_probes(probes)
        found = read = 0.0
        for query, best in zip(asked, exact, strict=True):
            inside = numpy.isin(filed, probed.probed(query, sizes, len(documents)))
            found += numpy.isin(best, numpy.flatnonzero(inside)).mean()
            read += inside.mean()
        print(f"probes {probes:3d}: recall@{TOP} {found / len(asked):.3f},"
              f" documents read {read / len(asked):.1%}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="a folder with Synthetic-Persona-Chat_test.csv")
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args()
    main(args.data, args.queries)
