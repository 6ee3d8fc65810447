"""Agent memory's start and stop: a failure at any step releases what was built before
it, and a background loop that crashes stops the service rather than leave it serving
without that loop."""

from __future__ import annotations

import asyncio

import pytest

from services.agent_memory import app
from services.agent_memory.memories.projector import Projector
from services.agent_memory.settings import AgentMemoryConfig
from testkit import lifecycle
from testkit.ports import free_port
from testkit.postgres import fresh_database

# In the order the app takes them; the last three start the background loops.
STEPS = ["Tracing", "Repository.connect", "build_index", "build_embedder", "chat_model",
         "migrations.apply", "safety.warm_up", "Projector", "local_reranking", "AgentMemory",
         "Retrieval", "learning_wiring.learning", "PinnedChanges", "AgentMemoryServicer",
         "GrpcServer", "IndexOptimizer", "tasks.background", "GrpcServer.start",
         "Projector.run_forever", "run_hygiene_daily", "IndexOptimizer.run_forever"]


@pytest.fixture
async def config(postgres, tmp_path, fake_model) -> AgentMemoryConfig:
    return AgentMemoryConfig.from_env({
        "AGENT_MEMORY_PORT": str(free_port()), "AGENT_MEMORY_METRICS_PORT": str(free_port()),
        "AGENT_MEMORY_POSTGRES_DSN": await fresh_database(postgres),
        "AGENT_MEMORY_INDEX_PATH": str(tmp_path / "qdrant"),
        "MODEL_BASE_URL": fake_model.base_url, "MODEL_NAME": "fake-utility-model"})


async def assert_released(config: AgentMemoryConfig, before: lifecycle.Leftovers) -> None:
    await before.assert_none(ports=(config.server.port, config.server.metrics_port),
                             postgres_dsn=config.storage.postgres_dsn.reveal())


@pytest.mark.parametrize("step", STEPS)
async def test_a_step_that_fails_releases_everything_built_before_it(config, monkeypatch, step):
    before = lifecycle.Leftovers()
    await lifecycle.failed_start(monkeypatch, app, step, lambda: app.running(config))
    await assert_released(config, before)


async def test_a_crashed_projector_loop_stops_the_service(config, monkeypatch):
    lifecycle.crash_at(monkeypatch, Projector, "run_forever")
    before = lifecycle.Leftovers()
    with pytest.raises(BaseExceptionGroup) as raised:
        async with app.running(config) as service:
            assert service.server.port == config.server.port
            await asyncio.sleep(30)
            pytest.fail("kept serving without its projector")
    assert str(lifecycle.failure_of(raised.value)) == "run_forever"
    await assert_released(config, before)


async def test_a_clean_stop_releases_everything(config):
    await assert_released(config, await lifecycle.started_and_stopped(lambda: app.running(config)))
