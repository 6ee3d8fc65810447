"""An idle journal waits for work instead of polling, and serves the next write at once:
the WAL is flushed when written (at most once per flush interval), a caught-up
subscription sleeps until a write, and the memtable is flushed only after writes."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from agentmemory.journal.v1 import journal_service_pb2 as pb

from libs import clients
from services.journal.app import running
from services.journal.settings import JournalConfig
from tests.support.journal_client import JournalClient, message


@contextlib.asynccontextmanager
async def _journal(tmp_path, flush_interval_ms: int) -> AsyncIterator[JournalClient]:
    config = JournalConfig.from_env({
        "JOURNAL_PORT": "0", "JOURNAL_OBJECT_STORE": "local",
        "JOURNAL_LOCAL_PATH": str(tmp_path / "journal"),
        "JOURNAL_FLUSH_INTERVAL_MS": str(flush_interval_ms)})
    async with running(config) as (journal, server), \
            clients.channel(f"127.0.0.1:{server.port}") as channel:
        yield JournalClient(channel, journal=journal)


async def _timed_append(journal, thread: str, message_id: str) -> float:
    started = time.monotonic()
    await journal.append(thread, [message(message_id)])
    return time.monotonic() - started


async def test_an_append_after_a_quiet_spell_is_durable_without_waiting_out_the_interval(
        tmp_path):
    """With a 2 s interval, SlateDB's own timer made such an append wait 0-2 s."""
    async with _journal(tmp_path, 2000) as journal:
        waits = []
        for i in range(3):
            await asyncio.sleep(2.2)  # longer than the interval: nothing is being flushed
            waits.append(await _timed_append(journal, "quiet", f"m{i}"))
        assert max(waits) < 0.5, waits
        assert [m.id for m in await journal.read_all("quiet")] == ["m0", "m1", "m2"]


async def test_writes_coming_faster_than_the_interval_are_flushed_once_per_interval(tmp_path):
    async with _journal(tmp_path, 300) as journal:
        await _timed_append(journal, "busy", "first")  # flushed at once
        acked, started = 0, time.monotonic()
        while time.monotonic() - started < 2.0:  # one at a time: each waits for its flush
            await journal.append("busy", [message(f"m{acked}")])
            acked += 1
        # Flushes 0.3 s apart: about 2.0 / 0.3 of them, never more.
        assert 4 <= acked <= 8, acked
        concurrent = await asyncio.gather(*(_timed_append(journal, f"c{i}", "x")
                                            for i in range(20)))
        assert max(concurrent) < 0.3 + 0.5  # the twenty share one or two flushes


async def test_a_caught_up_subscription_reads_nothing_until_a_write_then_gets_it_at_once(
        local_journal, monkeypatch):
    shard = local_journal.journal.shards[0]
    reads = []
    read_feed = shard.read_feed

    async def counted(*args, **kwargs):
        reads.append(time.monotonic())
        return await read_feed(*args, **kwargs)

    monkeypatch.setattr(shard, "read_feed", counted)
    call = local_journal.stub.Subscribe(pb.SubscribeRequest(after_sequence=0), timeout=30)
    events = call.__aiter__()
    await local_journal.append("t", [message("before")])
    assert (await asyncio.wait_for(events.__anext__(), 5)).message.id == "before"
    await asyncio.sleep(0.3)
    idle_from = len(reads)
    await asyncio.sleep(2.5)
    assert len(reads) == idle_from  # it used to look every second
    started = time.monotonic()
    await local_journal.append("t", [message("after")])
    assert (await asyncio.wait_for(events.__anext__(), 5)).message.id == "after"
    assert time.monotonic() - started < 0.5
    call.cancel()


async def test_the_memtable_is_flushed_within_5_s_of_a_write(tmp_path):
    """The bound on what a new writer replays (README, failover time)."""
    compacted = tmp_path / "journal" / "shard-0000" / "compacted"
    async with _journal(tmp_path, 10) as journal:
        await asyncio.sleep(6)  # idle: nothing to flush
        assert not list(compacted.glob("*.sst"))
        await journal.append("t", [message("m")])
        written = time.monotonic()
        while not list(compacted.glob("*.sst")):
            assert time.monotonic() - written < 5 + 2, "memtable not flushed within 5 s"
            await asyncio.sleep(0.1)
