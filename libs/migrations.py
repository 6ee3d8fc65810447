"""Versioned SQL migrations, applied at start-up.

Each service keeps its migrations as ``NNNN_name.sql`` files in a directory.
``apply`` runs the ones not yet recorded in ``schema_migrations`` in order,
each in its own transaction, under one advisory lock shared by every service:
several replicas (or several services on one database) starting at once then
apply each migration exactly once, and never race on creating
``schema_migrations`` itself (``CREATE TABLE IF NOT EXISTS`` is not safe
against a concurrent create in PostgreSQL).
"""

from __future__ import annotations

import logging
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import asyncpg

logger = logging.getLogger(__name__)

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_LOCK = zlib.crc32(b"agentmemory:migrations")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def load(directory: Path) -> list[Migration]:
    migrations = []
    for path in sorted(directory.glob("*.sql")):
        match = _NAME.match(path.name)
        if not match:
            raise ValueError(f"migration file {path.name} is not named NNNN_name.sql")
        migrations.append(Migration(int(match[1]), match[2], path.read_text()))
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migrations in {directory} are not numbered 1..n: {versions}")
    return migrations


async def apply(pool: asyncpg.Pool, service: str, directory: Path) -> list[int]:
    """Apply pending migrations; returns the versions applied now."""
    applied_now = []
    async with pool.acquire() as connection:
        await connection.execute("SELECT pg_advisory_lock($1)", _LOCK)
        try:
            await connection.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " service text NOT NULL, version integer NOT NULL, name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (service, version))"
            )
            done = {r["version"] for r in await connection.fetch(
                "SELECT version FROM schema_migrations WHERE service = $1", service)}
            for migration in load(directory):
                if migration.version in done:
                    continue
                async with connection.transaction():
                    await connection.execute(migration.sql)
                    await connection.execute(
                        "INSERT INTO schema_migrations (service, version, name) VALUES ($1, $2, $3)",
                        service, migration.version, migration.name,
                    )
                logger.info("%s: applied migration %04d_%s", service, migration.version, migration.name)
                applied_now.append(migration.version)
        finally:
            await connection.execute("SELECT pg_advisory_unlock($1)", _LOCK)
    return applied_now
