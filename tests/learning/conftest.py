"""Learning under test: a real journal and agent memory (PostgreSQL, the embedded index,
the local embedding model), the learner following the journal's run boundaries."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as memory_grpc
from agentmemory.agent_memory.v1 import learning_service_pb2 as pb
from agentmemory.agent_memory.v1 import learning_service_pb2_grpc as pb_grpc
from agentmemory.common.v1 import message_pb2, principal_pb2, run_pb2
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb
from google.protobuf import field_mask_pb2

from libs import clients
from services.agent_memory.app import running
from services.agent_memory.index.edge import EdgeIndex
from services.agent_memory.settings import AgentMemoryConfig
from testkit.clock import FakeClock
from testkit.journal_client import JournalClient
from testkit.postgres import fresh_database

USER, ASSISTANT, TOOL = message_pb2.ROLE_USER, message_pb2.ROLE_ASSISTANT, message_pb2.ROLE_TOOL
OK, FAILED = message_pb2.TOOL_CALL_STATUS_SUCCEEDED, message_pb2.TOOL_CALL_STATUS_FAILED
AGENT, ADMIN = principal_pb2.KEY_ROLE_AGENT, principal_pb2.KEY_ROLE_ADMIN


def who(user: str = "ana", account: str = "acme", agent: str = "helper",
        role: int = AGENT) -> principal_pb2.Principal:
    return principal_pb2.Principal(account_id=account, agent_id=agent, user_id=user, role=role)


def say(id: str, text: str, role: int = USER, **fields) -> message_pb2.Message:
    return message_pb2.Message(id=id, role=role, content=text, **fields)


def call(id: str, name: str, arguments: str, status: int = OK, result: str = "done"):
    return message_pb2.ToolCall(id=id, name=name, arguments=arguments, status=status,
                                result=result)


def tool_turn(prefix: str, task: str, calls: list, **task_fields) -> list[message_pb2.Message]:
    """A user task, the assistant's calls, each answered by a tool message, a reply."""
    messages = [say(f"{prefix}-u", task, **task_fields),
                say(f"{prefix}-a", "Working on it.", ASSISTANT, tool_calls=calls)]
    messages += [say(f"{prefix}-t{i}", c.result, TOOL, tool_call_id=c.id)
                 for i, c in enumerate(calls)]
    return messages + [say(f"{prefix}-r", "Done.", ASSISTANT)]


@dataclass
class Learning:
    journal: JournalClient
    stub: pb_grpc.LearningServiceStub
    memory: memory_grpc.AgentMemoryServiceStub
    service: object  # services.agent_memory.app.Running
    clock: FakeClock
    episodes: list = field(default_factory=list)
    runs: int = 0

    @property
    def learner(self):
        return self.service.learning.learner

    async def run(self, thread: str, messages, outcome=run_pb2.RUN_OUTCOME_SUCCEEDED,
                  principal=None, run_id: str | None = None, credentials=()) -> dict:
        """One run on the thread: start, append, finish; then learn from it."""
        principal = principal or who()
        self.runs += 1
        run_id = run_id or f"run-{self.runs}"
        await self.journal.stub.StartRun(journal_pb.StartRunRequest(
            principal=principal, thread_id=thread, run_id=run_id))
        if credentials:
            await self.stub.HoldRunCredentials(pb.HoldRunCredentialsRequest(
                principal=principal, thread_id=thread, run_id=run_id, credentials=credentials))
        if messages:
            await self.journal.append(thread, messages, who=principal)
        await self.journal.stub.FinishRun(journal_pb.FinishRunRequest(
            principal=principal, thread_id=thread, run_id=run_id, outcome=outcome))
        return await self.learned(principal, thread, run_id)

    async def learned(self, principal, thread: str, run_id: str) -> dict:
        store = self.learner._store
        deadline = time.monotonic() + 20
        while True:
            found = await store.run_report(principal.account_id, principal.agent_id, thread,
                                           run_id)
            if found is not None and found[0] == "pending":
                await self.learner.drain()
                continue
            if found is not None and found[0] in ("done", "skipped"):
                await self.service.projector.drain()
                return found[1]
            assert time.monotonic() < deadline, f"run {run_id} never reached agent memory"
            await asyncio.sleep(0.05)

    async def settings(self, principal=None, **values) -> None:
        principal = principal or who(role=ADMIN)
        await self.memory.UpdateAgentSettings(memory_pb.UpdateAgentSettingsRequest(
            principal=principal, settings=memory_pb.AgentSettings(**values),
            update_mask=field_mask_pb2.FieldMask(paths=list(values))))

    async def suggestions(self, principal=None, status=0) -> list:
        reply = await self.stub.ListSuggestions(pb.ListSuggestionsRequest(
            principal=principal or who(), status=status))
        return list(reply.suggestions)

    async def procedures(self, principal=None, include_deleted=False) -> list:
        reply = await self.stub.ListProcedures(pb.ListProceduresRequest(
            principal=principal or who(), include_deleted=include_deleted))
        return list(reply.procedures)

    async def memories(self, principal=None, **filters) -> list:
        reply = await self.memory.ListMemories(memory_pb.ListMemoriesRequest(
            principal=principal or who(), filter=memory_pb.MemoryFilter(**filters)))
        return list(reply.memories)


async def start_learning(postgres, tmp_path, journal: JournalClient,
                         model_url: str = "", dsn: str = "") -> AsyncIterator[Learning]:
    dsn = dsn or await fresh_database(postgres)
    env = {"AGENT_MEMORY_PORT": "0", "AGENT_MEMORY_POSTGRES_DSN": dsn,
           "AGENT_MEMORY_INDEX_PATH": str(tmp_path / "qdrant"),
           "AGENT_MEMORY_JOURNAL_ADDRESS": journal.address}
    if model_url:
        env["MODEL_BASE_URL"] = model_url
    config = AgentMemoryConfig.from_env(env)
    clock = FakeClock()
    episodes: list = []

    async def sink(episode) -> None:
        episodes.append(episode)

    async with running(config, clock=clock, index=EdgeIndex(tmp_path / "qdrant"),
                       background=False, episodes=sink) as service:
        follower = asyncio.create_task(service.learning.follower.run_forever())
        try:
            async with clients.channel(f"127.0.0.1:{service.server.port}",
                                       default_timeout=60) as channel:
                yield Learning(journal, pb_grpc.LearningServiceStub(channel),
                               memory_grpc.AgentMemoryServiceStub(channel), service, clock,
                               episodes)
        finally:
            service.learning.follower.stop()
            await asyncio.wait_for(follower, 15)


@pytest.fixture
async def learning(postgres, tmp_path, local_journal) -> AsyncIterator[Learning]:
    """Learning with the labelled offline extractor (no model configured)."""
    async for harness in start_learning(postgres, tmp_path, local_journal):
        yield harness


@pytest.fixture
async def model_learning(postgres, tmp_path, local_journal,
                         fake_model) -> AsyncIterator[Learning]:
    """Learning with the utility model (the loopback OpenAI-compatible stand-in)."""
    async for harness in start_learning(postgres, tmp_path, local_journal, fake_model.base_url):
        harness.model = fake_model
        yield harness
