"""Redis is a cache: wiping it, or restarting thread memory, at any moment of a
stream never leaves a message outside both the summary and the window.

Whether a thread needs a summary is decided from durable state (the summary's
last offset and the journal's thread stats), so the counters Redis holds can be
lost at any time and are rebuilt, and the jobs a stopped instance left behind are
picked up again by the next one.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from redis.asyncio import Redis

from services.thread_memory.summaries import SummaryStore, ThreadKey
from testkit.journal_client import message, principal
from tests.thread_memory.conftest import start_thread_memory, thread_memory_env

logger = logging.getLogger(__name__)

ALICE = principal(user="alice")
# Messages of 120-180 tokens: 2,000 tokens are crossed within 17 messages, fewer
# than the window's 20, so a summary that is kept up to date leaves no gap at all.
LONG = {"long-a": principal(), "long-b": principal(), "long-alice": ALICE}
# Short messages: the 50-message threshold decides.
SHORT = {"short-a": principal(), "short-b": ALICE}
ROUNDS = 8
LONG_PER_ROUND, SHORT_PER_ROUND = 6, 14


def long_text(thread: str, index: int) -> str:
    words = 120 + (index % 5) * 15
    return f"{thread} {index}: " + " ".join(["alpha"] * words)


def batch(thread: str, start: int, count: int, long: bool) -> list:
    return [message(f"{thread}-{i}", long_text(thread, i) if long else f"ok {i}")
            for i in range(start, start + count)]


@pytest.fixture
def summary_env(store_env, request, tmp_path) -> dict[str, str]:
    """Summaries on the same kind of object store as the journal."""
    if store_env["JOURNAL_OBJECT_STORE"] == "local":
        return {"THREAD_MEMORY_OBJECT_STORE": "local",
                "THREAD_MEMORY_LOCAL_PATH": str(tmp_path / "summaries")}
    return request.getfixturevalue("s3_server").thread_memory_env()


class Instance:
    """A thread-memory service that can be stopped and started again."""

    def __init__(self, env, journal, redis_url) -> None:
        self._args = (env, journal, redis_url)
        self._running = None
        self.memory = None

    async def start(self) -> None:
        self._running = start_thread_memory(*self._args)
        self.memory = await self._running.__anext__()

    async def stop(self) -> None:
        await self._running.aclose()
        self._running = self.memory = None


async def wipe(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    try:
        await redis.flushall()
    finally:
        await redis.aclose()


async def job_started(fake_model, timeout: float = 10.0) -> None:
    """Wait (a while) for the next summarization job to reach the model."""
    jobs = len(fake_model.chats("rolling summary"))
    for _ in range(int(timeout / 0.01)):
        if len(fake_model.chats("rolling summary")) > jobs:
            return
        await asyncio.sleep(0.01)


async def gaps(memory, journal, thread: str, who) -> tuple[list[int], int, int]:
    """Offsets in neither the summary nor the window; the thread's length; the summary's end."""
    last = (await journal.stats(thread, who=who)).last_offset
    summary, _ = await SummaryStore(memory.service.objects).load(
        ThreadKey(who.account_id, who.agent_id, thread))
    end = summary.last_message_offset if summary else 0
    if summary is not None:
        assert summary.message_count == end  # each summary built on the previous one
    window = {m.offset for m in (await memory.context(thread, who=who)).messages}
    return sorted(set(range(end + 1, last + 1)) - window), last, end


async def test_wiping_redis_and_restarting_mid_stream_loses_no_message(
        journal, redis_server, summary_env, fake_model):
    fake_model.delay_seconds = 0.3  # jobs are still queued or running when things break
    env = thread_memory_env(journal.address, redis_server.url, summary_env, fake_model.base_url)
    instance = Instance(env, journal, redis_server.url)
    threads = {**{t: (who, True) for t, who in LONG.items()},
               **{t: (who, False) for t, who in SHORT.items()}}
    written = dict.fromkeys(threads, 0)

    async def append_round() -> None:
        for thread, (who, long) in threads.items():
            count = LONG_PER_ROUND if long else SHORT_PER_ROUND
            await journal.append(thread, batch(thread, written[thread], count, long), who=who)
            written[thread] += count

    await instance.start()
    try:
        for round_ in range(ROUNDS):
            await append_round()
            if round_ == 1:  # wiped while the feed is being counted
                await wipe(redis_server.url)
            elif round_ == 3:  # wiped while a job runs, then restarted with jobs queued
                await job_started(fake_model)
                await wipe(redis_server.url)
                await instance.stop()
                await append_round()  # appended while thread memory is down
                await instance.start()
            elif round_ in (5, ROUNDS - 1):  # stopped with jobs queued, wiped while down;
                await instance.stop()  # after the last round nothing new comes to wake them
                await wipe(redis_server.url)
                await instance.start()
        await instance.memory.settle()
        found = {thread: await gaps(instance.memory, journal, thread, who)
                 for thread, (who, _) in threads.items()}
    finally:
        if instance.memory is not None:
            await instance.stop()
    logger.info("after %d rounds, 4 Redis wipes and 3 restarts: %s", ROUNDS, {
        t: {"messages": last, "summary_end": end, "missing": len(missing)}
        for t, (missing, last, end) in found.items()})
    for thread in LONG:
        missing, last, end = found[thread]
        assert written[thread] == last
        assert missing == [], f"{thread}: {len(missing)} of {last} offsets in neither: {missing}"
    for thread in SHORT:
        missing, last, end = found[thread]
        # Below 50 messages since the summary the seed keeps no summary of them yet.
        assert last - end < 50, f"{thread}: {last - end} messages past the summary, never summarized"
