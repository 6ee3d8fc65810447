"""SearchMessages and ViewToolCall, on chDB and on a ClickHouse server.

Searches run hybrid (the default) unless they pin ``KEYWORD``: a test about
which words match asks BM25 alone, since the dense leg always returns the
nearest messages of the scope, matching words or not.
"""

from __future__ import annotations

import random

import grpc
import pytest
from agentmemory.common.v1 import message_pb2
from agentmemory.search.v1 import search_service_pb2 as pb

from libs import reranker
from testkit.journal_client import ASSISTANT, TOOL, USER, message, principal, rpc_error
from tests.search.conftest import AGENT, HYBRID, KEYWORD, MCP
from tests.search.corpus import EXPECTED, THREADS


async def load_corpus(search, who=None):
    for thread, turns in THREADS.items():
        await search.journal.append(thread, [message(f"{thread}-{i}", text, role)
                                             for i, (role, text) in enumerate(turns)],
                                    who=who or principal())
    await search.caught_up()


async def test_ranking_on_a_fixed_corpus(search):
    """BM25 puts each query's message first. Hybrid (the default) puts it first or
    second: where the legs tie under plain reciprocal rank, the length prior prefers
    the longer message (the answer to the question the query repeats, mostly)."""
    await load_corpus(search)
    assert len(EXPECTED) >= 20
    seconds = 0
    for query, (thread, index) in EXPECTED.items():
        keyword = await search.search(query, summarize=False, mode=KEYWORD)
        top = keyword.hits[0]
        assert (top.thread_id, top.message_id) == (thread, f"{thread}-{index}"), query
        hybrid = await search.search(query, summarize=False)
        ranked = [(h.thread_id, h.message_id) for h in hybrid.hits]
        assert (thread, f"{thread}-{index}") in ranked[:2], query
        seconds += ranked[0] != (thread, f"{thread}-{index}")
        assert "**" in top.snippet
        for reply in (keyword, hybrid):
            assert reply.hits[0].score > 0
            assert [h.score for h in reply.hits] == sorted((h.score for h in reply.hits),
                                                           reverse=True)
    assert seconds <= 3


async def test_hits_carry_what_an_agent_needs(search):
    await load_corpus(search)
    reply = await search.search("vegetarian meal requested flight", summarize=False, limit=1)
    (hit,) = reply.hits
    assert (hit.thread_id, hit.message_id, hit.offset, hit.role) == (
        "travel", "travel-3", 4, message_pb2.ROLE_ASSISTANT)
    assert "**vegetarian** **meal** is **requested**" in hit.snippet
    assert "**flight**" in hit.snippet
    assert hit.created_at.seconds > 0


async def test_projection_excludes_system_tool_and_reasoning(search):
    await search.journal.append("t", [
        message("s", "SYSTEM PROMPT mentions pineapple", message_pb2.ROLE_SYSTEM),
        message("u", "What about kiwis?", USER, reasoning="secret reasoning about pineapple"),
        message("a", "Kiwis are fine.", ASSISTANT,
                tool_calls=[message_pb2.ToolCall(id="c1", name="fruit", arguments="{}")]),
        message("tool", "pineapple data from the tool", TOOL, tool_call_id="c1"),
    ])
    await search.caught_up()
    assert list((await search.search("pineapple", summarize=False, mode=KEYWORD)).hits) == []
    found = {h.message_id for h in (await search.search("kiwis", summarize=False)).hits}
    assert found == {"a", "u"}  # hybrid: the dense leg never saw the other two either
    assert list((await search.search("secret reasoning", summarize=False,
                                      mode=KEYWORD)).hits) == []
    hybrid = await search.search("pineapple data system prompt", summarize=False, limit=50)
    assert {h.message_id for h in hybrid.hits} == {"a", "u"}


async def test_scope_and_limit(search):
    await load_corpus(search)
    everywhere = await search.search("backups", summarize=False, mode=KEYWORD)
    assert {h.thread_id for h in everywhere.hits} == {"database"}
    here = await search.search("backups", summarize=False, scope=pb.SCOPE_CURRENT_THREAD,
                               thread_id="billing", mode=KEYWORD)
    assert list(here.hits) == []
    hybrid_here = await search.search("backups", summarize=False, limit=50,
                                      scope=pb.SCOPE_CURRENT_THREAD, thread_id="billing")
    assert {h.thread_id for h in hybrid_here.hits} == {"billing"}  # both legs stay in the thread
    assert len(hybrid_here.hits) == len(THREADS["billing"])
    for mode in (KEYWORD, HYBRID):  # stop words only
        assert len((await search.search("the", summarize=False, mode=mode)).hits) == 0
    many = await search.search("invoice deploy lisbon database interview", summarize=False)
    assert len(many.hits) == 10  # the default limit
    assert len((await search.search("invoice deploy lisbon database interview", limit=50,
                                    summarize=False)).hits) > 10
    for bad, field in ((dict(limit=51), "limit"), (dict(limit=-1), "limit"),
                       (dict(scope=pb.SCOPE_CURRENT_THREAD), "thread_id"),
                       (dict(scope=9), "scope")):
        error = await rpc_error(search.search("backups", **bad))
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT and field in error.field_violations
    error = await rpc_error(search.search("   "))
    assert "query" in error.field_violations


