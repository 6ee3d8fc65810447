"""Waiting, in tests, for what the system does in the background."""

from __future__ import annotations

import asyncio
import time


async def eventually(check, timeout: float = 5.0) -> float:
    """Seconds until ``await check()`` held; fails the test after ``timeout``.

    A check that raises AssertionError has not held yet either: it is tried again,
    and the last AssertionError is raised once the time allowed is over.
    """
    started = time.monotonic()
    while True:
        try:
            if await check():
                return time.monotonic() - started
        except AssertionError:
            if time.monotonic() - started >= timeout:
                raise
        assert time.monotonic() - started < timeout, "not within the time allowed"
        await asyncio.sleep(0.02)
