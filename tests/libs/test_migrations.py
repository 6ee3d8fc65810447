"""Migrations applied by several processes starting at once on one empty database."""

from __future__ import annotations

import asyncio

import asyncpg

from libs import migrations
from services.agent_memory.app import MIGRATIONS as AGENT_MEMORY
from services.gateway.app import MIGRATIONS as GATEWAY
from testkit.postgres import fresh_database


async def test_replicas_of_two_services_starting_at_once_apply_each_migration_once(postgres):
    dsn = await fresh_database(postgres)
    services = [("agent_memory", AGENT_MEMORY), ("gateway", GATEWAY)] * 3
    pools = [await asyncpg.create_pool(dsn, min_size=1, max_size=1) for _ in services]
    try:
        starts = [migrations.apply(pool, service, directory)
                  for pool, (service, directory) in zip(pools, services, strict=True)]
        applied = await asyncio.gather(*starts)
        rows = await pools[0].fetch("SELECT service, version FROM schema_migrations")
    finally:
        for pool in pools:
            await pool.close()
    for service, directory in [("agent_memory", AGENT_MEMORY), ("gateway", GATEWAY)]:
        expected = [m.version for m in migrations.load(directory)]
        assert sorted(r["version"] for r in rows if r["service"] == service) == expected
    # Each migration was applied by exactly one of the replicas.
    assert sorted(v for versions in applied for v in versions) == sorted(r["version"] for r in rows)
