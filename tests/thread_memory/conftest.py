"""Thread memory under test: real Redis, the real journal, local and S3 summary stores,
and the loopback OpenAI-compatible stand-in that records prompts."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2_grpc as pb_grpc

from libs import clients
from services.thread_memory.app import Running, running
from services.thread_memory.settings import ThreadMemoryConfig
from services.thread_memory.summaries import ThreadKey
from testkit.journal_client import JournalClient, principal


@dataclass
class ThreadMemoryUnderTest:
    stub: pb_grpc.ThreadMemoryServiceStub
    service: Running
    journal: JournalClient
    redis_url: str

    async def counters(self, thread: str, who=None) -> tuple[int, int]:
        """(tokens, messages) since the summary, as Redis counts them; zeros when absent."""
        p = who or principal()
        counted = await self.service.coordination.counters(
            ThreadKey(p.account_id, p.agent_id, thread))
        return (counted.tokens, counted.messages) if counted else (0, 0)

    async def wait_counted(self, thread: str, messages: int, timeout: float = 20.0) -> None:
        """Wait until the feed counter has counted ``messages`` messages of ``thread``."""
        deadline = time.monotonic() + timeout
        while (await self.counters(thread))[1] < messages:
            assert time.monotonic() < deadline, f"feed never counted {messages} messages"
            await asyncio.sleep(0.02)

    async def settle(self) -> None:
        """Let the feed catch up and every scheduled job finish."""
        durable = {shard.index: shard.durable_sequence for shard in self.journal.journal.shards}
        positions = self.service.counter.follower.positions
        deadline = time.monotonic() + 30
        while any(positions.get(shard, -1) < sequence for shard, sequence in durable.items()):
            assert time.monotonic() < deadline, "feed did not catch up"
            await asyncio.sleep(0.02)
        await asyncio.wait_for(self.service.scheduler.idle(), 60)

    async def context(self, thread: str, who=None, **kwargs) -> pb.GetThreadContextResponse:
        return await self.stub.GetThreadContext(pb.GetThreadContextRequest(
            principal=who or principal(), thread_id=thread, **kwargs))


def thread_memory_env(journal_address: str, redis_url: str, store_env: dict,
                      model_url: str = "", memory_address: str = "") -> dict[str, str]:
    return {
        "THREAD_MEMORY_PORT": "0", "THREAD_MEMORY_JOURNAL_ADDRESS": journal_address,
        "THREAD_MEMORY_REDIS_URL": redis_url, "THREAD_MEMORY_AGENT_MEMORY_ADDRESS": memory_address,
        "MODEL_BASE_URL": model_url, "MODEL_NAME": "fake-utility-model", **store_env,
    }


async def start_thread_memory(env: dict[str, str], journal: JournalClient,
                              redis_url: str) -> AsyncIterator[ThreadMemoryUnderTest]:
    config = ThreadMemoryConfig.from_env(env)
    async with running(config) as service:
        async with clients.channel(f"127.0.0.1:{service.server.port}", default_timeout=30) as ch:
            yield ThreadMemoryUnderTest(pb_grpc.ThreadMemoryServiceStub(ch), service, journal,
                                        redis_url)


@pytest.fixture
def summary_store_env(tmp_path) -> dict[str, str]:
    return {"THREAD_MEMORY_OBJECT_STORE": "local",
            "THREAD_MEMORY_LOCAL_PATH": str(tmp_path / "summaries")}


@pytest.fixture
async def thread_memory(local_journal, redis_server, summary_store_env, fake_model
                        ) -> AsyncIterator[ThreadMemoryUnderTest]:
    """Thread memory with a model (the loopback stand-in), no agent memory."""
    env = thread_memory_env(local_journal.address, redis_server.url, summary_store_env,
                            fake_model.base_url)
    async for under_test in start_thread_memory(env, local_journal, redis_server.url):
        yield under_test
