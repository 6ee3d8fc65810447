"""Which accounts' ListPinned (and RecallProcedures) answers may have changed, for
WatchPinnedChanges.

PostgreSQL triggers (migrations 0006 and 0007) announce every change to what
ListPinned reads, and to what a recalled procedure shows, whoever makes it, on
``agent_memory_pinned`` with the account id, when the change commits. This
replica listens on one connection of its own (``libs.invalidations``) and relays
each announcement to every open watch.

A watch opens only while the replica listens, and ends when listening is lost
(announcements made meanwhile are gone, so the watcher must assume it missed
some) or the replica stops. Each watch keeps the set of accounts announced and
not yet sent: a slow watcher costs one entry per account, however many
changes it has not read yet.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from libs.errors import Unavailable
from libs.invalidations import Invalidations

CHANNEL = "agent_memory_pinned"
EVERY_ACCOUNT = "*"  # the triggers' payload for TRUNCATE


class _Watch:
    def __init__(self) -> None:
        self.accounts: set[str] = set()
        self.woken = asyncio.Event()
        self.lost = False

    def add(self, account_id: str) -> None:
        self.accounts.add(account_id)
        self.woken.set()

    def lose(self) -> None:
        self.lost = True
        self.woken.set()


class PinnedChanges:
    def __init__(self, dsn: str, *, retry_seconds: float = 1.0) -> None:
        self._invalidations = Invalidations(dsn, retry_seconds=retry_seconds)
        self._invalidations.on(CHANNEL, self._heard, self._lose_all)
        self._watches: set[_Watch] = set()
        self._closed = False

    @contextlib.asynccontextmanager
    async def listening(self) -> AsyncIterator[PinnedChanges]:
        async with self._invalidations.listening():
            try:
                yield self
            finally:
                self.close()

    def close(self) -> None:
        """End every watch and open no more (before the server drains its calls)."""
        self._closed = True
        self._lose_all()

    async def watch(self) -> AsyncIterator[str | None]:
        """``None`` once subscribed, then each account announced (``EVERY_ACCOUNT``
        for all of them); UNAVAILABLE when announcements may have been missed."""
        if self._closed or not self._invalidations.live:
            raise Unavailable("not hearing memory changes", reason="POSTGRES_UNAVAILABLE")
        watch = _Watch()
        self._watches.add(watch)
        try:
            yield None
            while True:
                await watch.woken.wait()
                watch.woken.clear()
                if watch.lost:
                    raise Unavailable("stopped hearing memory changes",
                                      reason="POSTGRES_UNAVAILABLE")
                accounts, watch.accounts = watch.accounts, set()
                for account_id in ([EVERY_ACCOUNT] if EVERY_ACCOUNT in accounts else accounts):
                    yield account_id
        finally:
            self._watches.discard(watch)

    def _heard(self, account_id: str) -> None:
        for watch in self._watches:
            watch.add(account_id)

    def _lose_all(self) -> None:
        for watch in self._watches:
            watch.lose()
        self._watches.clear()
