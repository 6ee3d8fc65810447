"""The dense leg and hybrid ranking, on chDB and on a ClickHouse server, with the real
local embedder (bge-small-en); the loopback model stands in for an embeddings endpoint."""

from __future__ import annotations

import asyncio
import socket
import time

import grpc
import pytest
from agentmemory.search.v1 import search_service_pb2 as pb
from grpc_health.v1 import health_pb2, health_pb2_grpc

from libs import clients
from libs.identity import parse_principal
from services.search import dense, fusion, tenancy
from services.search import keyword as keyword_leg
from services.search.app import EMBEDDINGS_HEALTH
from services.search.terms import terms
from testkit.journal_client import message, principal
from tests.search.conftest import HYBRID, KEYWORD, search_env, start_search
from tests.search.corpus import THREADS
from tests.search.test_search import load_corpus

TARGET = "Our trip to Porto was cancelled because of the storm."
PARAPHRASE = "journey scrapped owing to bad weather"  # no stem in common with any message


async def ids(search, query: str, mode: int, **kwargs) -> list[str]:
    reply = await search.search(query, summarize=False, mode=mode, **kwargs)
    return [h.message_id for h in reply.hits]


async def legs(search, query: str, who=None, depth: int = 20):
    """Each leg's ranking of ``query`` on its own, straight from the searcher."""
    searcher = search.service.searcher
    params = tenancy.parameters(parse_principal(who or principal()))
    keyword = await search.search(query, summarize=False, mode=KEYWORD, limit=depth, who=who)
    vector = await searcher.dense.embed_query(query)
    ranked = await searcher.dense.ranked(params, vector, False, depth, scope_size=1)
    return [(h.thread_id, h.offset) for h in keyword.hits], [r.key for r in ranked]


def test_reciprocal_rank_fusion_by_hand():
    fused = fusion.reciprocal_rank([["a", "b", "c"], ["c", "d", "a"]], k=60)
    expected = {"a": 1 / 61 + 1 / 63, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 62}
    assert [key for key, _ in fused] == ["a", "c", "b", "d"]  # ties keep first-named order
    assert all(score == pytest.approx(expected[key], abs=1e-15) for key, score in fused)
    assert fusion.reciprocal_rank([[], ["x"]], k=10) == [("x", 1 / 11)]


async def test_dense_leg_finds_a_paraphrase_bm25_misses(search):
    await load_corpus(search)
    await search.journal.append("weekend", [message("porto", TARGET)])
    await search.caught_up()
    assert await ids(search, PARAPHRASE, KEYWORD) == []
    assert (await legs(search, PARAPHRASE))[1][0] == ("weekend", 1)
    # Hybrid: second, after a longer message (the length prior, see fusion).
    assert "porto" in (await ids(search, PARAPHRASE, HYBRID))[:2]
    # BM25 finds another message ("holidays") but not this one; hybrid finds both.
    keyword = await ids(search, "holiday scrapped by a hurricane", KEYWORD)
    assert keyword and "porto" not in keyword
    hybrid = await ids(search, "holiday scrapped by a hurricane", HYBRID)
    assert keyword[0] in hybrid[:3] and "porto" in hybrid[:3]


