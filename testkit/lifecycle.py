"""Starting a service with one of its steps made to fail, and checking what it left.

The failing step is the real constructor or call, replaced for one test by one that
raises: what was built before it is real, and must be released (tasks ended, ports
free, store connections closed)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import asyncpg
import pytest
from redis.asyncio import Redis

from testkit.journal_process import JournalProcess
from testkit.ports import is_free

SETTLE_SECONDS = 5.0
T = TypeVar("T")


async def settled(probe: Callable[[], Awaitable[T]]) -> T:
    """What ``probe`` finds once it finds nothing, or after SETTLE_SECONDS (closes and
    cancellations take a moment to land)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        found = await probe()
        if not found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)


class StepFailed(Exception):
    """The failure a test put into a service's start."""


def fail_at(monkeypatch: pytest.MonkeyPatch, module: ModuleType, step: str) -> None:
    """Make ``step`` (a name in ``module``, or ``Name.attribute``) raise when called."""
    owner_path, _, attribute = step.rpartition(".")
    owner = functools.reduce(getattr, owner_path.split("."), module) if owner_path else module

    def fail(*_args, **_kwargs):
        raise StepFailed(step)

    monkeypatch.setattr(owner, attribute, fail)


async def failed_start(monkeypatch: pytest.MonkeyPatch, module: ModuleType, step: str,
                       start: Callable[[], contextlib.AbstractAsyncContextManager], *,
                       grouped: bool = False) -> None:
    """Start with ``step`` made to fail, and check the start failed with that failure:
    itself, or inside an exception group when ``grouped``."""
    fail_at(monkeypatch, module, step)
    try:
        async with start():
            pass
    except Exception as exc:
        assert str(failure_of(exc)) == step, f"failed otherwise than at {step}: {exc!r}"
        assert isinstance(exc, BaseExceptionGroup) == grouped, f"{exc!r}"
        return
    pytest.fail(f"served although {step} failed")


async def started_and_stopped(start: Callable[[], contextlib.AbstractAsyncContextManager]
                              ) -> Leftovers:
    """Start and stop a service; what ran before, to check what it left."""
    before = Leftovers()
    async with start():
        pass
    return before


def crash_at(monkeypatch: pytest.MonkeyPatch, owner: object, attribute: str,
             after_seconds: float = 0.5) -> None:
    """Make the loop ``owner.attribute`` run a moment, then escape with an exception."""

    async def crash(*_args, **_kwargs):
        await asyncio.sleep(after_seconds)
        raise StepFailed(attribute)

    monkeypatch.setattr(owner, attribute, crash)


def failure_of(raised: BaseException) -> StepFailed | None:
    """The StepFailed a start raised, itself or inside the group of a crashed loop."""
    if isinstance(raised, BaseExceptionGroup):
        found = raised.subgroup(StepFailed)
        return found.exceptions[0] if found else None
    return raised if isinstance(raised, StepFailed) else None


class Leftovers:
    """What was running before a service started, to tell apart what it left."""

    def __init__(self) -> None:
        self._before = asyncio.all_tasks()

    async def assert_none(self, *, ports: Sequence[int], postgres_dsn: str = "",
                          redis_url: str = "") -> None:
        """No task the service started still runs, its ports are free, and it holds no
        session in ``postgres_dsn``'s database nor any client of ``redis_url``."""
        assert not await self.tasks()
        assert [port for port in ports if not is_free(port)] == []
        if postgres_dsn:
            assert await postgres_sessions(postgres_dsn) == 0
        if redis_url:
            assert await redis_clients(redis_url) == 0

    async def tasks(self) -> set[asyncio.Task]:
        """The tasks started since and still running."""
        async def running() -> set[asyncio.Task]:
            return {t for t in asyncio.all_tasks() - self._before
                    if not t.done() and t is not asyncio.current_task()}

        return await settled(running)


@contextlib.contextmanager
def journal_process(directory: Path) -> Iterator[JournalProcess]:
    """A journal for a service under test to read, in a process of its own: an in-process
    one would keep starting tasks of its own in the test's event loop."""
    process = JournalProcess({"JOURNAL_OBJECT_STORE": "local",
                              "JOURNAL_LOCAL_PATH": str(directory / "journal"),
                              "JOURNAL_METRICS_PORT": "0"}, directory / "journal.log").start()
    try:
        yield process
    finally:
        process.terminate()


async def postgres_sessions(dsn: str) -> int:
    """Sessions open on ``dsn``'s database other than this check's own, once closes have
    reached the server."""
    database = dsn.rsplit("/", 1)[1]
    connection = await asyncpg.connect(dsn)
    try:
        return await settled(lambda: connection.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = $1"
            " AND pid <> pg_backend_pid()", database))
    finally:
        await connection.close()


async def redis_clients(url: str) -> int:
    """Clients connected to the Redis at ``url`` other than this check's own."""
    redis = Redis.from_url(url)
    async def others() -> int:
        return len(await redis.client_list()) - 1

    try:
        return await settled(others)
    finally:
        await redis.aclose()
