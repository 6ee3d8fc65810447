"""Hot small scopes: searches ranked in process give the ClickHouse paths' very results,
stay fresh after this process's writes, keep to the caller's scope and to the cap."""

from __future__ import annotations

import asyncio

import pytest
from agentmemory.search.v1 import search_service_pb2 as pb

from libs.identity import parse_principal
from services.search import tenancy
from services.search.keyword import SIZE_TTL_SECONDS
from testkit.journal_client import message, principal
from tests.search.conftest import HYBRID, KEYWORD
from tests.search.corpus import EXPECTED, THREADS
from tests.search.test_dense import PARAPHRASE, TARGET
from tests.search.test_search import load_corpus

CORPUS_MESSAGES = sum(len(turns) for turns in THREADS.values())


def frozen(search) -> None:
    """Cached sizes and hot scopes never expire: only forgetting refreshes them."""
    searcher = search.service.searcher
    searcher.sizes._clock = searcher.hot_scopes._clock = lambda: 0.0


def counting(clickhouse) -> list[str]:
    statements: list[str] = []
    query = clickhouse.query

    async def counted(sql, params=None):
        statements.append(sql)
        return await query(sql, params)

    clickhouse.query = counted
    return statements


async def found(search, query: str, mode: int, **kwargs):
    reply = await search.search(query, summarize=False, mode=mode, **kwargs)
    return [(h.thread_id, h.message_id, h.offset, h.role, h.snippet, h.created_at.ToNanoseconds(),
             h.score) for h in reply.hits], reply.fallback


async def test_hot_scopes_rank_exactly_as_clickhouse(search):
    await load_corpus(search)
    await search.journal.append("weekend", [message("porto", TARGET)])
    await search.caught_up()
    searcher = search.service.searcher
    queries = [*EXPECTED, PARAPHRASE, "kiwi", "invoice deploy lisbon database interview"]
    scopes = [{}, *({"scope": pb.SCOPE_CURRENT_THREAD, "thread_id": t} for t in THREADS)]

    async def everything():
        return [await found(search, q, mode, limit=limit, **scope)
                for q in queries for scope in scopes for mode in (KEYWORD, HYBRID)
                for limit in (3, 50)]

    searcher.hot_scopes.max_messages = 0
    cold = await everything()
    searcher.hot_scopes.max_messages = 1000
    frozen(search)
    warming = await everything()  # each scope's second search loads it
    assert searcher.hot_scopes.loads == len(scopes)
    statements = counting(search.service.clickhouse)
    try:
        hot = await everything()
    finally:
        del search.service.clickhouse.query
    assert hot == cold == warming  # hits, order, scores (floats compared exactly)
    assert sum(len(h) for h, _ in hot) > 1000 and not any(fallback for _, fallback in hot)
    assert statements == [] and searcher.hot_scopes.loads == len(scopes)

    # The dense leg alone: the same messages in the same order, the same similarities
    # (to the last bits with the portable SQL; engines with dotProduct sum in another order).
    params = tenancy.parameters(parse_principal(principal()))
    size = await searcher.sizes.get(params, False)
    scope = await searcher.hot_scopes.get(params, False, size)
    for query in queries[:6]:
        vector = await searcher.dense.embed_query(query)
        in_clickhouse = await searcher.dense.ranked(params, vector, False, 50, size.messages)
        in_process = await scope.dense_ranked(params, vector, False, 50, size.messages)
        assert [r.key for r in in_process] == [r.key for r in in_clickhouse]
        assert [r.score for r in in_process] == pytest.approx(
            [r.score for r in in_clickhouse], rel=1e-12)
        assert len(in_process) == CORPUS_MESSAGES + 1


async def test_this_process_writes_through_to_its_hot_scopes(search):
    await load_corpus(search)
    frozen(search)
    searcher = search.service.searcher
    hot_scopes = searcher.hot_scopes
    for mode in (KEYWORD, HYBRID):
        assert "porto" not in {h[1] for h in (await found(search, "porto storm", mode))[0]}
    assert hot_scopes.loads == 1 and hot_scopes.cached_messages == CORPUS_MESSAGES
    await search.journal.append("weekend", [message("porto", TARGET)])
    await search.caught_up()  # both projections added it to the scope
    queries = [("porto storm", KEYWORD), (PARAPHRASE, HYBRID), ("invoice", HYBRID)]
    statements = counting(search.service.clickhouse)
    try:
        hot = [await found(search, query, mode) for query, mode in queries]
    finally:
        del search.service.clickhouse.query
    assert hot[0][0][0][1] == "porto"
    # The dense leg too (a longer message can precede it after the length prior).
    assert "porto" in [h[1] for h in hot[1][0][:2]]
    assert hot_scopes.loads == 1 and hot_scopes.cached_messages == CORPUS_MESSAGES + 1
    assert len(statements) == 1 and "threads" in statements[0]  # the scope's size, afresh
    hot_scopes.max_messages = 0
    assert [await found(search, query, mode) for query, mode in queries] == hot  # ClickHouse's

    # The feed delivering the same rows again adds nothing.
    hot_scopes.max_messages = 1000
    database = search.service.projector._table.split(".")[0]
    for table, method in (("messages", searcher.projected), (searcher.dense.table,
                                                             searcher.embedded)):
        rows = await search.service.clickhouse.query(
            f"SELECT * FROM {database}.{table} WHERE thread_id = 'weekend'")
        method("acme", "helper", [tuple(r.values()) for r in rows])
    scope = next(iter(hot_scopes._scopes.values()))
    assert scope.sums["messages"][0] == len(scope.vector_keys) == CORPUS_MESSAGES + 1
    assert hot_scopes.cached_messages == CORPUS_MESSAGES + 1


