"""Thread memory's start and stop: a failure at any step releases what was built before
it (the Redis connections, the job workers, the feed counter, the listeners)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.thread_memory import app
from services.thread_memory.settings import ThreadMemoryConfig
from testkit import lifecycle
from testkit.journal_process import JournalProcess
from testkit.ports import free_port
from tests.thread_memory.conftest import thread_memory_env

# In the order the app takes them; the feed counter starts after the job workers.
STEPS = ["Tracing", "chat_model", "build_object_store", "Coordination.connect",
         "JournalClient", "AgentMemoryClient", "Summarization", "Scheduler", "CachedSummaries",
         "FeedCounter", "ThreadMemoryServicer", "Scheduler.start", "tasks.background",
         "FeedCounter.run_forever", "GrpcServer", "GrpcServer.start"]


@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> Iterator[JournalProcess]:
    with lifecycle.journal_process(tmp_path_factory.mktemp("journal")) as process:
        yield process


@pytest.fixture
def config(journal, redis_server, summary_store_env, fake_model) -> ThreadMemoryConfig:
    return ThreadMemoryConfig.from_env({
        **thread_memory_env(journal.address, redis_server.url, summary_store_env,
                            model_url=fake_model.base_url,
                            memory_address=f"127.0.0.1:{free_port()}"),
        "THREAD_MEMORY_PORT": str(free_port()), "THREAD_MEMORY_METRICS_PORT": str(free_port())})


async def assert_released(config: ThreadMemoryConfig, before: lifecycle.Leftovers) -> None:
    await before.assert_none(ports=(config.server.port, config.server.metrics_port),
                             redis_url=config.dependencies.redis_url)


@pytest.mark.parametrize("step", STEPS)
async def test_a_step_that_fails_releases_everything_built_before_it(config, monkeypatch, step):
    before = lifecycle.Leftovers()
    await lifecycle.failed_start(monkeypatch, app, step, lambda: app.running(config))
    await assert_released(config, before)


async def test_a_clean_stop_releases_everything(config):
    await assert_released(config, await lifecycle.started_and_stopped(lambda: app.running(config)))
