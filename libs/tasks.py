"""Background tasks tied to a block: started in it, ended (and awaited) at its end.

:func:`background` is how a service runs its loops (projectors, followers, hygiene):
one :class:`asyncio.TaskGroup` for the time the service serves. At the block's end each
loop that can stop cooperatively is asked to, given a grace, then every loop still
running is cancelled. Each loop handles the failure of one pass itself (logs it and
tries again); an exception that escapes a loop is a bug, and the group then cancels the
serving block, so the service shuts down and its process exits with that error rather
than serve on without the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

# How long a loop asked to stop may take (a follower saves its cursor) before it is cancelled.
STOP_GRACE_SECONDS = 10.0


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


class Loops:
    """The loops of one :func:`background` block."""

    def __init__(self, group: asyncio.TaskGroup) -> None:
        self._group = group
        self._tasks: list[asyncio.Task] = []
        self._stoppable: dict[asyncio.Task, Callable[[], None]] = {}

    def start(self, work: Coroutine[Any, Any, None], *,
              stop: Callable[[], None] | None = None) -> asyncio.Task:
        """Run ``work`` until the block ends; ``stop`` asks it to finish by itself."""
        task = self._group.create_task(work)
        self._tasks.append(task)
        if stop is not None:
            self._stoppable[task] = stop
        return task

    async def end(self, grace_seconds: float | None) -> None:
        """Ask the stoppable loops to stop, wait up to the grace (``None``: for as long as
        they take), then cancel what still runs."""
        for stop in self._stoppable.values():
            stop()
        if self._stoppable:
            await asyncio.wait(self._stoppable, timeout=grace_seconds)
        for task in self._tasks:
            task.cancel()


@contextlib.asynccontextmanager
async def background(grace_seconds: float | None = STOP_GRACE_SECONDS) -> AsyncIterator[Loops]:
    """A task group whose loops end with the block.

    An exception raised in the block comes out as itself, after the loops have ended (a
    bare TaskGroup would wrap it in an ExceptionGroup); a loop's escaped exception comes
    out as the group's ExceptionGroup."""
    raised: BaseException | None = None
    async with asyncio.TaskGroup() as group:
        loops = Loops(group)
        try:
            yield loops
        except BaseException as exc:  # GeneratorExit too: the block's caller closed it
            # Cancelled is also how the group reports a crashed loop to this block: the
            # group, left with only its own error, raises that ExceptionGroup below.
            raised = exc
        await loops.end(grace_seconds)
    if raised is not None:
        raise raised
