"""Search under test: the real journal, chDB in-process, and Debian's ClickHouse
server for the driver path; the loopback model stand-in for match summaries."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from agentmemory.common.v1 import principal_pb2
from agentmemory.search.v1 import search_service_pb2 as pb
from agentmemory.search.v1 import search_service_pb2_grpc as pb_grpc

from libs import clients
from services.search.app import Running, running
from services.search.settings import SearchConfig
from testkit.journal_client import JournalClient, principal
from testkit.ports import free_port, free_port_with_offset
from tools.backends.clickhouse import ClickHouseServer

AGENT = principal_pb2.SURFACE_AGENT
MCP = principal_pb2.SURFACE_MCP_GATEWAY
KEYWORD, HYBRID = pb.SEARCH_MODE_KEYWORD, pb.SEARCH_MODE_HYBRID


@pytest.fixture(scope="session")
def clickhouse_server(tmp_path_factory):
    server = ClickHouseServer(tmp_path_factory.mktemp("clickhouse"), free_port_with_offset(0),
                              free_port()).start()
    yield server
    server.stop()


@dataclass
class SearchUnderTest:
    stub: pb_grpc.SearchServiceStub
    service: Running
    journal: JournalClient

    async def caught_up(self, timeout: float = 30.0, embedded: bool = True) -> None:
        """Wait until the projection (and, when it runs, the dense one) has every message."""
        target = max(s.durable_sequence for s in self.journal.journal.shards)
        followers = [self.service.projector.follower]
        if embedded and self.service.dense is not None:
            followers.append(self.service.dense.follower)
        deadline = time.monotonic() + timeout
        while any(f.positions.get(0, -1) < target for f in followers):
            assert time.monotonic() < deadline, "projection did not catch up"
            await asyncio.sleep(0.02)

    async def search(self, query: str, who=None, surface=AGENT, **kwargs):
        return await self.stub.SearchMessages(pb.SearchMessagesRequest(
            principal=who or principal(), surface=surface, query=query, **kwargs))


def search_env(journal: JournalClient, engine: str, tmp_path, clickhouse_server=None,
               model_url: str = "", dense: bool = True) -> dict[str, str]:
    env = {"SEARCH_PORT": "0", "SEARCH_JOURNAL_ADDRESS": journal.address,
           "MODEL_BASE_URL": model_url, "MODEL_NAME": "fake-utility-model",
           "SEARCH_CLICKHOUSE_DATABASE": f"t_{uuid.uuid4().hex[:10]}",
           "SEARCH_DENSE": str(dense).lower()}
    if engine == "chdb":
        env |= {"SEARCH_CLICKHOUSE_BACKEND": "chdb", "SEARCH_CHDB_PATH": str(tmp_path / "chdb")}
    else:
        env |= {"SEARCH_CLICKHOUSE_BACKEND": "server", "SEARCH_CLICKHOUSE_PORT":
                str(clickhouse_server.port)}
    return env


async def start_search(env: dict[str, str], journal: JournalClient) -> AsyncIterator[SearchUnderTest]:
    async with running(SearchConfig.from_env(env)) as service:
        async with clients.channel(f"127.0.0.1:{service.server.port}", default_timeout=30) as ch:
            yield SearchUnderTest(pb_grpc.SearchServiceStub(ch), service, journal)


@pytest.fixture(params=["chdb", "server"])
def engine(request) -> str:
    return request.param


@pytest.fixture
async def search(local_journal, tmp_path, engine, request) -> AsyncIterator[SearchUnderTest]:
    """Search on each ClickHouse engine in turn, no model (offline summaries)."""
    server = request.getfixturevalue("clickhouse_server") if engine == "server" else None
    async for under_test in start_search(search_env(local_journal, engine, tmp_path, server),
                                         local_journal):
        yield under_test


@pytest.fixture
async def chdb_search(local_journal, tmp_path) -> AsyncIterator[SearchUnderTest]:
    async for under_test in start_search(search_env(local_journal, "chdb", tmp_path),
                                         local_journal):
        yield under_test