async def test_mcp_gateway_callers_are_refused(search):
    error = await rpc_error(search.search("anything", surface=MCP))
    assert error.code == grpc.StatusCode.PERMISSION_DENIED
    error = await rpc_error(search.stub.ViewToolCall(pb.ViewToolCallRequest(
        principal=principal(), surface=MCP, tool_call_id="c1")))
    assert error.code == grpc.StatusCode.PERMISSION_DENIED
    error = await rpc_error(search.search("anything", surface=0))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT and "surface" in error.field_violations


async def test_tenant_isolation(search):
    await load_corpus(search)
    await search.journal.append("secret", [message("x", "The launch codename is Bluebird")],
                                who=principal(user="alice"))
    await search.journal.append("other", [message("y", "Bluebird invoices are overdue")],
                                who=principal(account="globex"))
    await search.journal.append("agent2", [message("z", "Bluebird deploys")],
                                who=principal(agent="other-agent"))
    await search.caught_up()

    async def found(who, mode):
        reply = await search.search("bluebird", who=who, summarize=False, limit=50, mode=mode)
        return [h.message_id for h in reply.hits]

    assert await found(principal(user="alice"), KEYWORD) == ["x"]
    assert (await found(principal(user="alice"), HYBRID))[0] == "x"
    for stranger in (principal(), principal(user="bob")):
        assert await found(stranger, KEYWORD) == []
        assert not {"x", "y", "z"} & set(await found(stranger, HYBRID))
    assert await found(principal(account="globex"), KEYWORD) == ["y"]
    assert await found(principal(account="globex"), HYBRID) == ["y"]


async def test_one_summary_per_matching_thread_offline(search):
    await load_corpus(search)
    reply = await search.search("interview remote hiring")
    threads = {h.thread_id for h in reply.hits}
    assert [s.thread_id for s in reply.summaries] == list(dict.fromkeys(
        h.thread_id for h in reply.hits))
    assert len(reply.summaries) == len(threads)
    assert all(s.generator == "offline-extractive-v1" for s in reply.summaries)


async def test_view_tool_call_pages_through_the_journal(search):
    result = "r" * 40_000
    await search.journal.append("t", [message("a", "calling", ASSISTANT, tool_calls=[
        message_pb2.ToolCall(id="call-9", name="fetch", arguments="{}", result=result)])])
    pages, offset = [], 0
    while True:
        page = await search.stub.ViewToolCall(pb.ViewToolCallRequest(
            principal=principal(), surface=AGENT, tool_call_id="call-9", offset=offset))
        pages.append(page)
        offset = page.next_offset
        if not page.has_more:
            break
    assert [len(p.data) for p in pages] == [32768, pages[0].total_size - 32768]
    assert result in b"".join(p.data for p in pages).decode()
    missing = await rpc_error(search.stub.ViewToolCall(pb.ViewToolCallRequest(
        principal=principal(), surface=AGENT, tool_call_id="nope")))
    assert missing.code == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("query", ["invoice", "deploy friday"])
async def test_clickhouse_down_is_unavailable_with_a_reason(local_journal, tmp_path, query):
    from tests.search.conftest import search_env, start_search

    class Closed:
        port = 9  # nothing listens there

    env = search_env(local_journal, "server", tmp_path, Closed()) | {
        "SEARCH_PROJECT_FEED": "false"}
    with pytest.raises(Exception) as caught:
        async for under_test in start_search(env, local_journal):
            await under_test.search(query)
    assert "CLICKHOUSE_UNAVAILABLE" in repr(caught.value) or "unavailable" in str(caught.value)


