"""A real PostgreSQL for the tests, and a fresh database per test."""

from __future__ import annotations

import uuid

import asyncpg

from tools.backends.postgres import EmbeddedPostgres


async def fresh_database(server: EmbeddedPostgres) -> str:
    """A new, empty database on ``server``; returns its DSN."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(server.dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    return server.dsn.rsplit("/", 1)[0] + f"/{name}"
