"""The projection: idempotent, resumable, lag visible; both engines agree."""

from __future__ import annotations

import asyncio
import time

from agentmemory.journal.v1 import journal_service_pb2 as journal_pb
from agentmemory.search.v1 import search_service_pb2 as pb

from libs.clients.journal import JournalClient
from services.search import keyword, lag, schema
from testkit.journal_client import message, principal
from tests.search.conftest import search_env, start_search
from tests.search.corpus import EXPECTED
from tests.search.test_search import load_corpus


async def rows(search) -> int:
    database = search.service.projector._table
    result = await search.service.clickhouse.query(f"SELECT count() AS n FROM {database} FINAL")
    return int(result[0]["n"])


async def test_redelivered_messages_leave_one_row(search):
    await search.journal.append("t", [message(f"m{i}", f"hello number {i}") for i in range(20)])
    await search.caught_up()
    assert await rows(search) == 20
    events = []
    call = search.journal.stub.Subscribe(journal_pb.SubscribeRequest(after_sequence=0), timeout=10)
    async for event in call:
        events.append(event)
        if len(events) == 20:
            break
    call.cancel()
    await search.service.projector._write(events)  # the feed delivers them again
    await search.service.projector._write(events[:5])
    assert await rows(search) == 20
    hits = (await search.search("hello number", limit=50, summarize=False)).hits
    assert len(hits) == 20 and len({h.message_id for h in hits}) == 20


async def test_resumes_after_a_restart_without_loss_or_duplicates(local_journal, tmp_path,
                                                                  engine, request):
    server = request.getfixturevalue("clickhouse_server") if engine == "server" else None
    env = search_env(local_journal, engine, tmp_path, server)
    await local_journal.append("t", [message(f"a{i}", f"alpha {i}") for i in range(10)])
    async for search in start_search(env, local_journal):
        await search.caught_up()
        assert search.service.projector.follower.positions[0] == 10
    await local_journal.append("t", [message(f"b{i}", f"alpha {i}") for i in range(10)])
    async for search in start_search(env, local_journal):
        await search.caught_up()
        assert search.service.projector.projected_rows == 10  # only the new ones
        assert await rows(search) == 20
        status = await search.stub.DescribeProjection(pb.DescribeProjectionRequest())
        assert status.shards[0].projected_sequence == 20 and status.engine == engine


async def test_lag_is_visible(chdb_search):
    await chdb_search.journal.append("t", [message("first")])
    await chdb_search.caught_up()
    status = await chdb_search.stub.DescribeProjection(pb.DescribeProjectionRequest())
    assert status.lag == 0 and status.shards[0].projected_sequence == 1
    chdb_search.service.projector.follower.stop()  # the projector stops following
    await asyncio.sleep(0.1)
    await chdb_search.journal.append("t", [message(f"m{i}") for i in range(7)])
    # At once: the description reads the journal's sequence afresh, whatever the pace of
    # the background refresh.
    status = await chdb_search.stub.DescribeProjection(pb.DescribeProjectionRequest())
    assert status.lag == 7 and status.shards[0].journal_sequence == 8


async def test_the_journal_sequence_is_read_less_often_while_it_stands_still(local_journal,
                                                                             monkeypatch):
    monkeypatch.setattr(lag, "REFRESH_SECONDS", 0.1)  # 5 s and 30 s in the service
    monkeypatch.setattr(lag, "IDLE_REFRESH_SECONDS", 10.0)
    reader = JournalClient(local_journal.address)
    reads: list[float] = []
    durable_sequences = reader.durable_sequences

    async def counted():
        reads.append(time.monotonic())
        return await durable_sequences()

    monkeypatch.setattr(reader, "durable_sequences", counted)
    sequences = lag.JournalSequences(reader)
    refreshing = asyncio.create_task(sequences.run_forever())
    try:
        await asyncio.sleep(2.0)  # idle: reads at 0, 0.1, 0.3, 0.7, 1.5 (next at 3.1)
        assert 4 <= len(reads) <= 7, reads  # every 0.1 s would be 20
        moving_from, appended = time.monotonic(), 0
        while time.monotonic() - moving_from < 3.0:  # the journal moves: read every 0.1 s
            await local_journal.append("t", [message(f"m{appended}")])
            appended += 1
            await asyncio.sleep(0.05)
        assert sum(1 for t in reads if t > moving_from + 1.2) >= 10
        assert sequences.sequences[0] >= appended - 5
    finally:
        refreshing.cancel()
        await asyncio.gather(refreshing, return_exceptions=True)
        await reader.close()


