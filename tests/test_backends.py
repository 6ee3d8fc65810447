"""The embedded PostgreSQL of `make run` and the fixtures, wherever the caller's files are;
the embedded Valkey, quiet when idle."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import tempfile
from pathlib import Path

import asyncpg
from redis.asyncio import Redis

from testkit.ports import free_port
from tools.backends.postgres import EmbeddedPostgres


def _modes(path: Path) -> dict[Path, int]:
    return {p: p.stat().st_mode for p in (path, *path.parents)}


async def _query(dsn: str, *statements: str):
    connection = await asyncpg.connect(dsn)
    try:
        return [await connection.fetchval(statement) for statement in statements][-1]
    finally:
        await connection.close()


def test_postgres_runs_below_a_directory_others_cannot_traverse():
    private = Path(tempfile.mkdtemp())  # 0700, like a home directory or `mktemp -d`
    before = _modes(private)
    try:
        server = EmbeddedPostgres(private / "data" / "postgres", free_port()).start()
        try:
            asyncio.run(_query(server.dsn, "CREATE TABLE notes (body text)",
                               "INSERT INTO notes VALUES ('kept')"))
            if os.geteuid() == 0:  # PostgreSQL refuses root: it runs as its own user
                assert os.stat(f"/proc/{server.process.pid}").st_uid != 0
        finally:
            server.stop()
        server.start()  # the same cluster again, found through the data dir
        try:
            assert asyncio.run(_query(server.dsn, "SELECT body FROM notes")) == "kept"
        finally:
            server.stop()
        assert _modes(private) == before
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
        assert (private / "data" / "postgres" / "postgres.log").read_text()
    finally:
        shutil.rmtree(private)


def test_deleting_the_data_dir_leaves_no_cluster_behind(tmp_path):
    first = EmbeddedPostgres(tmp_path / "first", free_port()).start()
    cluster = (tmp_path / "first" / "pgdata").resolve()
    first.stop()
    assert (cluster / "PG_VERSION").is_file()
    shutil.rmtree(tmp_path / "first")

    EmbeddedPostgres(tmp_path / "second", free_port()).start().stop()
    assert not cluster.exists()


async def test_the_embedded_redis_keeps_house_once_a_second_and_serves_no_expired_key(
        redis_server):
    redis = Redis.from_url(redis_server.url)
    try:
        assert (await redis.config_get("hz"))["hz"] == "1"  # not ten times a second, idle
        await redis.set("short", "lived", px=100)
        await asyncio.sleep(0.2)
        assert await redis.get("short") is None and not await redis.exists("short")
    finally:
        await redis.aclose()
