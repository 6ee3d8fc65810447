"""Background loops in a task group: they end with their block, a crashed one ends the
block, and the block's own exception comes out as itself."""

from __future__ import annotations

import asyncio
import time

import pytest

from libs import tasks


async def forever(ran: list[str], name: str) -> None:
    ran.append(name)
    await asyncio.Event().wait()


async def test_loops_end_with_the_block_stoppable_ones_by_themselves():
    stopping, stopped, ran = asyncio.Event(), [], []

    async def stoppable() -> None:
        await stopping.wait()
        stopped.append("finished its work")

    async with tasks.background() as loops:
        polite = loops.start(stoppable(), stop=stopping.set)
        rude = loops.start(forever(ran, "rude"))
        await asyncio.sleep(0)
    assert polite.done() and not polite.cancelled() and stopped == ["finished its work"]
    assert rude.cancelled() and ran == ["rude"]


async def test_a_loop_that_ignores_its_stop_is_cancelled_after_the_grace():
    ignored: list[str] = []
    started = time.monotonic()
    async with tasks.background(grace_seconds=0.2) as loops:
        stubborn = loops.start(forever(ignored, "stubborn"), stop=lambda: ignored.append("asked"))
        await asyncio.sleep(0)
    assert 0.2 <= time.monotonic() - started < 2
    assert stubborn.cancelled() and ignored == ["stubborn", "asked"]


async def test_the_blocks_exception_comes_out_as_itself_after_the_loops_ended():
    ran: list[str] = []
    with pytest.raises(KeyError) as raised:
        async with tasks.background() as loops:
            loop = loops.start(forever(ran, "loop"))
            await asyncio.sleep(0)
            raise KeyError("the block's own")
    assert raised.value.args == ("the block's own",) and loop.cancelled()


async def test_a_crashed_loop_cancels_the_block_and_comes_out_in_a_group():
    ran: list[str] = []

    async def crashing() -> None:
        await asyncio.sleep(0.05)
        raise RuntimeError("a bug in the loop")

    reached_end = False
    with pytest.raises(ExceptionGroup) as raised:
        async with tasks.background() as loops:
            other = loops.start(forever(ran, "other"))
            loops.start(crashing())
            await asyncio.sleep(30)
            reached_end = True
    assert not reached_end and other.cancelled()
    assert [str(e) for e in raised.value.exceptions] == ["a bug in the loop"]
    assert asyncio.current_task().cancelling() == 0  # the group's cancellation was undone


async def test_a_cancelled_block_stays_cancelled():
    ran: list[str] = []

    async def serving() -> None:
        async with tasks.background() as loops:
            loops.start(forever(ran, "loop"))
            await asyncio.Event().wait()

    server = asyncio.create_task(serving())
    await asyncio.sleep(0.05)
    server.cancel()
    with pytest.raises(asyncio.CancelledError):
        await server
    assert ran == ["loop"]


async def test_a_block_closed_by_its_caller_ends_its_loops_and_closes_plainly():
    """A generator fixture's aclose() reaches the block as GeneratorExit."""
    ran: list[str] = []

    async def fixture():
        async with tasks.background() as loops:
            yield loops.start(forever(ran, "loop"))

    generator = fixture()
    loop = await anext(generator)
    await asyncio.sleep(0)
    await generator.aclose()  # no ExceptionGroup wrapping GeneratorExit
    assert ran == ["loop"] and loop.cancelled()
