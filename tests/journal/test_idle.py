"""An idle journal waits for work instead of polling, and serves the next write at once:
the WAL is flushed when written (at most once per flush interval), a caught-up
subscription sleeps until a write, the memtable is flushed only after writes, and
health follows a failure at once and fencing as soon as SlateDB sees it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

from agentmemory.journal.v1 import journal_service_pb2 as pb
from grpc_health.v1 import health_pb2, health_pb2_grpc

from libs import clients
from libs.errors import Unavailable
from services.journal.app import running
from services.journal.journal import ShardOpener
from services.journal.settings import JournalConfig
from testkit.journal_client import JournalClient, message


def _config(tmp_path, flush_interval_ms: int = 10) -> JournalConfig:
    return JournalConfig.from_env({
        "JOURNAL_PORT": "0", "JOURNAL_OBJECT_STORE": "local",
        "JOURNAL_LOCAL_PATH": str(tmp_path / "journal"),
        "JOURNAL_FLUSH_INTERVAL_MS": str(flush_interval_ms)})


@contextlib.asynccontextmanager
async def _journal(tmp_path, flush_interval_ms: int = 10) -> AsyncIterator[JournalClient]:
    async with running(_config(tmp_path, flush_interval_ms)) as (journal, server):
        address = f"127.0.0.1:{server.port}"
        async with clients.channel(address) as channel:
            yield JournalClient(channel, journal=journal, address=address)


async def _seconds_until_not_serving(journal: JournalClient, timeout: float) -> float:
    started = time.monotonic()
    health = health_pb2_grpc.HealthStub(journal.channel)
    while (await health.Check(health_pb2.HealthCheckRequest())).status != \
            health_pb2.HealthCheckResponse.NOT_SERVING:
        assert time.monotonic() - started < timeout, "still SERVING"
        await asyncio.sleep(0.01)
    return time.monotonic() - started


async def _timed_append(journal, thread: str, message_id: str) -> float:
    started = time.monotonic()
    await journal.append(thread, [message(message_id)])
    return time.monotonic() - started


async def test_an_append_after_a_quiet_spell_is_durable_without_waiting_out_the_interval(
        tmp_path):
    """With a 4 s interval, SlateDB's own timer made such an append wait 0-4 s."""
    async with _journal(tmp_path, 4000) as journal:
        waits = []
        for i in range(3):
            await asyncio.sleep(4.2)  # longer than the interval: nothing is being flushed
            waits.append(await _timed_append(journal, "quiet", f"m{i}"))
        # Each append is a local round trip; the timer would pass this one time in 64.
        assert max(waits) < 1.0, waits
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
        # The twenty share one or two flushes (0.6 s); one flush each would take 6 s.
        assert max(concurrent) < 2.0


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
    assert time.monotonic() - started < 1.5  # not woken, it would wait the full 5 s
    call.cancel()


async def test_the_memtable_is_flushed_within_5_s_of_a_write(tmp_path):
    """The bound on what a new writer replays (docs/operations.md, failover time)."""
    compacted = tmp_path / "journal" / "shard-0000" / "compacted"
    async with _journal(tmp_path, 10) as journal:
        await asyncio.sleep(6)  # idle: nothing to flush
        assert not list(compacted.glob("*.sst"))
        await journal.append("t", [message("m")])
        written = time.monotonic()
        while not list(compacted.glob("*.sst")):
            assert time.monotonic() - written < 5 + 2, "memtable not flushed within 5 s"
            await asyncio.sleep(0.1)


async def test_a_shard_that_fails_turns_the_journal_not_serving_at_once(tmp_path, monkeypatch):
    # Only a failure SlateDB reports needs polling: with a 30 s poll, "at once" is plain.
    monkeypatch.setattr("services.journal.app.FENCING_POLL_SECONDS", 30.0)
    async with _journal(tmp_path) as journal:
        await asyncio.sleep(0.5)  # the watch is waiting (stopped before, it would not wait)
        journal.journal.shards[0].stop(Unavailable("storage lost", reason="JOURNAL_UNAVAILABLE"))
        assert await _seconds_until_not_serving(journal, 10) < 1.0  # a poll: up to 30 s


async def test_a_fenced_idle_journal_turns_not_serving_once_slatedb_sees_the_newer_writer(
        tmp_path):
    """SlateDB reads its manifest each second; the health watch looks each second."""
    async with _journal(tmp_path) as journal:
        await journal.append("t", [message("m")])
        config = _config(tmp_path)
        newer = await ShardOpener(config.store, config.shards).open(0)  # fences this one
        try:
            # SlateDB's 1 s manifest read plus the watch's 1 s poll, with room for a busy
            # machine; a journal that never notices stays SERVING past the 10 s.
            assert await _seconds_until_not_serving(journal, 10) < 5
        finally:
            await newer.close()
