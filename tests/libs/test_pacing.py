"""IdleBackoff: a polling loop looks less and less often while it finds nothing, and at
once when told something happened."""

from __future__ import annotations

import asyncio
import time

import pytest

from libs.pacing import IdleBackoff

# The clock is checked one-sided: a timeout never ends early, but a busy machine can
# end it late by any amount, so upper bounds only tell a pause apart from a far longer one.


async def test_an_idle_loop_looks_less_and_less_often_up_to_the_longest_pause():
    backoff = IdleBackoff(0.05, 0.4)
    pauses, gaps = [], []
    for _ in range(6):
        pauses.append(backoff.next_pause)
        started = time.monotonic()
        assert await backoff.pause(busy=False) is False
        gaps.append(time.monotonic() - started)
    assert pauses == [0.05, 0.1, 0.2, 0.4, 0.4, 0.4]
    assert all(gap >= pause - 0.01 for gap, pause in zip(gaps, pauses, strict=True))


async def test_finding_work_brings_the_pause_back_to_the_first():
    backoff = IdleBackoff(0.05, 10.0)
    for _ in range(3):
        await backoff.pause(busy=False)
    assert backoff.next_pause == 0.4
    backoff.next_pause = 10.0  # idle for long
    started = time.monotonic()
    assert await backoff.pause(busy=True) is False
    assert 0.04 <= time.monotonic() - started < 0.5  # the first pause, not the 10 s
    assert backoff.next_pause == 0.1  # and found nothing again: doubled from the first


async def test_a_wake_ends_a_long_pause_at_once_and_starts_over():
    backoff = IdleBackoff(0.05, 30.0)
    backoff.next_pause = 30.0
    pausing = asyncio.create_task(backoff.pause(busy=False))
    await asyncio.sleep(0.1)
    woken_at = time.monotonic()
    backoff.wake()
    assert await asyncio.wait_for(pausing, 1) is True
    assert time.monotonic() - woken_at < 0.5  # not the 30 s
    assert backoff.next_pause == 0.05


async def test_a_wake_during_a_look_is_not_lost():
    backoff = IdleBackoff(5.0, 30.0)
    backoff.wake()  # came while the loop was looking, before it paused
    started = time.monotonic()
    assert await backoff.pause(busy=False) is True
    assert time.monotonic() - started < 0.5  # not the 5 s
    assert backoff.next_pause == 5.0


def test_the_pauses_must_make_sense():
    with pytest.raises(ValueError):
        IdleBackoff(0, 1)
    with pytest.raises(ValueError):
        IdleBackoff(2, 1)
