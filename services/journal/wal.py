"""Group commit: a shard's write-ahead log flushed when written, at most once per interval.

SlateDB can flush its WAL on a timer (``flush_interval``), but the timer ticks
whether or not anything was written: at the journal's 10 ms, a hundred wake-ups
a second per shard, about 1% of a core each on an idle platform. The shards open
SlateDB without the timer and flush here instead. The first write after a quiet
spell is flushed at once; while writes keep coming, flushes start at least one
interval apart, so concurrent appends share a flush (one object-store PUT) as
before, and no write waits longer than an interval plus the flush before it.
Nothing wakes up while nothing is written.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable

from slatedb.uniffi import Db, FlushOptions, FlushType

_WAL = FlushOptions(flush_type=FlushType.WAL)


async def flush(db: Db) -> None:
    """Flush what was written to ``db`` into its WAL in the object store."""
    await db.flush_with_options(_WAL)


class WalFlusher:
    """Flushes ``db``'s WAL after :meth:`written`; a failed flush is handed to
    ``failed`` and ends the flusher (the writes' handles fail with it: fail-stop)."""

    def __init__(self, db: Db, interval_seconds: float,
                 failed: Callable[[Exception], None]) -> None:
        self._db = db
        self._interval = interval_seconds
        self._failed = failed
        self._pending = asyncio.Event()
        self._task = asyncio.create_task(self._flush_forever())

    def written(self) -> None:
        """A write reached SlateDB: flush it now, or one interval after the last flush began."""
        self._pending.set()

    async def close(self) -> None:
        """Stop flushing (the database's shutdown flushes what is left)."""
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _flush_forever(self) -> None:
        began = -math.inf
        while True:
            await self._pending.wait()
            await asyncio.sleep(max(0.0, began + self._interval - time.monotonic()))
            self._pending.clear()  # writes from here on wait for the next flush
            began = time.monotonic()
            try:
                await flush(self._db)
            except Exception as exc:
                self._failed(exc)
                return
