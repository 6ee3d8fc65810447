"""Background tasks tied to a block: started at its top, cancelled and awaited at its end."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from typing import Any


async def cancelled(task: asyncio.Future) -> None:
    """Cancel ``task`` and wait until it has ended (its cancellation is not an error)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


@contextlib.asynccontextmanager
async def running(work: Coroutine[Any, Any, None]) -> AsyncIterator[asyncio.Task]:
    """``work`` as a task for the duration of the block."""
    task = asyncio.create_task(work)
    try:
        yield task
    finally:
        await cancelled(task)
