"""Fixtures shared by the whole suite: real servers, started here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from libs import clients
from services.journal.app import running
from services.journal.settings import JournalConfig
from testkit.fake_model import FakeModel
from testkit.journal_client import JournalClient
from testkit.platform import Platform, running_platform
from testkit.ports import free_port
from testkit.s3 import S3Server, start_s3_server
from tools.backends.postgres import EmbeddedPostgres
from tools.backends.redis import EmbeddedRedis


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory) -> Iterator[S3Server]:
    base = tmp_path_factory.mktemp("s3")
    server = start_s3_server(base / "data", base / "weed.log")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def postgres(tmp_path_factory) -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(tmp_path_factory.mktemp("postgres"), free_port()).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def platform(tmp_path_factory) -> Iterator[Platform]:
    """The whole platform as processes, shared by the tests that go through the gateway.
    Tests that change an account's settings use an account of their own."""
    with running_platform(tmp_path_factory.mktemp("platform")) as started:
        yield started


@pytest.fixture
def redis_server(tmp_path) -> Iterator[EmbeddedRedis]:
    """A fresh Redis for each test (it starts in milliseconds)."""
    server = EmbeddedRedis(tmp_path / "redis", free_port()).start()
    yield server
    server.stop()


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    """The loopback OpenAI-compatible stand-in (the one stand-in the tests use)."""
    model = FakeModel().start()
    yield model
    model.stop()


@pytest.fixture(params=["local", "s3"])
def store_env(request, tmp_path) -> dict[str, str]:
    """JOURNAL_* variables for a fresh, empty journal store of each kind."""
    if request.param == "local":
        return {"JOURNAL_OBJECT_STORE": "local", "JOURNAL_LOCAL_PATH": str(tmp_path / "journal")}
    return request.getfixturevalue("s3_server").journal_env()


@pytest.fixture
def local_store_env(tmp_path) -> dict[str, str]:
    return {"JOURNAL_OBJECT_STORE": "local", "JOURNAL_LOCAL_PATH": str(tmp_path / "journal")}


async def _serve_journal(env: dict[str, str]) -> AsyncIterator[JournalClient]:
    config = JournalConfig.from_env({**env, "JOURNAL_PORT": "0", "JOURNAL_HOST": "127.0.0.1"})
    async with running(config) as (journal, server):
        channel = clients.channel(f"127.0.0.1:{server.port}")
        try:
            yield JournalClient(channel, journal=journal, address=f"127.0.0.1:{server.port}")
        finally:
            await channel.close()


@pytest.fixture
async def journal(store_env) -> AsyncIterator[JournalClient]:
    """An in-process journal server on each kind of store, and a client for it."""
    async for client in _serve_journal(store_env):
        yield client


@pytest.fixture
async def local_journal(local_store_env) -> AsyncIterator[JournalClient]:
    async for client in _serve_journal(local_store_env):
        yield client
