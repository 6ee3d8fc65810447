"""Which cells a query probes (services/search/cells.py), on hand-made centroids."""

from __future__ import annotations

import numpy
import pytest

from libs.embeddings import LocalEmbedder
from services.search import cells

# Six unit centroids in the plane at 0, 10, 20, 30, 40 and 50 degrees: a query at 0
# degrees has them in that order of nearness.
ANGLES = numpy.radians([0, 10, 20, 30, 40, 50])
CENTROIDS = numpy.stack([numpy.cos(ANGLES), numpy.sin(ANGLES)], axis=1).astype(numpy.float32)
QUERY = [1.0, 0.0]


def test_each_vector_is_filed_in_its_nearest_centroids_cell():
    partition = cells.Cells(CENTROIDS)
    assert partition.of([[1, 0], [numpy.cos(0.36), numpy.sin(0.36)], [0, 1]]) == [0, 2, 5]


@pytest.mark.parametrize(("probes", "sizes", "budget", "expected"), [
    (3, {c: 10 for c in range(6)}, 1000, [0, 1, 2]),  # the nearest three that hold messages
    (3, {0: 10, 2: 10, 4: 10, 5: 10}, 1000, [0, 1, 2, 3, 4]),  # empty cells passed are read
    (6, {c: 10 for c in range(6)}, 35, [0, 1, 2]),  # stops before the budget is exceeded
    (6, {0: 500, 1: 10}, 100, [0]),  # the nearest is read whatever its size
    (2, {}, 100, [0, 1, 2, 3, 4, 5]),  # nothing counted yet: every cell, none skipped
])
def test_a_query_probes_its_nearest_cells_within_a_budget(probes, sizes, budget, expected):
    assert cells.Cells(CENTROIDS, probes).probed(QUERY, sizes, budget) == expected


def test_an_embedder_without_trained_centroids_has_one_cell():
    class Endpoint:
        name, dimensions = "text-embedding-3-small", 1536

    partition = cells.for_embedder(Endpoint())
    assert (partition.count, partition.name) == (1, "c1")
    assert partition.of([[0.1] * 1536] * 3) == [0, 0, 0]
    assert partition.probed([0.1] * 1536, {}, 10) == [0]


def test_the_local_models_centroids_are_checked_and_unit_length():
    partition = cells.for_embedder(LocalEmbedder)
    assert partition.count == 256 and partition.probes == cells.PROBES
    norms = numpy.linalg.norm(partition._centroids, axis=1)
    assert numpy.allclose(norms, 1, atol=1e-2)
