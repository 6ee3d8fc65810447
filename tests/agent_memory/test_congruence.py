"""The two index adapters answer the same scenarios with the same ranked ids."""

from __future__ import annotations

import random
from uuid import UUID

from libs.embeddings import LocalEmbedder
from services.agent_memory.index import IndexFilter, IndexPoint, payload, sparse
from services.agent_memory.index.edge import EdgeIndex
from tests.agent_memory.conftest import qdrant_local_index

TEXTS = [
    "Prefers tea over coffee in the morning", "Uses PostgreSQL for the billing service",
    "Deploys happen on Tuesdays", "Has a cat named Miso", "Lives in Lisbon near the river",
    "Speaks Portuguese and English", "Allergic to peanuts", "Runs marathons in spring",
    "The API gateway is written in Go", "Invoices are numbered by year and sequence",
    "Likes jazz and plays the piano", "Works remotely three days a week",
    "The team uses Kafka for events", "Dark mode everywhere", "Reads science fiction",
    "Backs up the database nightly to S3", "On call every fourth week",
    "Prefers short answers with code", "Drinks oat milk lattes", "Uses Neovim",
]
SCOPES = ["private", "user"]
QUERIES = ["what does the user drink", "database backups", "pets", "programming languages",
           "when are deploys", "music", "where do they live", "event streaming"]


async def _points(embedder):
    rng = random.Random(7)
    owners = ["", "", "alice", "bob"]
    points = []
    vectors = await embedder.embed_documents(TEXTS)
    for i, (text, vector) in enumerate(zip(TEXTS, vectors, strict=True)):
        owner = rng.choice(owners)
        points.append(IndexPoint(
            id=UUID(int=i + 1), dense=vector, sparse=sparse.document_vector(text),
            payload=payload(scope=SCOPES[i % len(SCOPES)] if owner else
                            ["agent", "account"][i % 2],
                            agent_id="" if i % 7 == 0 else ("helper" if i % 5 else "other"),
                            owner_user_id=owner,
                            kind=["user_profile", "project_fact", "observation"][i % 3],
                            expires_at=None if i % 4 else 1000.0),
        ))
    return points


async def test_same_ranked_ids_on_edge_and_on_qdrant_client(tmp_path):
    embedder = LocalEmbedder()
    points = await _points(embedder)
    edge, server = EdgeIndex(tmp_path), qdrant_local_index()
    try:
        for index in (edge, server):
            await index.ensure_collection("c", embedder.dimensions)
            await index.upsert("c", points)
        filters = [IndexFilter("helper", None, 2000.0), IndexFilter("helper", "alice", 2000.0),
                   IndexFilter("helper", "bob", 500.0, ("project_fact", "observation")),
                   IndexFilter("other", "alice", 2000.0)]
        compared = keyword_hits = 0
        for query in QUERIES:
            dense = await embedder.embed_query(query)
            for where in filters:
                a = await edge.query("c", dense, sparse.query_vector(query), where, 8)
                b = await server.query("c", dense, sparse.query_vector(query), where, 8)
                assert [h.id for h in a] == [h.id for h in b], (query, where)
                assert [round(h.score, 5) for h in a] == [round(h.score, 5) for h in b]
                a = await edge.query_sparse("c", sparse.query_vector(query), where, 8)
                b = await server.query_sparse("c", sparse.query_vector(query), where, 8)
                keyword_hits += len(a)  # the keyword leg: BM25 alone
                # Ties in BM25 may come back in either order: compare the scores in rank
                # order and the ids of each score.
                assert [round(h.score, 4) for h in a] == [round(h.score, 4) for h in b]
                assert ({(round(h.score, 4), h.id) for h in a}
                        == {(round(h.score, 4), h.id) for h in b}), (query, where)
                compared += 1
        assert compared == len(QUERIES) * len(filters)
        assert keyword_hits > 0  # a few queries share a stemmed word with a memory
        await edge.delete("c", [UUID(int=2)])
        await server.delete("c", [UUID(int=2)])
        assert await edge.count("c") == await server.count("c") == len(TEXTS) - 1
    finally:
        await edge.close()
        await server.close()
        await embedder.close()


async def test_a_collection_of_the_previous_release_gains_the_payload_indexes(tmp_path):
    import qdrant_edge

    old = qdrant_edge.EdgeShard.create(str(tmp_path / "c"), qdrant_edge.EdgeConfig(
        vectors={"dense": qdrant_edge.EdgeVectorParams(size=4,
                                                       distance=qdrant_edge.Distance.Cosine)},
        payload_memory=qdrant_edge.Memory.Cached))
    old.update(qdrant_edge.UpdateOperation.create_field_index(
        "agent_id", qdrant_edge.PayloadSchemaType.Keyword))
    old.close()
    edge = EdgeIndex(tmp_path)
    try:
        await edge.ensure_collection("c", 4)
        shard = await edge._shard("c")
        assert set(shard.info().payload_schema) >= {"scope", "kind", "agent_id",
                                                    "owner_user_id", "expires_at"}
    finally:
        await edge.close()
