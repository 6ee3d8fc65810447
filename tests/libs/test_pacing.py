"""IdleBackoff: a polling loop looks less and less often while it finds nothing, and at
once when told something happened."""

from __future__ import annotations

import asyncio
import time

import pytest

from libs.pacing import IdleBackoff


async def _looks(backoff: IdleBackoff, seconds: float, found=lambda n: False) -> list[float]:
    """Times at which a loop paced by ``backoff`` looked, over ``seconds``."""
    started, looks = time.monotonic(), []
    while time.monotonic() - started < seconds:
        looks.append(time.monotonic() - started)
        await backoff.pause(busy=found(len(looks)))
    return looks


async def test_an_idle_loop_looks_less_and_less_often_up_to_the_longest_pause():
    looks = await _looks(IdleBackoff(0.05, 0.4), 2.0)
    gaps = [b - a for a, b in zip(looks, looks[1:], strict=False)]
    assert gaps[:3] == pytest.approx([0.05, 0.1, 0.2], abs=0.04)
    assert all(gap == pytest.approx(0.4, abs=0.06) for gap in gaps[3:])
    assert len(looks) <= 8  # a steady 0.05 s poll would have looked 40 times


async def test_finding_work_brings_the_pause_back_to_the_first():
    backoff = IdleBackoff(0.05, 10.0)
    await _looks(backoff, 0.5)
    assert backoff.next_pause >= 0.4
    started = time.monotonic()
    await backoff.pause(busy=True)
    assert time.monotonic() - started == pytest.approx(0.05, abs=0.04)


async def test_a_wake_ends_a_long_pause_at_once_and_starts_over():
    backoff = IdleBackoff(0.05, 30.0)
    backoff.next_pause = 30.0
    pausing = asyncio.create_task(backoff.pause(busy=False))
    await asyncio.sleep(0.1)
    woken_at = time.monotonic()
    backoff.wake()
    assert await asyncio.wait_for(pausing, 1) is True
    assert time.monotonic() - woken_at < 0.05
    assert backoff.next_pause == 0.05


async def test_a_wake_during_a_look_is_not_lost():
    backoff = IdleBackoff(5.0, 30.0)
    backoff.wake()  # came while the loop was looking, before it paused
    started = time.monotonic()
    assert await backoff.pause(busy=False) is True
    assert time.monotonic() - started < 0.05


def test_the_pauses_must_make_sense():
    with pytest.raises(ValueError):
        IdleBackoff(0, 1)
    with pytest.raises(ValueError):
        IdleBackoff(2, 1)
