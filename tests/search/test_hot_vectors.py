"""Hot vectors: a large scope's dense leg ranked in process gives the ClickHouse
statement's very ranking, keeps to the caller's scope, takes this process's writes
through, sees another process's after the TTL, and keeps to its cap."""

from __future__ import annotations

import pytest

from libs.identity import parse_principal
from services.search import hot_vectors, tenancy
from services.search.keyword import SIZE_TTL_SECONDS
from testkit.journal_client import message, principal
from tests.search.conftest import HYBRID
from tests.search.corpus import THREADS
from tests.search.test_dense import PARAPHRASE, TARGET
from tests.search.test_hot_scopes import counting
from tests.search.test_search import load_corpus

QUERIES = ["refunds currency invoice", PARAPHRASE, "interview loop", TARGET,
           "what did we decide about the release date", "kiwi"]
SIMILAR = "Our trip to Porto was cancelled because of the storm; we stayed home."
COPIED = "The kiwi harvest starts in March this year."  # in many threads: tied sketches


def large(search, now: list[float] | None = None):
    """Every scope ranks the dense leg in two stages (the large-scope way), few cells and
    candidates so that both stages choose; the hot vectors' clock is ``now``."""
    searcher = search.service.searcher
    searcher.dense.exact_up_to = -1
    searcher.dense.cells = searcher.dense.cells.with_probes(4)
    searcher.dense.candidates = 12
    if now is not None:
        searcher.hot_vectors._clock = lambda: now[0]
    return searcher


async def embedded_elsewhere(search) -> None:
    """Another process embeds a message (a row written behind this process's back)."""
    table = search.service.searcher.hot_vectors._table
    await search.service.clickhouse.execute(
        f"INSERT INTO {table} SELECT account_id, agent_id, cell, thread_id, offset + 100,"
        f" owner_user_id, length, sketch, embedding, scale, sequence + 1000 FROM {table}"
        " WHERE thread_id = 'travel' AND offset = 1")


async def held(search, who=None):
    """The caller's agent's vectors after two searches (the second starts the load)."""
    searcher = search.service.searcher
    for _ in range(2):
        await search.search("kiwi", summarize=False, mode=HYBRID, who=who)
    await searcher.hot_vectors.settled()
    params = tenancy.parameters(parse_principal(who or principal()))
    return searcher.hot_vectors.get(params, await searcher.sizes.get(params, False))


async def test_hot_vectors_rank_as_the_clickhouse_statement(search):
    await load_corpus(search)
    await search.journal.append("alice-trip", [message("private", SIMILAR)],
                                who=principal(user="alice"))
    await search.journal.append("globex-trip", [message("globex", SIMILAR)],
                                who=principal(account="globex"))
    for n in (7, 13, 2, 41, 5, 100, 9, 23, 1, 64, 3, 17, 30, 8, 11, 6):
        await search.journal.append(f"copy-{n}", [message(f"copy-{n}", COPIED)])
    await search.caught_up()
    searcher = large(search)
    searcher.hot_vectors.page_rows = 7  # a load of many pages, each a range of the key
    statements = counting(search.service.clickhouse)
    try:
        vectors = await held(search)
    finally:
        del search.service.clickhouse.query
    assert vectors is not None and searcher.hot_vectors.loads == 1
    assert sum("arrayStringConcat" in s for s in statements) == vectors.count // 7 + 1
    assert vectors.count == sum(len(turns) for turns in THREADS.values()) + 17  # alice's too
    scopes = [(principal(), None), (principal(user="alice"), None),
              (principal(user="bob"), None), (principal(user="alice"), "travel"),
              (principal(user="alice"), "alice-trip"), (principal(), "alice-trip")]
    compared = 0
    for who, thread in scopes:
        params = tenancy.parameters(parse_principal(who), thread)
        for query in [*QUERIES, COPIED]:
            vector = await searcher.dense.embed_query(query)
            for depth in (3, 50):
                in_clickhouse = await searcher.dense.ranked(params, vector, thread is not None,
                                                            depth, scope_size=10**6)
                in_process = await vectors.dense_ranked(params, vector, thread is not None,
                                                        depth, 10**6)
                assert [(r.key, r.length) for r in in_process] == \
                    [(r.key, r.length) for r in in_clickhouse]
                assert [r.score for r in in_process] == pytest.approx(
                    [r.score for r in in_clickhouse], rel=1e-12)
                compared += len(in_process)
        keys = {r.key[0] for q in QUERIES for r in await vectors.dense_ranked(
            params, await searcher.dense.embed_query(q), thread is not None, 50, 10**6)}
        # Alice's private thread only for Alice; never another account's.
        assert ("alice-trip" in keys) == (who.user_id == "alice" and thread in (None,
                                                                               "alice-trip"))
        assert "globex-trip" not in keys
    assert compared > 300