async def test_both_engines_rank_the_same(local_journal, tmp_path, clickhouse_server):
    results = {}
    for engine in ("chdb", "server"):
        env = search_env(local_journal, engine, tmp_path / engine, clickhouse_server)
        async for search in start_search(env, local_journal):
            if engine == "chdb":
                await load_corpus(search)
            await search.caught_up()
            results[engine] = [
                [(h.thread_id, h.message_id, round(h.score, 6))
                 for h in (await search.search(q, summarize=False, limit=5)).hits]
                for q in EXPECTED
            ]
            private = await search.search("anything", who=principal(user="x"), summarize=False)
            results[engine].append(list(private.hits))
    assert results["chdb"] == results["server"]
    assert sum(len(r) for r in results["chdb"]) > len(EXPECTED)


async def test_summaries_make_one_model_call_per_matching_thread(local_journal, tmp_path,
                                                                 fake_model):
    env = search_env(local_journal, "chdb", tmp_path, model_url=fake_model.base_url)
    async for search in start_search(env, local_journal):
        await load_corpus(search)
        reply = await search.search("currency refunds deploys backups", limit=20)
        threads = list(dict.fromkeys(h.thread_id for h in reply.hits))
        assert len(threads) >= 3
        calls = fake_model.chats("what one earlier conversation said")
        assert len(calls) == len(threads)
        assert [s.thread_id for s in reply.summaries] == threads
        assert all(s.generator.startswith("fake-utility-model") for s in reply.summaries)
        prompts = {c["body"]["messages"][1]["content"] for c in calls}
        assert any("Refunds are always issued" in p for p in prompts)
        none = await search.search("currency", summarize=False)
        assert list(none.summaries) == [] and len(fake_model.chats()) == len(threads)


async def thread_totals(search) -> list[tuple]:
    database = search.service.projector._table.split(".")[0]
    rows = await search.service.clickhouse.query(
        f"SELECT thread_id, messages, terms, last_offset FROM {database}.threads FINAL"
        " ORDER BY thread_id")
    return [(r["thread_id"], int(r["messages"]), int(r["terms"]), int(r["last_offset"]))
            for r in rows]


async def test_thread_totals_count_each_message_once(search):
    await search.journal.append("t", [message(f"m{i}", f"hello number {i}") for i in range(6)])
    await search.journal.append("u", [message("n0", "one two three four")])
    await search.caught_up()
    expected = [("t", 6, 6 * 3, 6), ("u", 1, 4, 1)]  # terms: "hello", "number", the digit
    assert await thread_totals(search) == expected
    events = []
    call = search.journal.stub.Subscribe(journal_pb.SubscribeRequest(after_sequence=0), timeout=10)
    async for event in call:
        events.append(event)
        if len(events) == 7:
            break
    call.cancel()
    await search.service.projector._write(events[2:])  # the feed delivers them again
    assert await thread_totals(search) == expected
    size = await search.service.searcher.sizes.get(
        {"account": "acme", "agent": "helper", "user": ""}, current_thread=False)
    assert (size.messages, size.total_length) == (7, 22)


async def test_totals_are_filled_for_a_store_from_before_they_existed(local_journal, tmp_path):
    env = search_env(local_journal, "chdb", tmp_path, dense=False)
    await local_journal.append("t", [message(f"m{i}", f"alpha beta {i}") for i in range(4)])
    async for search in start_search(env, local_journal):
        await search.caught_up()
        before = [(h.message_id, h.score) for h in (await search.search("alpha", summarize=False)).hits]
        database = search.service.projector._table.split(".")[0]
        await search.service.clickhouse.execute(f"DROP TABLE {database}.threads")
    async for search in start_search(env, local_journal):  # schema.create fills them again
        assert await thread_totals(search) == [("t", 4, 12, 4)]
        after = [(h.message_id, h.score) for h in (await search.search("alpha", summarize=False)).hits]
        assert after == before and len(after) == 4


