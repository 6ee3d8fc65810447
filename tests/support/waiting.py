"""Waiting, in tests, for what the system does in the background."""

from __future__ import annotations

import asyncio
import time


async def eventually(check, timeout: float = 5.0) -> float:
    """Seconds until ``await check()`` held; fails the test after ``timeout``."""
    started = time.monotonic()
    while not await check():
        assert time.monotonic() - started < timeout, "not within the time allowed"
        await asyncio.sleep(0.02)
    return time.monotonic() - started
