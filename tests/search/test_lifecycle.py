"""Search's start and stop: a failure at any step releases what was built before it
(the change-feed followers and their reports, the listeners, the journal client)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.search import app
from services.search.settings import SearchConfig
from tests.search.conftest import search_env
from tests.support.journal_process import JournalProcess
from tests.support.lifecycle import (
    Leftovers,
    fail_at,
    failure_of,
    journal_process,
    port_is_free,
)
from tests.support.ports import free_port

# In the order the app takes them; the last three start the change-feed followers.
STEPS = ["Tracing", "build_clickhouse", "JournalReader", "chat_model", "build_embedder",
         "spelling", "DenseIndex", "schema.create", "JournalSequences", "local_reranking",
         "Searcher", "Projector", "DenseProjector", "SearchServicer", "GrpcServer",
         "GrpcServer.start", "_following", "tasks.background", "report_health"]


@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> Iterator[JournalProcess]:
    with journal_process(tmp_path_factory.mktemp("journal")) as process:
        yield process


@pytest.fixture
def config(journal, tmp_path, fake_model) -> SearchConfig:
    return SearchConfig.from_env({
        **search_env(journal, "chdb", tmp_path, model_url=fake_model.base_url),
        "SEARCH_PORT": str(free_port()), "SEARCH_METRICS_PORT": str(free_port())})


async def assert_released(config: SearchConfig, before: Leftovers) -> None:
    assert not await before.tasks()
    assert port_is_free(config.server.port) and port_is_free(config.server.metrics_port)


@pytest.mark.parametrize("step", STEPS)
async def test_a_step_that_fails_releases_everything_built_before_it(config, monkeypatch, step):
    fail_at(monkeypatch, app, step)
    before = Leftovers()
    with pytest.raises(Exception) as raised:
        async with app.running(config):
            pytest.fail("served although a step failed")
    assert failure_of(raised.value) is raised.value and str(raised.value) == step
    await assert_released(config, before)


async def test_a_clean_stop_releases_everything(config):
    before = Leftovers()
    async with app.running(config) as service:
        assert service.dense is not None
    await assert_released(config, before)