async def test_bound_values_are_literals_not_sql(search):
    """Values are written into statements as escaped literals: quotes, backslashes and
    SQL in a value come back unchanged, on both engines."""
    tricky = "o'neil \\' ); DROP TABLE x; -- \\\\ {s:String}"
    rows = await search.service.clickhouse.query(
        "SELECT {s:String} AS s, {n:Array(UInt64)} AS n, 3 IN {m:Array(UInt64)} AS found",
        {"s": tricky, "n": [1, 2], "m": [3]})
    assert rows == [{"s": tricky, "n": [1, 2], "found": 1}]


async def test_small_scopes_rank_from_messages_exactly_as_large_ones_from_postings(search):
    """A small scope is ranked from its messages (BM25 computed in Python), a large one by
    the postings statement (BM25 in SQL): both give the same hits, in the same order, with
    the same scores, replayed rows included; and a small scope costs one statement.
    (Without hot scopes, which test_hot_scopes compares with this path.)"""
    search.service.searcher.hot_scopes.max_messages = 0
    await load_corpus(search)
    rng = random.Random(14)
    vocabulary = ["kiwi", "mango", "papaya", "guava", "lychee", "durian", "quince", "fig"]
    await search.journal.append("orchard", [  # repeated words (tf > 1) and exact ties
        message(f"orchard-{i}", " ".join(rng.choices(vocabulary, k=rng.randint(1, 12))))
        for i in range(60)])
    await search.caught_up()
    clickhouse = search.service.clickhouse
    database = search.service.projector._table.split(".")[0]
    for table in ("messages", "postings"):  # a replayed thread: every row twice, unmerged
        await clickhouse.execute(f"INSERT INTO {database}.{table}"
                                 f" SELECT * FROM {database}.{table} WHERE thread_id = 'orchard'")
    leg = search.service.searcher.keyword
    queries = [*EXPECTED, "kiwi", "mango papaya", "guava fig quince lychee", "durian kiwi fig",
               "invoice sequence kiwi"]
    scopes = [{}, {"scope": pb.SCOPE_CURRENT_THREAD, "thread_id": "orchard"}]

    async def ranked(small_scope_terms: int):
        leg.small_scope_terms = small_scope_terms
        return [[(h.thread_id, h.message_id, h.offset, h.role, h.snippet, h.score)
                 for h in (await search.search(q, summarize=False, mode=KEYWORD, limit=50,
                                               **scope)).hits]
                for q in queries for scope in scopes]

    from_postings, from_messages = await ranked(-1), await ranked(10**9)
    assert sum(map(len, from_postings)) > 200 and any(len(r) == 50 for r in from_postings)
    for large, small in zip(from_postings, from_messages, strict=True):
        assert [h[:5] for h in small] == [h[:5] for h in large]
        assert [h[5] for h in small] == pytest.approx([h[5] for h in large], rel=1e-12)
    ties = [r for r in from_messages if len({h[5] for h in r}) < len(r)]
    assert ties  # equal scores are ordered the same way (newer first, then thread, offset)

    statements = []
    query = clickhouse.query

    async def counted(sql, params=None):
        statements.append(sql)
        return await query(sql, params)

    clickhouse.query = counted
    try:
        await search.search("mango papaya", summarize=False, mode=KEYWORD)
        statements.clear()  # the scope's size is cached now
        reply = await search.search("mango papaya", summarize=False, mode=KEYWORD)
    finally:
        del clickhouse.query
    assert len(reply.hits) == 10 and len(statements) == 1


async def test_rerank_orders_the_best_of_the_ranking_by_the_blend(chdb_search):
    await load_corpus(chdb_search)
    query, (thread, index) = next(iter(EXPECTED.items()))
    plain = await chdb_search.search(query, summarize=False, limit=20)
    reranked = await chdb_search.search(query, summarize=False, limit=3, rerank=True)
    assert (plain.reranked, reranked.reranked) == (False, True)
    contents = {(h.thread_id, h.message_id): i for i, h in enumerate(plain.hits)}
    model = reranker.CrossEncoder()
    try:
        texts = [THREADS[h.thread_id][int(h.message_id.rsplit("-", 1)[1])][1]
                 for h in plain.hits]
        given = await model.scores(query, texts)
    finally:
        await model.close()
    blended = reranker.blended(given)  # the model's ranks blended with the hybrid ones
    best = sorted(range(len(plain.hits)), key=lambda i: -blended[i])[:3]
    assert [(h.thread_id, h.message_id) for h in reranked.hits] == [
        (plain.hits[i].thread_id, plain.hits[i].message_id) for i in best]
    assert (reranked.hits[0].thread_id, reranked.hits[0].message_id) == (thread,
                                                                         f"{thread}-{index}")
    assert all(key in contents for key in ((h.thread_id, h.message_id)
                                           for h in reranked.hits))
