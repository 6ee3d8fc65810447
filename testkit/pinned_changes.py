"""Waiting until agent memory's announcements of changes (WatchPinnedChanges) have
reached a gateway's PinnedCache in this process."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from services.agent_memory.memories.store.pinned_changes import CHANNEL
from services.gateway.pinned import PinnedCache
from testkit.waiting import eventually


async def all_heard(cache: PinnedCache, execute: Callable[..., Awaitable[object]],
                    timeout: float = 15.0) -> None:
    """Return once every change announced before the call has reached ``cache``.

    ``execute(statement, *args)`` runs a statement on agent memory's database. Two
    markers (accounts nobody has) are announced one after the other, each waited for:
    agent memory relays what it heard in batches, in any order within one, and the
    second marker comes in a batch after the first's, so once it is heard so is all
    that was announced before the first.
    """
    heard: set[str] = set()
    forget = cache.forget

    def forgetting(account_id: str) -> None:
        heard.add(account_id)
        forget(account_id)

    cache.forget = forgetting
    try:
        for _ in range(2):
            marker = f"marker-{uuid.uuid4().hex}"
            await execute("SELECT pg_notify($1, $2)", CHANNEL, marker)

            async def arrived(marker: str = marker) -> bool:
                return marker in heard

            await eventually(arrived, timeout)
    finally:
        del cache.forget
