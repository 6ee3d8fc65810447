"""The gateway's cache of RecallProcedures answers (services.gateway.pinned) against real
agent memory and its announcements: asked once per run and task, then served while
nothing it shows changes; a new procedure, a success, a skill or index change, a
deletion, memory turned off all reach the next answer; an answer made without the
vector index is never kept; and no answer serves another account, agent or person."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import learning_service_pb2 as pb
from agentmemory.common.v1 import run_pb2
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb

from libs.clients.agent_memory import AgentMemoryClient
from services.agent_memory.learning.procedures import HEADER, collection
from services.gateway.pinned import PinnedCache
from testkit.pinned_changes import all_heard
from testkit.waiting import eventually
from tests.learning.conftest import ADMIN, call, tool_turn, who
from tests.learning.test_procedures import record

TASK = "Book me a flight to Porto on Friday"


class Counting:
    """The real agent-memory client, counting the recalls that reach agent memory."""

    def __init__(self, client: AgentMemoryClient) -> None:
        self._client = client
        self.calls = 0

    async def recall_procedures(self, request):
        self.calls += 1
        return await self._client.recall_procedures(request)



@pytest.fixture
async def agent_memory(learning) -> AsyncIterator[AgentMemoryClient]:
    """The gateway's client of the agent memory under test."""
    client = AgentMemoryClient(f"127.0.0.1:{learning.service.server.port}", timeout=60)
    yield client
    await client.close()


@contextlib.asynccontextmanager
async def cache_of(agent_memory: AgentMemoryClient) -> AsyncIterator[PinnedCache]:
    cache = PinnedCache(max_age_seconds=60, retry_seconds=0.1)
    async with cache.watching(agent_memory):
        await eventually(lambda: _async(cache.subscribed))
        yield cache


async def _async(value):
    return value


def asking(principal=None, task: str = TASK, thread: str = "", run: str = ""):
    return pb.RecallProceduresRequest(principal=principal or who(), task=task,
                                      thread_id=thread, run_id=run)


async def sql(learning, statement: str, *args, announced: bool = True) -> None:
    """A statement straight to agent memory's tables; ``announced=False`` with its triggers
    off (a change nobody announces: whatever still shows it was served from the cache)."""
    async with learning.service.repository.pool.acquire() as connection, \
            connection.transaction():
        if not announced:
            await connection.execute("SET LOCAL session_replication_role = replica")
        await connection.execute(statement, *args)


async def test_a_recall_is_asked_once_per_run_and_served_until_what_it_shows_changes(
        learning, agent_memory):
    stub = Counting(agent_memory)
    async with cache_of(agent_memory) as cache:
        async def shown(request=None) -> str:
            return await cache.past_runs(stub, request or asking())

        assert await shown() == "" and stub.calls == 1
        await record(learning)  # a new procedure
        assert await eventually(lambda: _contains(shown(), HEADER), timeout=15) < 10
        # Then indexed: a read racing that announcement would not be kept.
        await all_heard(cache, lambda *args: sql(learning, *args))
        await learning.journal.stub.StartRun(journal_pb.StartRunRequest(
            principal=who(), thread_id="next", run_id="r1"))
        in_run = asking(thread="next", run="r1")
        first = await shown(in_run)
        calls = stub.calls
        assert 'successes="0"' in first and await shown(in_run) == first
        assert stub.calls == calls  # served: the recall was recorded for r1 the first time
        await learning.journal.stub.FinishRun(journal_pb.FinishRunRequest(
            principal=who(), thread_id="next", run_id="r1",
            outcome=run_pb2.RUN_OUTCOME_SUCCEEDED))
        await learning.learned(who(), "next", "r1")
        # The run succeeded after recalling it: a success, shown in the next answer.
        assert await eventually(lambda: _contains(shown(), 'successes="1"'), timeout=15) < 10
        await learning.journal.stub.StartRun(journal_pb.StartRunRequest(
            principal=who(), thread_id="next", run_id="r2"))
        calls = stub.calls
        await shown(asking(thread="next", run="r2"))  # another run asks again
        assert stub.calls == calls + 1

        # Served while nothing announces a change; thumbs alone change nothing shown.
        await all_heard(cache, lambda *args: sql(learning, *args))  # the success's too
        kept = await shown()
        await sql(learning, "UPDATE procedures SET successes = 7 WHERE account_id = 'acme'",
                  announced=False)
        await sql(learning, "UPDATE procedures SET thumbs_up = thumbs_up + 1"
                  " WHERE account_id = 'acme'")
        await all_heard(cache, lambda *args: sql(learning, *args))  # had thumbs announced
        calls = stub.calls
        assert await shown() == kept and stub.calls == calls
        # A skill accepted ranks first among equals, indexing changes what the index
        # offers: both are announced, and the next answer is asked again.
        for change in ("skill_state = 'accepted'", "indexed_at = now()"):
            calls = stub.calls
            await sql(learning, f"UPDATE procedures SET {change} WHERE account_id = 'acme'")
            assert await eventually(lambda c=calls: _asked_again(shown(), stub, c),
                                    timeout=15) < 10
        assert 'successes="7"' in await shown()

        [procedure] = await learning.procedures()
        await learning.stub.DeleteProcedure(pb.DeleteProcedureRequest(
            principal=who(), procedure_id=procedure.id))
        assert await eventually(lambda: _equals(shown(), ""), timeout=15) < 10