async def test_a_write_during_a_load_is_added_and_a_purge_drops_it(chdb_search):
    await chdb_search.journal.append("t", [message("a", "kiwi harvest")])
    await chdb_search.caught_up()
    searcher = chdb_search.service.searcher
    params = tenancy.parameters(parse_principal(principal()))
    size = await searcher.sizes.get(params, False)
    assert await searcher.hot_scopes.get(params, False, size) is None  # searched once: cold
    loading = asyncio.ensure_future(searcher.hot_scopes.get(params, False, size))
    await asyncio.sleep(0)  # the load has started, its statements not yet answered
    searcher.projected("acme", "helper", [
        ("acme", "helper", "t", "", "default", "b", 2, "user", "kiwi pie", 5, [7, 7], 2, 99)])
    scope = await loading
    assert scope.messages == 2 and searcher.hot_scopes.cached_messages == 2  # kept, with b
    assert scope.sums["messages"][1] == 1 + 99  # the sequences of a and b
    searcher.forget("acme", "helper")  # a purge
    assert searcher.hot_scopes.cached_messages == 0
    loading = asyncio.ensure_future(searcher.hot_scopes.get(params, False, size))
    assert await loading is None  # forgotten: cold again
    loading = asyncio.ensure_future(searcher.hot_scopes.get(params, False, size))
    await asyncio.sleep(0)
    searcher.forget("acme", "helper")  # a purge overtakes the load
    assert (await loading).messages == 1  # the searches that waited for it use it
    assert searcher.hot_scopes.cached_messages == 0  # but it is not kept


async def test_a_scope_searched_once_in_a_while_is_never_loaded(chdb_search):
    await chdb_search.journal.append("t", [message("a", "kiwi harvest")])
    await chdb_search.caught_up()
    now = [0.0]
    hot_scopes = chdb_search.service.searcher.hot_scopes
    hot_scopes._clock = lambda: now[0]
    for _ in range(3):
        assert (await found(chdb_search, "kiwi", KEYWORD))[0][0][1] == "a"
        now[0] += SIZE_TTL_SECONDS + 0.1
    assert hot_scopes.loads == 0
    for _ in range(2):  # searched again within the TTL: loaded
        await found(chdb_search, "kiwi", KEYWORD)
    assert hot_scopes.loads == 1 and len(hot_scopes._scopes) == 1
    now[0] += SIZE_TTL_SECONDS + 0.1
    for _ in range(2):  # another scope loaded: the expired one goes
        await found(chdb_search, "kiwi", KEYWORD, scope=pb.SCOPE_CURRENT_THREAD, thread_id="t")
    assert hot_scopes.loads == 2 and list(hot_scopes._scopes) == [("acme", "helper", "", "t")]


async def test_hot_scopes_keep_to_the_callers_scope_and_forget_purged_threads(search):
    await load_corpus(search)
    await search.journal.append("secret", [message("x", "The launch codename is Bluebird")],
                                who=principal(user="alice"))
    await search.caught_up()
    frozen(search)
    alice = principal(user="alice")
    for mode in (KEYWORD, HYBRID):
        assert (await found(search, "bluebird", mode, who=alice))[0][0][1] == "x"
        for stranger in (principal(), principal(user="bob")):
            hits, _ = await found(search, "bluebird", mode, who=stranger, limit=50)
            assert "secret" not in {h[0] for h in hits}
            assert len(hits) == (0 if mode == KEYWORD else CORPUS_MESSAGES)
    assert "billing" in {h[0] for h in (await found(search, "invoice", KEYWORD))[0]}
    await search.stub.PurgeThread(pb.PurgeThreadRequest(principal=principal(),
                                                        thread_id="billing"))
    assert search.service.searcher.hot_scopes.cached_messages == 0  # every acme/helper scope
    database = search.service.projector._table.split(".")[0]
    deadline = asyncio.get_running_loop().time() + 30
    while int((await search.service.clickhouse.query(  # the mutation, in the background
            f"SELECT count() AS n FROM {database}.messages WHERE thread_id = 'billing'"))[0]["n"]):
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.2)
    search.service.searcher.forget("acme", "helper")  # loaded again once the rows are gone
    for mode in (KEYWORD, HYBRID):
        hits, _ = await found(search, "invoice refunds currency backups", mode, limit=50)
        assert hits and "billing" not in {h[0] for h in hits}