async def test_hybrid_order_is_the_reciprocal_rank_fusion_of_the_legs(search):
    """Fused score = sum of 1 / (10 + rank), times length / (length + average length),
    lengths in terms (the analyzer's), the average over the caller's scope."""
    await load_corpus(search)
    lengths = {(thread, offset): len(terms(text))
               for thread, turns in THREADS.items()
               for offset, (_, text) in enumerate(turns, start=1)}  # offsets count from 1
    average = sum(lengths.values()) / len(lengths)
    for query in ("refunds currency invoice", "when do we deploy to production",
                  "customer database backups"):
        keyword, vectors = await legs(search, query)
        assert keyword and vectors and keyword != vectors  # the legs disagree somewhere
        scores: dict[tuple[str, int], float] = {}
        for leg in (keyword, vectors):
            for rank, key in enumerate(leg, start=1):
                scores[key] = scores.get(key, 0.0) + 1 / (10 + rank)
        scores = {key: s * lengths[key] / (lengths[key] + average) for key, s in scores.items()}
        reply = await search.search(query, summarize=False, mode=HYBRID, limit=20)
        hybrid = [((h.thread_id, h.offset), h.score) for h in reply.hits]
        assert len(hybrid) == 20 and not reply.fallback
        assert [score for _, score in hybrid] == sorted((s for _, s in hybrid), reverse=True)
        assert all(score == pytest.approx(scores[key], abs=1e-12) for key, score in hybrid)
        best = sorted(scores.values(), reverse=True)[:20]
        assert [score for _, score in hybrid] == pytest.approx(best, abs=1e-12)
        # BM25 from the postings (as in a large scope): every length comes from the fetch.
        search.service.searcher.keyword.small_scope_terms = 0
        again = await search.search(query, summarize=False, mode=HYBRID, limit=20)
        search.service.searcher.keyword.small_scope_terms = keyword_leg.SMALL_SCOPE_TERMS
        assert [((h.thread_id, h.offset), h.score) for h in again.hits] == hybrid


async def test_both_engines_rank_the_same_in_both_modes(local_journal, tmp_path,
                                                        clickhouse_server):
    queries = ["refunds currency invoice", "when do we deploy to production", PARAPHRASE,
               "holiday scrapped by a hurricane", "interview loop"]
    results = {}
    for engine in ("chdb", "server"):
        env = search_env(local_journal, engine, tmp_path / engine, clickhouse_server)
        async for search in start_search(env, local_journal):
            # chDB computes bitCount and dotProduct; ClickHouse 18.16 has neither.
            assert search.service.searcher.dense.spelled is (
                dense.NATIVE if engine == "chdb" else dense.PORTABLE)
            if engine == "chdb":
                await load_corpus(search)
                await search.journal.append("weekend", [message("porto", TARGET)])
            await search.caught_up()
            results[engine] = [
                [(h.thread_id, h.message_id, round(h.score, 9))
                 for h in (await search.search(q, summarize=False, mode=mode, limit=15)).hits]
                for q in queries for mode in (KEYWORD, HYBRID)]
            exact = [await legs(search, q) for q in queries]
            dense_leg = search.service.searcher.dense
            dense_leg.exact_up_to = -1  # every scope takes two stages
            dense_leg.cells = dense_leg.cells.with_probes(dense_leg.cells.count)
            two_stage = [await legs(search, q) for q in queries]
            # Every cell probed and the candidates (200) cover this scope: nothing dropped.
            assert two_stage == exact
            search.service.searcher.dense.candidates = 5  # now it keeps the 5 nearest sketches
            few = [(await legs(search, q))[1] for q in queries]
            pairs = list(zip(few, exact, strict=True))
            assert all(len(f) == 5 and set(f) < set(e[1]) for f, e in pairs)
            assert any(f != e[1][:5] for f, e in pairs)  # the sketches are only a sieve
            results[engine] += [exact, few]
    assert results["chdb"] == results["server"]
    assert sum(len(r) for r in results["chdb"][:-2]) > 5 * len(queries)


async def test_the_dense_leg_keeps_to_the_callers_scope(search):
    await load_corpus(search)
    similar = "Our trip to Porto was cancelled because of the storm; we stayed home."
    await search.journal.append("alice-trip", [message("private", similar)],
                                who=principal(user="alice"))
    await search.journal.append("globex-trip", [message("globex", similar)],
                                who=principal(account="globex"))
    await search.journal.append("agent2-trip", [message("agent2", similar)],
                                who=principal(agent="other-agent"))
    await search.caught_up()
    foreign = {"private", "globex", "agent2"}
    for stranger in (principal(), principal(user="bob")):
        _, vectors = await legs(search, PARAPHRASE, who=stranger, depth=50)
        assert not {thread for thread, _ in vectors} & {"alice-trip", "globex-trip", "agent2-trip"}
        assert len(vectors) == sum(len(turns) for turns in THREADS.values())
        assert not foreign & set(await ids(search, PARAPHRASE, HYBRID, who=stranger, limit=50))
    assert (await ids(search, PARAPHRASE, HYBRID, who=principal(user="alice")))[0] == "private"
    assert await ids(search, PARAPHRASE, HYBRID, who=principal(account="globex")) == ["globex"]
    here = await ids(search, PARAPHRASE, HYBRID, who=principal(user="alice"), limit=50,
                     scope=pb.SCOPE_CURRENT_THREAD, thread_id="travel")
    assert set(here) == {f"travel-{i}" for i in range(len(THREADS["travel"]))}


