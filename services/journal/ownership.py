"""Shard ownership under leases: a standby until the lease is ours, then the writer.

With ``JOURNAL_LEASE_SECONDS`` above 0, every process serving a shard runs a
:class:`ShardOwnership` for it, and all of them are alike: whoever holds the
shard's lease (``services.journal.lease``) is its writer, the others are its
standbys. The cycle:

1. Wait for the lease (at once if it is free or released; after a whole time to
   live without change if its holder stopped renewing it: dead, hung or cut
   off).
2. Open the shard. Opening fences the previous writer in SlateDB, so from here
   on nothing it still tries to write can become durable, let alone be
   acknowledged. The lease is renewed from the moment it is taken, also while
   the shard opens.
3. Serve: the shard is attached to the journal and its health name
   (``libs.clients.journal.shard_health_name``) reports SERVING, which is how
   clients find the writer.
4. Stop serving at once when the lease is lost (another process took it, or it
   could not be renewed within its time to live) or the shard fails (fenced,
   or a storage failure: fail-stop). Then back to 1, as a standby: the shard's
   state is reloaded from durable data by whoever opens it next. A failed
   shard's lease is released so that a standby can take over without waiting.

On shutdown the writer closes its shards (flushing what is in flight) and then
releases their leases, so a standby takes over within one poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from libs import tasks
from libs.errors import Unavailable
from services.journal.journal import Journal, ShardOpener
from services.journal.lease import ShardLease
from services.journal.shard import Shard

logger = logging.getLogger(__name__)

RETRY_AFTER_FAILURE_SECONDS = 1.0
HEALTH_POLL_SECONDS = 0.25  # how soon a failed shard stops reporting SERVING


def lease_lost(index: int) -> Unavailable:
    return Unavailable(f"journal shard {index} lost its lease: another process writes it now",
                       reason="JOURNAL_FENCED", metadata={"shard": str(index)}, elsewhere=True)


class ShardOwnership:
    def __init__(self, journal: Journal, opener: ShardOpener, lease: ShardLease,
                 report: Callable[[int, bool], Awaitable[None]]) -> None:
        self._journal = journal
        self._opener = opener
        self._lease = lease
        self._report = report
        self._stopping = asyncio.Event()

    @property
    def index(self) -> int:
        return self._lease.shard

    async def run_forever(self) -> None:
        while not self._stopping.is_set():
            if not await self._until_stopped(self._lease.acquire()):
                return
            failed = await self._hold()
            if failed and not self._stopping.is_set():
                await asyncio.sleep(RETRY_AFTER_FAILURE_SECONDS)

    def stop(self) -> None:
        """Stop (the caller awaits run_forever): a held shard is closed, its lease released."""
        self._stopping.set()

    async def _until_stopped(self, operation: Awaitable) -> bool:
        """Run ``operation`` unless stopping comes first; whether it completed."""
        task = asyncio.ensure_future(operation)
        stopping = asyncio.ensure_future(self._stopping.wait())
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if task.done():
            task.result()
            return True
        await tasks.cancelled(task)
        return False

    async def _hold(self) -> bool:
        """Open and serve the shard while the lease lasts; True when the shard failed."""
        renewing = asyncio.create_task(self._renew_until_lost())
        shard: Shard | None = None
        failed = False
        try:
            opening = time.monotonic()
            shard = await self._opener.open(self.index)  # fences any previous writer
            self._journal.attach(shard, lease_valid=self._lease.valid)
            await self._report(self.index, True)
            logger.info("shard %d: this process is its writer now (opened in %.2f s)",
                        self.index, time.monotonic() - opening)
            failed = await self._serve(shard, renewing)
        except Exception:
            logger.exception("shard %d could not be opened", self.index)
            failed = True
        finally:
            await self._give_up(shard, renewing, failed)
        return failed

    async def _serve(self, shard: Shard, renewing: asyncio.Task) -> bool:
        """Until the lease is lost, stopping is asked, or the shard fails (True)."""
        while not renewing.done() and not self._stopping.is_set():
            if not shard.serving():
                return True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), HEALTH_POLL_SECONDS)
        return False

    async def _give_up(self, shard: Shard | None, renewing: asyncio.Task, failed: bool) -> None:
        self._journal.detach(self.index)
        await self._report(self.index, False)
        if shard is not None:
            if not self._lease.valid():
                shard.stop(lease_lost(self.index))
            shard.begin_shutdown()
            await shard.close()
        await tasks.cancelled(renewing)
        if self._stopping.is_set() or failed:
            await self._lease.release()
        logger.info("shard %d: this process is a standby for it now", self.index)

    async def _renew_until_lost(self) -> None:
        """Renew every third of the lease's time; return once it is lost."""
        while True:
            await asyncio.sleep(self._lease.renew_seconds)
            try:
                if not await self._lease.renew():
                    return
            except Unavailable as exc:
                logger.warning("shard %d: lease not renewed (%s)", self.index, exc.message)
            if not self._lease.valid():
                logger.error("shard %d: lease expired before it could be renewed", self.index)
                return

