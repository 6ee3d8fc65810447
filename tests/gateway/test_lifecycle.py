"""The gateway's start and stop: a failure at any step releases what was built before it
(the pool and its listeners, the HTTP and gRPC listeners, the background watches)."""

from __future__ import annotations

import pytest

from services.gateway import app
from services.gateway.settings import GatewayConfig
from testkit import lifecycle
from testkit.ports import free_port
from testkit.postgres import fresh_database

# In the order the app takes them.
STEPS = ["Tracing", "postgres.create_pool", "migrations.apply", "PinnedCache",
         "Upstreams.connect", "Invalidations", "ApiKeys", "MemoryBindings", "Accounts",
         "Callers", "Threads", "ContextBuilder", "GatewayServicer", "MemoryLibraryServicer",
         "RunServicer", "LearningServicer", "RetrievalServicer", "KeyServicer", "GrpcServer",
         "Invalidations.listening", "PinnedCache.watching", "Servicers", "listening",
         "GrpcServer.start"]
GROUPED = {"GrpcServer.start"}  # raised inside the HTTP listener


@pytest.fixture
async def config(postgres) -> GatewayConfig:
    return GatewayConfig.from_env({
        "GATEWAY_PORT": str(free_port()), "GATEWAY_HTTP_PORT": str(free_port()),
        "GATEWAY_METRICS_PORT": str(free_port()),
        "GATEWAY_POSTGRES_DSN": await fresh_database(postgres),
        "GATEWAY_SHUTDOWN_GRACE_SECONDS": "1"})


async def assert_released(config: GatewayConfig, before: lifecycle.Leftovers) -> None:
    await before.assert_none(
        ports=(config.server.port, config.server.metrics_port, config.http.port),
        postgres_dsn=config.dependencies.postgres_dsn.reveal())


@pytest.mark.parametrize("step", STEPS)
async def test_a_step_that_fails_releases_everything_built_before_it(config, monkeypatch, step):
    before = lifecycle.Leftovers()
    # Inside the HTTP listener, the MCP session manager's task group wraps what is raised.
    await lifecycle.failed_start(monkeypatch, app, step, lambda: app.running(config),
                                 grouped=step in GROUPED)
    await assert_released(config, before)


async def test_a_clean_stop_releases_everything(config):
    await assert_released(config, await lifecycle.started_and_stopped(lambda: app.running(config)))
