"""Agent memory follows the run boundaries from a cursor it keeps: a restart resumes where
it was, a boundary that came while it was down is learned from, and a redelivered one is
not learned from twice."""

from __future__ import annotations

import asyncio
import time

import asyncpg
from agentmemory.common.v1 import run_pb2
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb

from libs.pacing import IdleBackoff
from testkit.postgres import fresh_database
from tests.learning.conftest import say, start_learning, who


async def test_learning_resumes_after_a_restart_and_never_learns_twice(postgres, tmp_path,
                                                                     local_journal):
    dsn = await fresh_database(postgres)
    async for learning in start_learning(postgres, tmp_path / "a", local_journal, dsn=dsn):
        await learning.run("t", [say("m1", "My name is Ana Lopes.")])
        assert len(await learning.suggestions()) == 1
    # Agent memory is down: a run finishes meanwhile.
    journal = local_journal
    await journal.stub.StartRun(journal_pb.StartRunRequest(principal=who(), thread_id="t",
                                                           run_id="while-down"))
    await journal.append("t", [say("m2", "I live in Porto.")], who=who())
    await journal.stub.FinishRun(journal_pb.FinishRunRequest(
        principal=who(), thread_id="t", run_id="while-down",
        outcome=run_pb2.RUN_OUTCOME_SUCCEEDED))
    # And the cursor is lost too: every boundary is delivered again.
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute("UPDATE learning_feed_cursors SET position = 0")
    finally:
        await connection.close()
    async for learning in start_learning(postgres, tmp_path / "b", local_journal, dsn=dsn):
        report = await learning.learned(who(), "t", "while-down")
        assert report["suggested"] == 1
        found = sorted(s.key for s in await learning.suggestions())
        assert found == ["home_city", "name"]  # the first run's fact once, not twice
        audit = await learning.service.repository.pool.fetchval(
            "SELECT count(*) FROM learning_audit WHERE action = 'suggest'")
        assert audit == 2


async def test_an_idle_learner_looks_less_often_and_learns_a_finished_run_at_once(
        learning, monkeypatch):
    learner = learning.learner
    monkeypatch.setattr(learner, "_poll", IdleBackoff(0.1, 30.0))  # the service's, faster
    looks: list[float] = []
    claim_run = learner._store.claim_run

    async def counted(*args):
        looks.append(time.monotonic())
        return await claim_run(*args)

    monkeypatch.setattr(learner._store, "claim_run", counted)
    running = asyncio.create_task(learner.run_forever())
    try:
        await asyncio.sleep(3.5)
        assert 4 <= len(looks) <= 7  # 0, 0.1, 0.3, 0.7, 1.5, 3.1: a steady poll looks 35 times
        await learning.journal.stub.StartRun(journal_pb.StartRunRequest(
            principal=who(), thread_id="t", run_id="r"))
        await learning.journal.append("t", [say("m1", "My name is Ana Lopes.")], who=who())
        finished = time.monotonic()
        await learning.journal.stub.FinishRun(journal_pb.FinishRunRequest(
            principal=who(), thread_id="t", run_id="r", outcome=run_pb2.RUN_OUTCOME_SUCCEEDED))
        store = learner._store
        while (found := await store.run_report("acme", "helper", "t", "r")) is None \
                or found[0] not in ("done", "skipped"):
            assert time.monotonic() - finished < 20, "never learned from"
            await asyncio.sleep(0.05)
        first_after = min(t for t in looks if t > finished)
        assert first_after - finished < 1.5  # woken by the feed, not the next look (at 6.3 s)
        assert len(await learning.suggestions()) == 1
    finally:
        learner.stop()
        await asyncio.wait_for(running, 10)
