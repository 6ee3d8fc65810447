"""The journal's start and stop, with and without leases: a failure at any step releases
what was built before it (open shards and their tasks, the listeners)."""

from __future__ import annotations

import pytest

from services.journal import app
from services.journal.settings import JournalConfig
from testkit import lifecycle
from testkit.ports import free_port

# In the order the app takes them, for a journal that opens its shards and for one that
# stands by for their leases.
STEPS = [("opened", step) for step in (
    "Tracing", "Journal.open", "GrpcServer", "observe_commits", "GrpcServer.start",
    "_watched", "tasks.background", "watch_health")] + [("leased", step) for step in (
        "Journal.prepare", "GrpcServer.start", "_standing_by", "build_lease_store",
        "ShardOpener", "ShardLease", "ShardOwnership")]


def journal_config(local_store_env: dict, shards: str) -> JournalConfig:
    return JournalConfig.from_env({
        **local_store_env, "JOURNAL_PORT": str(free_port()),
        "JOURNAL_METRICS_PORT": str(free_port()), "JOURNAL_SHARD_COUNT": "2",
        "JOURNAL_LEASE_SECONDS": "30" if shards == "leased" else "0"})


async def assert_released(config: JournalConfig, before: lifecycle.Leftovers) -> None:
    # A shard left open would leave its committer and sweeper tasks running.
    await before.assert_none(ports=(config.server.port, config.server.metrics_port))


@pytest.mark.parametrize(("shards", "step"), STEPS)
async def test_a_step_that_fails_releases_everything_built_before_it(
        local_store_env, monkeypatch, shards, step):
    config = journal_config(local_store_env, shards)
    before = lifecycle.Leftovers()
    await lifecycle.failed_start(monkeypatch, app, step, lambda: app.running(config))
    await assert_released(config, before)


@pytest.mark.parametrize("shards", ["opened", "leased"])
async def test_a_clean_stop_releases_everything(local_store_env, shards):
    config = journal_config(local_store_env, shards)
    await assert_released(config, await lifecycle.started_and_stopped(lambda: app.running(config)))