async def test_scope_sizes_are_cached_briefly_and_forgotten_on_local_writes(chdb_search):
    await chdb_search.journal.append("t", [message("a", "kiwi")])
    await chdb_search.caught_up()
    clickhouse, database = chdb_search.service.clickhouse, \
        chdb_search.service.projector._table.split(".")[0]
    now = [100.0]
    sizes = keyword.ScopeSizes(clickhouse, database, clock=lambda: now[0])
    params = {"account": "acme", "agent": "helper", "user": ""}
    assert (await sizes.get(params, False)).messages == 1
    # Another process projects a thread: unseen until the cached size expires.
    await clickhouse.insert(f"{database}.threads", schema.THREAD_COLUMNS,
                            [("acme", "helper", "", "elsewhere", 3, 9, 3)])
    assert (await sizes.get(params, False)).messages == 1
    now[0] += keyword.SIZE_TTL_SECONDS + 0.1
    assert (await sizes.get(params, False)).messages == 4
    await clickhouse.insert(f"{database}.threads", schema.THREAD_COLUMNS,
                            [("acme", "helper", "", "more", 1, 1, 1)])
    sizes.forget("acme", "other-agent")
    assert (await sizes.get(params, False)).messages == 4
    sizes.forget("acme", "helper")  # what this process's projector does after writing
    assert (await sizes.get(params, False)).messages == 5
    empty = {"account": "nobody", "agent": "helper", "user": ""}
    assert (await sizes.get(empty, False)).messages == 0
    await clickhouse.insert(f"{database}.threads", schema.THREAD_COLUMNS,
                            [("nobody", "helper", "", "t", 1, 1, 1)])
    assert (await sizes.get(empty, False)).messages == 1  # an empty scope is never cached


async def test_purge_removes_every_row_of_the_thread(search):
    await load_corpus(search)
    database = search.service.projector._table.split(".")[0]
    # An earlier layout's vectors (before cells), no longer read: purged all the same.
    legacy = "vectors_local_bge_small_en_384"
    await search.service.clickhouse.execute(
        f"CREATE TABLE {database}.{legacy} (account_id String, agent_id String,"
        " thread_id String, offset UInt64, owner_user_id String, sequence UInt64)"
        " ENGINE = ReplacingMergeTree(sequence) ORDER BY (account_id, agent_id, thread_id, offset)")
    await search.service.clickhouse.execute(
        f"INSERT INTO {database}.{legacy} SELECT account_id, agent_id, thread_id, offset,"
        f" owner_user_id, sequence FROM {database}.messages")
    await search.stub.PurgeThread(pb.PurgeThreadRequest(principal=principal(),
                                                        thread_id="billing"))
    tables = ["messages", "postings", "threads", search.service.searcher.dense.table, legacy]
    deadline = asyncio.get_running_loop().time() + 30
    while True:  # ALTER ... DELETE is a mutation: ClickHouse applies it in the background
        counts = [int((await search.service.clickhouse.query(
            f"SELECT count() AS n FROM {database}.{table} WHERE thread_id = 'billing'"))[0]["n"])
            for table in tables]
        if not any(counts):
            break
        assert asyncio.get_running_loop().time() < deadline, counts
        await asyncio.sleep(0.2)
    assert (await search.service.searcher.sizes.get(
        {"account": "acme", "agent": "helper", "user": ""}, False)).messages == 22
    for mode in (pb.SEARCH_MODE_KEYWORD, pb.SEARCH_MODE_HYBRID):
        reply = await search.search("invoice refunds currency backups", summarize=False, limit=50,
                                    mode=mode)
        assert reply.hits and "billing" not in {h.thread_id for h in reply.hits}
