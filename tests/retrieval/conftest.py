"""Retrieval under test: agent memory on a real PostgreSQL, both index adapters, the local
embedding model; requests through the gRPC RetrievalService."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as memory_pb_grpc
from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from agentmemory.agent_memory.v1 import retrieval_pb2_grpc as pb_grpc
from agentmemory.common.v1 import principal_pb2

from libs import clients
from services.agent_memory.app import running
from services.agent_memory.index.edge import EdgeIndex
from services.agent_memory.settings import AgentMemoryConfig
from testkit.clock import FakeClock
from testkit.postgres import fresh_database
from tests.agent_memory.conftest import MemoryUnderTest, qdrant_local_index

KINDS = {name.removeprefix("MEMORY_KIND_").lower(): value
         for name, value in memory_pb.MemoryKind.items() if value}
SCOPES = {name.removeprefix("MEMORY_SCOPE_").lower(): value
          for name, value in memory_pb.MemoryScope.items() if value}
SOURCES = {"agent": memory_pb.SOURCE_KIND_AGENT_TOOL, "user": memory_pb.SOURCE_KIND_USER,
           "admin": memory_pb.SOURCE_KIND_ADMIN, "extraction": memory_pb.SOURCE_KIND_EXTRACTION,
           "tool_result": memory_pb.SOURCE_KIND_TOOL_RESULT}


def who(account="acme", agent="helper", user="", role=principal_pb2.KEY_ROLE_UNSPECIFIED,
        act_for_users=False):
    return principal_pb2.Principal(account_id=account, agent_id=agent, user_id=user, role=role,
                                   act_for_users=act_for_users)


@dataclass
class Retrieval:
    memory: MemoryUnderTest
    stub: pb_grpc.RetrievalServiceStub

    @property
    def clock(self):
        return self.memory.clock

    async def add(self, content: str, *, kind="project_fact", scope="agent", key="",
                  principal=None, importance: float | None = None,
                  confidence: float | None = None, tags=None, source="agent", run_id="",
                  thread_id="", message_ids=()) -> memory_pb.Entry:
        new = memory_pb.NewMemory(
            scope=SCOPES[scope], kind=KINDS[kind], key=key, content=content, tags=tags or {},
            source=memory_pb.Source(kind=SOURCES[source], run_id=run_id, thread_id=thread_id,
                                    message_ids=list(message_ids)))
        if importance is not None:
            new.importance = importance
        if confidence is not None:
            new.confidence = confidence
        reply = await self.memory.stub.AddMemory(memory_pb.AddMemoryRequest(
            principal=principal or who(), memory=new))
        return reply.memory

    async def project(self) -> int:
        return await self.memory.project()

    async def retrieve(self, query: str = "", *, principal=None, run_id="run-1",
                       **fields) -> pb.RetrieveContextResponse:
        return await self.stub.RetrieveContext(pb.RetrieveContextRequest(
            principal=principal or who(), run_id=run_id, semantic_query=query, **fields))

    async def only(self, leg: str, query: str, **fields) -> list[str]:
        """The contents the one leg ``leg`` finds (every other leg weighted out)."""
        weights = {name: 1.0 if name == leg else 0.0
                   for name in ("vector", "fulltext", "entity", "episode", "graph", "type")}
        found = await self.retrieve(query, raw=True, min_score=0.0, explain=True,
                                    overrides=pb.RetrievalOverrides(leg_weights=weights),
                                    **fields)
        return [r.memory.content for r in found.results]


async def start(postgres, tmp_path, index_kind: str = "edge", env: dict | None = None,
                procedures=None) -> AsyncIterator[Retrieval]:
    dsn = await fresh_database(postgres)
    config = AgentMemoryConfig.from_env({
        "AGENT_MEMORY_PORT": "0", "AGENT_MEMORY_POSTGRES_DSN": dsn,
        "AGENT_MEMORY_INDEX_PATH": str(tmp_path / "qdrant"), **(env or {})})
    index = EdgeIndex(tmp_path / "qdrant") if index_kind == "edge" else qdrant_local_index()
    clock = FakeClock()
    async with running(config, clock=clock, index=index, background=False,
                       procedures=procedures) as service:
        async with clients.channel(f"127.0.0.1:{service.server.port}",
                                   default_timeout=30) as channel:
            memory = MemoryUnderTest(memory_pb_grpc.AgentMemoryServiceStub(channel), service,
                                     clock, dsn)
            yield Retrieval(memory, pb_grpc.RetrievalServiceStub(channel))


@pytest.fixture
async def retrieval(postgres, tmp_path) -> AsyncIterator[Retrieval]:
    async for under_test in start(postgres, tmp_path, "edge"):
        yield under_test


@pytest.fixture
async def retrieval_on_both(postgres, tmp_path, index_kind) -> AsyncIterator[Retrieval]:
    async for under_test in start(postgres, tmp_path, index_kind):
        yield under_test


@pytest.fixture(params=["edge", "qdrant"])
def index_kind(request) -> str:
    return request.param