async def test_embedding_lag_is_visible_and_bm25_serves_meanwhile(chdb_search):
    await chdb_search.journal.append("t", [message("first", "hello there")])
    await chdb_search.caught_up()
    status = await chdb_search.stub.DescribeProjection(pb.DescribeProjectionRequest())
    assert status.embedder == "local-bge-small-en" and status.embedding_lag == 0
    assert status.shards[0].embedded_sequence == 1 and status.embedded_messages == 1
    chdb_search.service.dense.follower.stop()  # the embeddings stop following
    await asyncio.sleep(0.1)
    await chdb_search.journal.append("t", [message(f"m{i}", f"kiwi number {i}")
                                           for i in range(5)])
    await chdb_search.caught_up(embedded=False)
    status = await chdb_search.stub.DescribeProjection(pb.DescribeProjectionRequest())
    assert (status.lag, status.embedding_lag, status.shards[0].embedding_lag) == (0, 5, 5)
    hybrid = await chdb_search.search("kiwi", summarize=False, mode=HYBRID)
    assert {h.message_id for h in hybrid.hits} >= {f"m{i}" for i in range(5)}
    assert not hybrid.fallback
    async with clients.channel(f"127.0.0.1:{chdb_search.service.server.port}") as channel:
        health = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=EMBEDDINGS_HEALTH))
    assert health.status == health_pb2.HealthCheckResponse.SERVING  # 5 behind: within bounds


async def test_embedder_down_bm25_answers_and_messages_are_embedded_later(
        local_journal, tmp_path, fake_model):
    fake_model.fail = lambda request: request["path"].endswith("/embeddings")
    env = search_env(local_journal, "chdb", tmp_path) | {
        "SEARCH_EMBEDDINGS_BASE_URL": fake_model.base_url,
        "SEARCH_EMBEDDINGS_MODEL": "fake-embedder"}
    async for search in start_search(env, local_journal):
        await search.journal.append("t", [message("a", "the kiwi harvest starts in May"),
                                          message("b", "apples ripen in autumn")])
        await search.caught_up(embedded=False)  # BM25 has them although nothing is embedded
        reply = await search.search("kiwi harvest", summarize=False)
        assert [h.message_id for h in reply.hits] == ["a"] and reply.fallback
        assert (await search.search("kiwi", summarize=False, mode=KEYWORD)).fallback is False
        status = await search.stub.DescribeProjection(pb.DescribeProjectionRequest())
        assert status.embedder == "openai-fake-embedder" and status.embedding_lag == 2
        fake_model.fail = lambda request: False  # the endpoint comes back
        await search.caught_up(timeout=60)
        reply = await search.search("kiwi harvest", summarize=False)
        assert not reply.fallback and {h.message_id for h in reply.hits} == {"a", "b"}
        assert reply.hits[0].message_id == "a"
        status = await search.stub.DescribeProjection(pb.DescribeProjectionRequest())
        assert status.embedding_lag == 0 and status.embedded_messages == 2


async def test_without_a_dense_leg_hybrid_requests_fall_back_to_bm25(local_journal, tmp_path):
    env = search_env(local_journal, "chdb", tmp_path, dense=False)
    async for search in start_search(env, local_journal):
        assert search.service.dense is None
        await search.journal.append("t", [message("a", "the kiwi harvest starts in May")])
        await search.caught_up()
        default = await search.search("kiwi", summarize=False)
        assert [h.message_id for h in default.hits] == ["a"] and not default.fallback
        asked = await search.search("kiwi", summarize=False, mode=HYBRID)
        assert [h.message_id for h in asked.hits] == ["a"] and asked.fallback
        status = await search.stub.DescribeProjection(pb.DescribeProjectionRequest())
        assert status.embedder == "" and status.embedding_lag == 0


