"""A shard's writer and its standby, as separate processes under a lease: the standby takes
the shard over when the writer dies (fencing it), and only acknowledged messages exist."""

from __future__ import annotations

import asyncio
import signal
import time

import grpc
import pytest
from agentmemory.journal.v1 import journal_service_pb2 as pb

from libs.errors import error_details
from libs.healthcheck import is_serving
from libs.journal_client import JournalShards, shard_health_name
from testkit.journal_client import message, principal
from testkit.journal_process import JournalProcess

LEASE = 1.0
THREADS = ("t0", "t1", "t2")


@pytest.fixture
def lease_env(store_env) -> dict[str, str]:
    return {**store_env, "JOURNAL_LEASE_SECONDS": str(LEASE)}


def holds(process: JournalProcess) -> bool:
    return is_serving(process.address, service=shard_health_name(0), timeout=0.5)


async def wait_for_writer(process: JournalProcess, timeout: float = 30.0) -> float:
    started = time.monotonic()
    while not await asyncio.to_thread(holds, process):
        assert time.monotonic() - started < timeout, "the shard was not taken over"
        await asyncio.sleep(0.05)
    return time.monotonic() - started


class Appender:
    """Appends one message at a time to each thread through the production client;
    records every acknowledgement and every error."""

    def __init__(self, shards: JournalShards) -> None:
        self._stub = shards.shard(0)
        self.acked: dict[tuple[str, str], int] = {}
        self.errors: list = []
        self.stop = asyncio.Event()

    async def run(self, thread: str) -> None:
        i = 0
        while not self.stop.is_set():
            message_id = f"{thread}-{i}"
            try:
                reply = await self._stub.Append(pb.AppendRequest(
                    principal=principal(), thread_id=thread, messages=[message(message_id)]),
                    timeout=10)
            except grpc.aio.AioRpcError as exc:
                self.errors.append(error_details(exc))
                await asyncio.sleep(0.05)
                continue  # the same id again: idempotent
            self.acked[(thread, message_id)] = reply.results[0].offset
            i += 1


async def check_stored(shards: JournalShards, acked: dict[tuple[str, str], int]) -> None:
    stub = shards.shard(0)
    for thread in THREADS:
        reply = await stub.ReadRange(pb.ReadRangeRequest(principal=principal(), thread_id=thread,
                                                         page_size=1000), timeout=10)
        offsets = [m.offset for m in reply.messages]
        assert offsets == list(range(1, len(offsets) + 1))
        stored = {(thread, m.id): m.offset for m in reply.messages}
        assert {k: v for k, v in acked.items() if k[0] == thread}.items() <= stored.items()


async def test_a_standby_takes_over_a_killed_writer_and_every_acknowledged_message_is_kept(
        lease_env, tmp_path):
    writer = JournalProcess(lease_env, tmp_path / "writer.log").start()
    standby = JournalProcess(lease_env, tmp_path / "standby.log")
    try:
        await wait_for_writer(writer)
        await asyncio.to_thread(standby.start)
        shards = JournalShards(f"{writer.address},{standby.address}")
        appender = Appender(shards)
        tasks = [asyncio.create_task(appender.run(t)) for t in THREADS]
        while len(appender.acked) < 30:
            await asyncio.sleep(0.05)
        assert not await asyncio.to_thread(holds, standby)
        writer.kill()
        takeover = await wait_for_writer(standby)
        acked_at_takeover = len(appender.acked)
        while len(appender.acked) < acked_at_takeover + 30:
            await asyncio.sleep(0.05)
        appender.stop.set()
        await asyncio.gather(*tasks)

        # Noticed after a lease without change (plus a poll), opened, serving.
        assert takeover < LEASE + 10
        assert {e.code for e in appender.errors} <= {grpc.StatusCode.UNAVAILABLE}
        await check_stored(shards, appender.acked)

        restarted = JournalProcess(lease_env, tmp_path / "restarted.log")
        await asyncio.to_thread(restarted.start)  # a restarted writer waits as a standby
        await asyncio.sleep(LEASE * 3)
        await wait_for_writer(standby, timeout=10)  # still serving (a probe may time out)
        assert not await asyncio.to_thread(holds, restarted)
        reply = await shards.shard(0).Append(pb.AppendRequest(
            principal=principal(), thread_id="t0", messages=[message("after")]), timeout=10)
        assert reply.results[0].offset == sum(1 for t, _ in appender.acked if t == "t0") + 1
        restarted.kill()
        await shards.close()
    finally:
        writer.kill()
        standby.kill()


async def test_a_writer_stopped_with_sigterm_hands_over_without_waiting_for_its_lease(
        local_store_env, tmp_path):
    env = {**local_store_env, "JOURNAL_LEASE_SECONDS": "30"}
    writer = JournalProcess(env, tmp_path / "writer.log").start()
    standby = JournalProcess(env, tmp_path / "standby.log")
    try:
        await wait_for_writer(writer)
        await asyncio.to_thread(standby.start)
        started = time.monotonic()
        assert await asyncio.to_thread(writer.terminate) == 0
        await wait_for_writer(standby)
        assert time.monotonic() - started < 30 / 2  # released: no lease to wait out
        assert "lease released" in writer.log()
    finally:
        writer.kill()
        standby.kill()


async def test_a_paused_writer_is_taken_over_and_never_acknowledges_afterwards(
        local_store_env, tmp_path):
    env = {**local_store_env, "JOURNAL_LEASE_SECONDS": str(LEASE)}
    writer = JournalProcess(env, tmp_path / "writer.log").start()
    standby = JournalProcess(env, tmp_path / "standby.log")
    direct = JournalShards(writer.address)  # clients that still reach the old writer
    both = JournalShards(f"{writer.address},{standby.address}")
    try:
        await wait_for_writer(writer)
        await asyncio.to_thread(standby.start)
        stale = Appender(direct)
        tasks = [asyncio.create_task(stale.run(t)) for t in THREADS]
        while len(stale.acked) < 20:
            await asyncio.sleep(0.02)
        writer.process.send_signal(signal.SIGSTOP)  # hung, not dead: its appends wait
        await wait_for_writer(standby)
        fresh = await both.shard(0).Append(pb.AppendRequest(
            principal=principal(), thread_id="t1", messages=[message("new-writer")]), timeout=10)
        writer.process.send_signal(signal.SIGCONT)
        await asyncio.sleep(LEASE * 2)  # the old writer runs again, and sees its lease gone
        stale.stop.set()
        await asyncio.gather(*tasks)

        assert not await asyncio.to_thread(holds, writer)
        await wait_for_writer(standby, timeout=10)  # still serving (a probe may time out)
        refusals = {(e.code, e.reason) for e in stale.errors}
        assert refusals and {code for code, _ in refusals} <= {
            grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}
        acked = {**stale.acked, ("t1", "new-writer"): fresh.results[0].offset}
        await check_stored(both, acked)  # whatever the old writer acknowledged is there
    finally:
        writer.process.send_signal(signal.SIGCONT)
        writer.kill()
        standby.kill()
        await direct.close()
        await both.close()