async def test_memory_turned_off_empties_the_next_recall(learning, agent_memory):
    await record(learning)
    async with cache_of(agent_memory) as cache:
        assert HEADER in await cache.past_runs(agent_memory, asking())
        await learning.memory.UpdateAccountSettings(memory_pb.UpdateAccountSettingsRequest(
            principal=who(role=ADMIN), settings=memory_pb.AccountSettings(memory_enabled=False),
            update_mask={"paths": ["memory_enabled"]}))
        assert await eventually(lambda: _equals(cache.past_runs(agent_memory, asking()), ""))


async def test_an_answer_made_without_the_index_is_not_kept(learning, agent_memory):
    await record(learning)
    index = learning.service.index
    name = collection("acme", "default",
                      learning.service.learning.service._procedures._embedder)
    stub = Counting(agent_memory)
    async with cache_of(agent_memory) as cache:
        await asyncio.to_thread(index._shards[name].handle.close)  # the index fails
        direct = await learning.stub.RecallProcedures(asking())
        assert direct.partial and not direct.procedures  # indexed: not compared directly
        assert await cache.past_runs(stub, asking()) == ""
        assert await cache.past_runs(stub, asking()) == "" and stub.calls == 2  # not kept
        index._shards.pop(name)  # reopened at the next query
        assert HEADER in await cache.past_runs(stub, asking())
        assert HEADER in await cache.past_runs(stub, asking()) and stub.calls == 3  # kept


async def test_no_answer_serves_another_account_agent_or_person(learning, agent_memory):
    """The same request but for the principal: each sees only what it may."""
    await record(learning)  # Ana's own thread at acme: hers alone
    trains = [call("s9", "search_trains", '{"to": "OPO"}', result="2 trains"),
              call("b9", "book_train", '{"train": "AP120"}', result="booked AP120")]
    for principal in (who(account="globex"), who(agent="planner")):
        await learning.run("t", tool_turn("y", TASK, trains), principal=principal)
    async with cache_of(agent_memory) as cache:
        for _ in range(2):  # the second round from the cache
            ana = await cache.past_runs(agent_memory, asking())
            assert "book_flight" in ana and "book_train" not in ana
            for principal in (who(account="globex"), who(agent="planner")):
                theirs = await cache.past_runs(agent_memory, asking(principal))
                assert "book_train" in theirs and "book_flight" not in theirs
            for principal in (who("bob"), who(account="initech"), who(agent="nobody")):
                assert await cache.past_runs(agent_memory, asking(principal)) == ""


async def _contains(answer, text: str) -> bool:
    return text in await answer


async def _equals(answer, text: str) -> bool:
    return await answer == text


async def _asked_again(answer, stub: Counting, calls: int) -> bool:
    await answer
    return stub.calls > calls
