"""The gateway's caches of thread records and API keys across replicas: two replicas,
each with its own pool and its own listening connection, on one real PostgreSQL."""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import pytest

from libs import postgres as pools
from libs.errors import NotFound, Unauthenticated
from libs.identity import Principal
from libs.invalidations import Invalidations
from services.gateway.app import connect
from services.gateway.keys import ApiKeys, KeySpec
from services.gateway.threads import Threads
from testkit.ports import free_port
from testkit.postgres import fresh_database
from testkit.waiting import eventually

ANA = Principal("acme", "helper", "ana", "default")


@dataclass
class Replica:
    threads: Threads
    keys: ApiKeys
    invalidations: Invalidations


@contextlib.asynccontextmanager
async def replica(dsn: str, listen_dsn: str | None = None) -> AsyncIterator[Replica]:
    pool = await pools.create_pool(dsn, min_size=1, max_size=4)
    invalidations = Invalidations(listen_dsn or dsn, retry_seconds=0.1)
    try:
        made = Replica(Threads(pool, invalidations), ApiKeys(pool, invalidations), invalidations)
        async with invalidations.listening():
            yield made
    finally:
        await pool.close()


@pytest.fixture
async def dsn(postgres) -> str:
    dsn = await fresh_database(postgres)
    await (await connect(dsn)).close()  # the gateway's tables
    return dsn


async def behind_its_back(dsn: str, statement: str) -> None:
    """A change nobody announces: only a replica that reads PostgreSQL sees it."""
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute(statement)
    finally:
        await connection.close()


async def gone(threads: Threads, thread_id: str) -> bool:
    try:
        await threads.require(ANA, thread_id)
    except NotFound:
        return True
    return False


async def test_a_thread_record_is_read_once_then_served_from_the_cache(dsn):
    async with replica(dsn) as a:
        await a.threads.ensure(ANA, "t1", {"config": {"max_working_memory_messages": 5}})
        await behind_its_back(dsn, "DELETE FROM threads")
        assert await a.threads.require(ANA, "t1") == {"config": {"max_working_memory_messages": 5}}
        with pytest.raises(NotFound):  # the owner is checked on the cached record too
            await a.threads.require(Principal("acme", "helper", "bob", "default"), "t1")


async def test_a_thread_deleted_on_one_replica_is_gone_on_the_others(dsn):
    async with replica(dsn) as a, replica(dsn) as b:
        await a.threads.ensure(ANA, "t1")
        assert await b.threads.require(ANA, "t1") == {}
        await a.threads.delete(ANA, "t1")
        assert await gone(a.threads, "t1")
        await eventually(lambda: gone(b.threads, "t1"))
        # A later append through the other replica creates the thread again.
        await b.threads.ensure(ANA, "t1", {"a": 1})
        assert await a.threads.require(ANA, "t1") == {"a": 1}


async def test_metadata_changed_on_one_replica_reaches_the_others(dsn):
    async with replica(dsn) as a, replica(dsn) as b:
        await a.threads.ensure(ANA, "t1", {"v": 1})
        assert await b.threads.require(ANA, "t1") == {"v": 1}
        await a.threads.update_metadata(ANA, "t1", {"v": 2})
        assert await a.threads.require(ANA, "t1") == {"v": 2}

        async def changed() -> bool:
            return await b.threads.require(ANA, "t1") == {"v": 2}

        await eventually(changed)


async def test_a_replica_that_cannot_listen_caches_nothing(dsn):
    closed = f"postgresql://postgres@127.0.0.1:{free_port()}/nowhere"
    async with replica(dsn, listen_dsn=closed) as deaf:
        assert not deaf.invalidations.live
        await deaf.threads.ensure(ANA, "t1")
        await behind_its_back(dsn, "DELETE FROM threads")
        assert await gone(deaf.threads, "t1")


async def test_a_lost_listening_connection_empties_the_cache_until_it_listens_again(dsn):
    async with replica(dsn) as a:
        await a.threads.ensure(ANA, "t1", {"v": 1})
        await behind_its_back(dsn, "UPDATE threads SET metadata = '{\"v\": 2}'")
        assert await a.threads.require(ANA, "t1") == {"v": 1}  # cached
        await behind_its_back(
            dsn, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                 " WHERE datname = current_database() AND query LIKE 'LISTEN%'")

        async def deaf_then_fresh() -> bool:
            return await a.threads.require(ANA, "t1") == {"v": 2}

        await eventually(deaf_then_fresh)  # announcements may have been missed: read again

        async def listening_again() -> bool:
            return a.invalidations.live

        await eventually(listening_again)
        assert await a.threads.require(ANA, "t1") == {"v": 2}
        await behind_its_back(dsn, "UPDATE threads SET metadata = '{\"v\": 3}'")
        assert await a.threads.require(ANA, "t1") == {"v": 2}  # cached again


async def test_a_key_revoked_on_one_replica_stops_working_on_the_others_at_once(dsn):
    async with replica(dsn) as a, replica(dsn) as b:
        issued = await a.keys.create("acme", "bench", KeySpec("agent"))
        header = f"Bearer {issued.key}"
        assert (await b.keys.authenticate(header)).account_id == "acme"
        await a.keys.revoke("acme", issued.id)

        async def refused() -> bool:
            try:
                await b.keys.authenticate(header)
            except Unauthenticated:
                return True
            return False

        started = time.monotonic()
        await eventually(refused)
        assert time.monotonic() - started < 5  # not the 30 s the key is otherwise trusted