async def test_searches_rank_the_dense_leg_in_process_once_loaded(chdb_search):
    await load_corpus(chdb_search)
    searcher = large(chdb_search)
    cold = [(await chdb_search.search(q, summarize=False, mode=HYBRID)).hits for q in QUERIES]
    await held(chdb_search)
    statements = counting(chdb_search.service.clickhouse)
    try:
        hot = [(await chdb_search.search(q, summarize=False, mode=HYBRID)).hits for q in QUERIES]
    finally:
        del chdb_search.service.clickhouse.query
    assert [[(h.thread_id, h.offset) for h in hits] for hits in hot] == \
        [[(h.thread_id, h.offset) for h in hits] for hits in cold]
    assert [h.score for hits in hot for h in hits] == pytest.approx(
        [h.score for hits in cold for h in hits], rel=1e-9)
    assert not any("dotProduct" in s for s in statements)  # no dense statement ran
    assert searcher.hot_vectors.loads == 1


async def test_this_process_writes_through_and_a_purge_drops(chdb_search):
    await load_corpus(chdb_search)
    searcher = large(chdb_search)
    vectors = await held(chdb_search)
    before = vectors.count
    await chdb_search.journal.append("weekend", [message("porto", TARGET)])
    await chdb_search.caught_up()
    params = tenancy.parameters(parse_principal(principal()))
    assert searcher.hot_vectors.get(params, await searcher.sizes.get(params, False)) is vectors
    assert vectors.count == before + 1 and searcher.hot_vectors.loads == 1
    vector = await searcher.dense.embed_query(PARAPHRASE)
    assert ("weekend", 1) in [r.key for r in await vectors.dense_ranked(params, vector, False,
                                                                         5, 10**6)]
    # The feed delivering a batch again adds nothing.
    rows = await chdb_search.service.clickhouse.query(
        f"SELECT * FROM {searcher.hot_vectors._table} WHERE thread_id = 'weekend'")
    searcher.embedded("acme", "helper", [tuple(r.values()) for r in rows])
    assert vectors.count == before + 1

    await chdb_search.stub.PurgeThread(purge_request("weekend"))
    assert searcher.hot_vectors.get(params, await searcher.sizes.get(params, False)) is None
    assert searcher.hot_vectors.cached_messages == 0


def purge_request(thread: str):
    from agentmemory.search.v1 import search_service_pb2 as pb
    return pb.PurgeThreadRequest(principal=principal(), thread_id=thread)


async def test_another_process_write_is_seen_after_the_ttl(chdb_search):
    await load_corpus(chdb_search)
    now = [0.0]
    searcher = large(chdb_search, now)
    vectors = await held(chdb_search)
    params = tenancy.parameters(parse_principal(principal()))
    size = await searcher.sizes.get(params, False)
    now[0] += SIZE_TTL_SECONDS + 0.1
    assert searcher.hot_vectors.get(params, size) is vectors  # served while checked
    await searcher.hot_vectors.settled()
    assert searcher.hot_vectors.get(params, size) is vectors and searcher.hot_vectors.loads == 1
    await embedded_elsewhere(chdb_search)
    now[0] += SIZE_TTL_SECONDS + 0.1
    assert searcher.hot_vectors.get(params, size) is vectors
    await searcher.hot_vectors.settled()  # the check finds the change and drops them
    assert searcher.hot_vectors.get(params, size) is None  # the scope is hot: loaded again
    await searcher.hot_vectors.settled()
    again = searcher.hot_vectors.get(params, size)
    assert again is not None and again.count == vectors.count + 1
    assert searcher.hot_vectors.loads == 2