async def test_an_unknown_mode_is_invalid(chdb_search):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await chdb_search.search("kiwi", mode=7)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "mode" in caught.value.details()


async def test_a_hung_embedder_does_not_hold_the_search(local_journal, tmp_path):
    """An endpoint that accepts connections and never answers: the query embedding gives
    up after QUERY_TIMEOUT_SECONDS and BM25 answers."""
    hung = socket.create_server(("127.0.0.1", 0), backlog=64)
    try:
        env = search_env(local_journal, "chdb", tmp_path) | {
            "SEARCH_EMBEDDINGS_BASE_URL": f"http://127.0.0.1:{hung.getsockname()[1]}/v1",
            "SEARCH_EMBEDDINGS_MODEL": "hung-embedder"}
        async for search in start_search(env, local_journal):
            await search.journal.append("t", [message("a", "the kiwi harvest starts in May")])
            await search.caught_up(embedded=False)
            started = time.monotonic()
            reply = await search.search("kiwi", summarize=False)
            assert reply.fallback and [h.message_id for h in reply.hits] == ["a"]
            assert time.monotonic() - started < dense.QUERY_TIMEOUT_SECONDS + 1.5
    finally:
        hung.close()


async def test_replayed_rows_count_once_in_the_dense_leg(search):
    """A message the feed delivered twice has two rows until ClickHouse merges them: both
    ways of ranking (exact, and sketches then exact) still name it once."""
    await load_corpus(search)
    queries = ["refunds currency invoice", PARAPHRASE, "interview loop"]
    dense_leg = search.service.searcher.dense
    before = [(await legs(search, q))[1] for q in queries]
    table = f"{search.service.projector._table.split('.')[0]}.{dense_leg.table}"
    await search.service.clickhouse.execute(f"INSERT INTO {table} SELECT * FROM {table}")
    assert [(await legs(search, q))[1] for q in queries] == before
    dense_leg.exact_up_to = -1
    dense_leg.cells = dense_leg.cells.with_probes(dense_leg.cells.count)
    assert [(await legs(search, q))[1] for q in queries] == before


async def test_a_large_scope_ranks_only_the_querys_nearest_cells(search):
    """Each message is filed in its nearest centroid's cell; ranking a large scope
    reads the probed cells only, and within them agrees with the exact ranking."""
    await load_corpus(search)
    dense_leg = search.service.searcher.dense
    assert dense_leg.cells.count == 256 and dense_leg.cells.probes == 16
    table = f"{search.service.projector._table.split('.')[0]}.{dense_leg.table}"
    rows = await search.service.clickhouse.query(
        f"SELECT thread_id, offset, cell, embedding, scale FROM {table} FINAL")
    vectors = [[v * r["scale"] for v in r["embedding"]] for r in rows]
    assert [int(r["cell"]) for r in rows] == dense_leg.cells.of(vectors)
    filed = {(r["thread_id"], int(r["offset"])): int(r["cell"]) for r in rows}
    assert len(set(filed.values())) > 3  # the corpus spreads over several cells

    params = tenancy.parameters(parse_principal(principal()))
    dense_leg.cells = dense_leg.cells.with_probes(4)
    outcomes = []
    for query in ["refunds currency invoice", PARAPHRASE, "interview loop", TARGET,
                  "what did we decide about the release date"]:
        vector = await dense_leg.embed_query(query)
        exact = await dense_leg.ranked(params, vector, False, 50, scope_size=1)
        sizes = await dense_leg.cell_sizes.get(params, False)
        probed = set(dense_leg.cells.probed(vector, sizes, dense_leg.rows_budget))
        dense_leg.exact_up_to = -1
        ranked = await dense_leg.ranked(params, vector, False, 50, scope_size=1)
        dense_leg.exact_up_to = dense.EXACT_UP_TO
        assert [r.key for r in ranked] == [r.key for r in exact if filed[r.key] in probed]
        outcomes.append((len(ranked), len(exact)))
    assert any(found for found, _ in outcomes)  # the probed cells hold messages
    assert all(found < every for found, every in outcomes)  # and leave the others unread
