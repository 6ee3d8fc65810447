"""Caches that every replica must empty at once: PostgreSQL LISTEN/NOTIFY.

A change that makes cached data wrong is announced with ``pg_notify`` in the
statement (or trigger) that makes it, so every listener hears it when, and only
if, the change commits. Each process listens on one connection of its own
(:class:`Invalidations`); the gateway's thread and API-key caches use it, and
agent memory relays what it hears to gateways (``WatchPinnedChanges``).

A process cannot hear what happens while that connection is down, so then it
caches nothing (``live`` is false) and, when it has listened again, forgets
everything it cached before. A listening connection that stalls without
breaking is the one case left; each cache's expiry bounds it.

A read that started before a change and ends after it must not store what it
read: a cache records :attr:`Invalidations.generation` before it reads and
stores the result only if nothing was announced in between.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

import asyncpg

from libs import tasks

logger = logging.getLogger(__name__)

RETRY_SECONDS = 1.0


class Invalidations:
    def __init__(self, dsn: str, *, retry_seconds: float = RETRY_SECONDS) -> None:
        self._dsn = dsn
        self._retry_seconds = retry_seconds
        self._handlers: dict[str, Callable[[str], None]] = {}
        self._resets: list[Callable[[], None]] = []
        self.live = False
        self.generation = 0

    def on(self, channel: str, forget: Callable[[str], None], reset: Callable[[], None]) -> None:
        """``forget(payload)`` for each announcement on ``channel``; ``reset()`` whenever
        announcements may have been missed."""
        self._handlers[channel] = forget
        self._resets.append(reset)

    @contextlib.asynccontextmanager
    async def listening(self) -> AsyncIterator[Invalidations]:
        """Listen until the block ends; the first connection is made before it starts."""
        lost = asyncio.Event()
        connection = await self._listen(lost)
        try:
            async with tasks.running(self._keep_listening(connection, lost)):
                yield self
        finally:
            self._lose()

    async def _listen(self, lost: asyncio.Event) -> asyncpg.Connection | None:
        connection = None
        try:
            connection = await asyncpg.connect(self._dsn, timeout=10)
            connection.add_termination_listener(lambda _: lost.set())
            for channel in self._handlers:
                await connection.add_listener(channel, self._heard)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            logger.warning("not listening for cache invalidations (%s): caching nothing", exc)
            if connection is not None:
                connection.terminate()
            return None
        self._reset()  # whatever was cached before may have missed an announcement
        self.live = True
        return connection

    async def _keep_listening(self, connection: asyncpg.Connection | None,
                              lost: asyncio.Event) -> None:
        try:
            while True:
                if connection is not None:
                    await lost.wait()
                    logger.warning("cache invalidations lost: caching nothing until relistening")
                    connection.terminate()
                    connection = None
                self._lose()
                await asyncio.sleep(self._retry_seconds)
                lost = asyncio.Event()
                connection = await self._listen(lost)
        finally:
            if connection is not None and not connection.is_closed():
                await connection.close()

    def _heard(self, connection, pid, channel: str, payload: object) -> None:
        self.generation += 1
        self._handlers[channel](str(payload))  # a NOTIFY payload is text

    def _lose(self) -> None:
        self.live = False
        self._reset()

    def _reset(self) -> None:
        self.generation += 1
        for reset in self._resets:
            reset()