async def test_an_agent_above_the_cap_is_never_loaded(chdb_search):
    await load_corpus(chdb_search)
    searcher = large(chdb_search)
    total = sum(len(turns) for turns in THREADS.values())
    searcher.hot_vectors.max_messages = total - 1
    await chdb_search.search("kiwi", summarize=False, mode=HYBRID)
    params = tenancy.parameters(parse_principal(principal()))
    size = await searcher.sizes.get(params, False)
    assert searcher.hot_vectors.get(params, size) is None  # the scope is above the cap
    # A scope under the cap whose agent holds more (another user's threads) is refused once.
    await chdb_search.journal.append("alice-trip", [message("private", SIMILAR)],
                                     who=principal(user="alice"))
    searcher.hot_vectors.max_messages = total
    assert await held(chdb_search) is None and searcher.hot_vectors.loads == 1
    assert await held(chdb_search) is None and searcher.hot_vectors.loads == 1  # not recounted
    assert searcher.hot_vectors.cached_messages == 0


async def test_a_message_in_two_cells_counts_once_and_keeps_its_vectors(chdb_search):
    """A replay filed in another cell is a second row even after merges: the check counts
    messages, not rows, so it does not take that for a change."""
    await load_corpus(chdb_search)
    now = [0.0]
    searcher = large(chdb_search, now)
    table = searcher.hot_vectors._table
    await chdb_search.service.clickhouse.execute(
        f"INSERT INTO {table} SELECT account_id, agent_id, (cell + 1) % 256, thread_id, offset,"
        f" owner_user_id, length, sketch, embedding, scale, sequence FROM {table}"
        " WHERE thread_id = 'travel' AND offset = 1")
    vectors = await held(chdb_search)
    assert vectors.count == sum(len(turns) for turns in THREADS.values())
    params = tenancy.parameters(parse_principal(principal()))
    size = await searcher.sizes.get(params, False)
    for _ in range(3):
        now[0] += SIZE_TTL_SECONDS + 0.1
        assert searcher.hot_vectors.get(params, size) is vectors
        await searcher.hot_vectors.settled()
    assert searcher.hot_vectors.get(params, size) is vectors and searcher.hot_vectors.loads == 1


async def test_agents_searched_together_over_the_cap_do_not_evict_each_other(chdb_search):
    await load_corpus(chdb_search)
    await load_corpus(chdb_search, who=principal(agent="other"))
    searcher = large(chdb_search)
    total = sum(len(turns) for turns in THREADS.values())
    searcher.hot_vectors.max_messages = total + 5  # room for one agent
    assert await held(chdb_search) is not None
    for _ in range(4):  # both searched in turn: the other is refused, not swapped in
        assert await held(chdb_search, principal(agent="other")) is None
        assert await held(chdb_search) is not None
    assert searcher.hot_vectors.loads == 2 and searcher.hot_vectors.cached_messages == total


async def test_writes_after_a_load_fit_the_room_it_left(chdb_search):
    await load_corpus(chdb_search)
    large(chdb_search)
    vectors = await held(chdb_search)
    capacity = len(vectors._cells)
    assert capacity >= vectors.count * 1.25
    await chdb_search.journal.append("weekend", [message(f"w{i}", f"{TARGET} {i}")
                                                 for i in range(20)])
    await chdb_search.caught_up()
    assert vectors.count == sum(len(turns) for turns in THREADS.values()) + 20
    assert len(vectors._cells) == capacity  # written in place, no copy of every array


async def test_a_process_that_does_not_follow_the_feed_reloads_a_changed_agent_sparingly(
        chdb_search):
    await load_corpus(chdb_search)
    now = [0.0]
    searcher = large(chdb_search, now)
    searcher.hot_vectors.written_through = False  # as with SEARCH_PROJECT_FEED=false
    vectors = await held(chdb_search)
    params = tenancy.parameters(parse_principal(principal()))
    size = await searcher.sizes.get(params, False)
    await embedded_elsewhere(chdb_search)
    now[0] += SIZE_TTL_SECONDS + 0.1
    assert searcher.hot_vectors.get(params, size) is vectors
    await searcher.hot_vectors.settled()  # the check finds the change and drops them
    for _ in range(3):  # hot, but not loaded again for a while: ClickHouse ranks
        now[0] += 1.0
        assert searcher.hot_vectors.get(params, size) is None
        await searcher.hot_vectors.settled()
    assert searcher.hot_vectors.loads == 1
    now[0] += hot_vectors.REFUSED_SECONDS
    for _ in range(2):
        searcher.hot_vectors.get(params, size)
    await searcher.hot_vectors.settled()
    assert searcher.hot_vectors.loads == 2
    assert searcher.hot_vectors.get(params, size).count == vectors.count + 1