async def test_the_cap_evicts_the_least_recent_scopes(chdb_search):
    await load_corpus(chdb_search)
    frozen(chdb_search)
    hot_scopes = chdb_search.service.searcher.hot_scopes
    hot_scopes.max_messages = CORPUS_MESSAGES + 6
    everywhere = await found(chdb_search, "invoice", KEYWORD)
    assert await found(chdb_search, "invoice", KEYWORD) == everywhere  # now loaded
    assert hot_scopes.cached_messages == CORPUS_MESSAGES
    for thread in ("billing", "deploys"):  # the second one evicts the whole scope
        for _ in range(2):
            await found(chdb_search, "invoice", KEYWORD, scope=pb.SCOPE_CURRENT_THREAD,
                        thread_id=thread)
    assert hot_scopes.cached_messages == 12 and len(hot_scopes._scopes) == 2
    loads = hot_scopes.loads
    assert await found(chdb_search, "invoice", KEYWORD) == everywhere  # loaded again
    assert hot_scopes.loads == loads + 1 and hot_scopes.cached_messages == CORPUS_MESSAGES + 6
    hot_scopes.max_messages = CORPUS_MESSAGES - 1  # larger than the cap: never loaded
    chdb_search.service.searcher.forget("acme", "helper")
    for _ in range(2):
        assert await found(chdb_search, "invoice", KEYWORD) == everywhere
    assert hot_scopes.loads == loads + 1 and hot_scopes.cached_messages == 0


async def test_another_process_write_is_seen_after_the_ttl_and_only_changes_reload(
        chdb_search):
    await chdb_search.journal.append("t", [message("a", "kiwi harvest")])
    await chdb_search.caught_up()
    now = [0.0]
    searcher = chdb_search.service.searcher
    searcher.hot_scopes._clock = lambda: now[0]
    for _ in range(2):
        await found(chdb_search, "kiwi", KEYWORD)
    assert searcher.hot_scopes.loads == 1
    now[0] += SIZE_TTL_SECONDS + 0.1
    statements = counting(chdb_search.service.clickhouse)
    try:  # nothing changed: one checksum statement, no load
        assert [h[1] for h in (await found(chdb_search, "kiwi", HYBRID))[0]] == ["a"]
        assert searcher.hot_scopes.loads == 1
        assert sum("sum(sequence)" in s for s in statements) == 1
    finally:
        del chdb_search.service.clickhouse.query
    # Another process projects a message (rows written behind this process's back).
    clickhouse = chdb_search.service.clickhouse
    database = chdb_search.service.projector._table.split(".")[0]
    await clickhouse.execute(
        f"INSERT INTO {database}.messages SELECT account_id, agent_id, thread_id, owner_user_id,"
        " environment, 'b', offset + 1, role, 'kiwi pie', created_at_ms + 1, terms, length,"
        f" sequence + 1 FROM {database}.messages WHERE message_id = 'a'")
    assert [h[1] for h in (await found(chdb_search, "kiwi", KEYWORD))[0]] == ["a"]  # TTL
    now[0] += SIZE_TTL_SECONDS + 0.1
    for _ in range(2):  # the changed scope is dropped, then loaded again
        assert {h[1] for h in (await found(chdb_search, "kiwi", KEYWORD))[0]} == {"a", "b"}
    assert searcher.hot_scopes.loads == 2 and searcher.hot_scopes.cached_messages == 2


async def test_written_rows_join_only_the_scopes_they_belong_to(chdb_search):
    await load_corpus(chdb_search)
    alice, bob = principal(user="alice"), principal(user="bob")
    await chdb_search.journal.append("secret", [message("w", "The team met on Monday")],
                                     who=alice)
    await chdb_search.caught_up()
    frozen(chdb_search)
    hot_scopes = chdb_search.service.searcher.hot_scopes
    scopes = [(bob, {}), (alice, {}), (alice, {"scope": pb.SCOPE_CURRENT_THREAD,
                                               "thread_id": "secret"}),
              (alice, {"scope": pb.SCOPE_CURRENT_THREAD, "thread_id": "travel"})]
    for who, scope in scopes:
        for _ in range(2):
            await found(chdb_search, "bluebird", KEYWORD, who=who, **scope)
    assert hot_scopes.loads == len(scopes)
    await chdb_search.journal.append("secret", [message("x", "The launch codename is Bluebird")],
                                     who=alice)
    await chdb_search.caught_up()
    held = {(key[2], key[3]): ("secret", 2) in scope.rows and ("secret", 2) in
            scope.vector_keys for key, scope in hot_scopes._scopes.items()}
    assert held == {("bob", None): False, ("alice", None): True, ("alice", "secret"): True,
                    ("alice", "travel"): False}
    for who, scope in scopes:
        for mode in (KEYWORD, HYBRID):
            ids = {h[1] for h in (await found(chdb_search, "bluebird", mode, who=who, limit=50,
                                              **scope))[0]}
            assert ("x" in ids) == (who is alice and scope.get("thread_id") in (None, "secret"))
    assert hot_scopes.loads == len(scopes)
