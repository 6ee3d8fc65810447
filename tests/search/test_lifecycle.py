"""Search's start and stop: a failure at any step releases what was built before it
(the change-feed followers and their reports, the listeners, the journal client)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.search import app
from services.search.settings import SearchConfig
from testkit import lifecycle
from testkit.journal_process import JournalProcess
from testkit.ports import free_port
from tests.search.conftest import search_env

# In the order the app takes them; the last three start the change-feed followers.
STEPS = ["Tracing", "build_clickhouse", "JournalClient", "chat_model", "build_embedder",
         "spelling", "DenseIndex", "schema.create", "JournalSequences", "local_reranking",
         "Searcher", "Projector", "DenseProjector", "SearchServicer", "GrpcServer",
         "GrpcServer.start", "_following", "tasks.background", "report_health"]


@pytest.fixture(scope="module")
def journal(tmp_path_factory) -> Iterator[JournalProcess]:
    with lifecycle.journal_process(tmp_path_factory.mktemp("journal")) as process:
        yield process


@pytest.fixture
def config(journal, tmp_path, fake_model) -> SearchConfig:
    return SearchConfig.from_env({
        **search_env(journal, "chdb", tmp_path, model_url=fake_model.base_url),
        "SEARCH_PORT": str(free_port()), "SEARCH_METRICS_PORT": str(free_port())})


@pytest.mark.parametrize("step", STEPS)
async def test_a_step_that_fails_releases_everything_built_before_it(config, monkeypatch, step):
    before = lifecycle.Leftovers()
    await lifecycle.failed_start(monkeypatch, app, step, lambda: app.running(config))
    await before.assert_none(ports=(config.server.port, config.server.metrics_port))


async def test_a_clean_stop_releases_everything(config):
    before = await lifecycle.started_and_stopped(lambda: app.running(config))
    await before.assert_none(ports=(config.server.port, config.server.metrics_port))
