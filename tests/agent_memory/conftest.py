"""Agent memory under test: a real PostgreSQL, both Qdrant paths, the local embedding model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as pb_grpc

from libs import clients
from services.agent_memory.app import Running, running
from services.agent_memory.index.edge import EdgeIndex
from services.agent_memory.index.server import QdrantServerIndex
from services.agent_memory.settings import AgentMemoryConfig
from testkit.clock import FakeClock
from testkit.postgres import fresh_database


def qdrant_local_index() -> QdrantServerIndex:
    """qdrant-client's local mode, standing in for a Qdrant server."""
    from qdrant_client import AsyncQdrantClient

    return QdrantServerIndex(AsyncQdrantClient(location=":memory:"))


@dataclass
class MemoryUnderTest:
    stub: pb_grpc.AgentMemoryServiceStub
    service: Running
    clock: FakeClock
    dsn: str

    async def project(self) -> int:
        return await self.service.projector.drain()


@pytest.fixture(params=["edge", "qdrant"])
def index_kind(request) -> str:
    return request.param


async def start_memory(postgres, tmp_path, index_kind: str = "edge", index=None,
                       dsn: str | None = None, clock: FakeClock | None = None
                       ) -> AsyncIterator[MemoryUnderTest]:
    """A serving agent memory on a fresh database (or on ``dsn``, migrated at start)."""
    dsn = dsn or await fresh_database(postgres)
    config = AgentMemoryConfig.from_env({
        "AGENT_MEMORY_PORT": "0", "AGENT_MEMORY_POSTGRES_DSN": dsn,
        "AGENT_MEMORY_INDEX_PATH": str(tmp_path / "qdrant"),
    })
    if index is None:
        index = EdgeIndex(tmp_path / "qdrant") if index_kind == "edge" else qdrant_local_index()
    clock = clock or FakeClock()
    async with running(config, clock=clock, index=index, background=False) as service:
        async with clients.channel(f"127.0.0.1:{service.server.port}", default_timeout=30) as channel:
            yield MemoryUnderTest(pb_grpc.AgentMemoryServiceStub(channel), service, clock, dsn)


@pytest.fixture
async def memory(postgres, tmp_path) -> AsyncIterator[MemoryUnderTest]:
    """Agent memory on the embedded index."""
    async for under_test in start_memory(postgres, tmp_path):
        yield under_test


@pytest.fixture
async def memory_on_both(postgres, tmp_path, index_kind) -> AsyncIterator[MemoryUnderTest]:
    """Agent memory on each index adapter in turn."""
    async for under_test in start_memory(postgres, tmp_path, index_kind):
        yield under_test


CATEGORY = {"user_profile": pb.CATEGORY_USER_PROFILE, "project_fact": pb.CATEGORY_PROJECT_FACT,
            "observation": pb.CATEGORY_OBSERVATION}
