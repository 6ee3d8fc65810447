"""A shard's writer and its standby, as separate processes under a lease: the standby takes
the shard over when the writer dies (fencing it), and only acknowledged messages exist."""

from __future__ import annotations

import asyncio
import signal
import time

import grpc
import pytest

from libs.clients.journal import JournalClient, shard_health_name
from libs.errors import DomainError
from libs.healthcheck import is_serving
from libs.identity import Principal
from testkit.journal_client import message
from testkit.journal_process import JournalProcess

LEASE = 1.0
THREADS = ("t0", "t1", "t2")
OWNER = Principal("acme", "helper", None, "default")  # testkit.journal_client.principal()


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

    def __init__(self, journal: JournalClient) -> None:
        self._journal = journal
        self.acked: dict[tuple[str, str], int] = {}
        self.errors: list = []
        self.stop = asyncio.Event()

    async def run(self, thread: str) -> None:
        i = 0
        while not self.stop.is_set():
            message_id = f"{thread}-{i}"
            try:
                reply = await self._journal.append(OWNER, thread,
                                                   [message(message_id)])
            except DomainError as exc:
                self.errors.append(exc)
                await asyncio.sleep(0.05)
                continue  # the same id again: idempotent
            self.acked[(thread, message_id)] = reply.results[0].offset
            i += 1


async def check_stored(journal: JournalClient, acked: dict[tuple[str, str], int]) -> None:
    for thread in THREADS:
        messages = await journal.read_range(OWNER, thread, 1, 1000)
        offsets = [m.offset for m in messages]
        assert offsets == list(range(1, len(offsets) + 1))
        stored = {(thread, m.id): m.offset for m in messages}
        assert {k: v for k, v in acked.items() if k[0] == thread}.items() <= stored.items()


async def test_a_standby_takes_over_a_killed_writer_and_every_acknowledged_message_is_kept(
        lease_env, tmp_path):
    writer = JournalProcess(lease_env, tmp_path / "writer.log").start()
    standby = JournalProcess(lease_env, tmp_path / "standby.log")
    try:
        await wait_for_writer(writer)
        await asyncio.to_thread(standby.start)
        journal = JournalClient(f"{writer.address},{standby.address}", timeout=10)
        appender = Appender(journal)
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
        await check_stored(journal, appender.acked)

        restarted = JournalProcess(lease_env, tmp_path / "restarted.log")
        await asyncio.to_thread(restarted.start)  # a restarted writer waits as a standby
        await asyncio.sleep(LEASE * 3)
        await wait_for_writer(standby, timeout=10)  # still serving (a probe may time out)
        assert not await asyncio.to_thread(holds, restarted)
        reply = await journal.append(OWNER, "t0", [message("after")])
        assert reply.results[0].offset == sum(1 for t, _ in appender.acked if t == "t0") + 1
        restarted.kill()
        await journal.close()
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
    direct = JournalClient(writer.address, timeout=10)  # clients still reaching the old writer
    both = JournalClient(f"{writer.address},{standby.address}", timeout=10)
    try:
        await wait_for_writer(writer)
        await asyncio.to_thread(standby.start)
        stale = Appender(direct)
        tasks = [asyncio.create_task(stale.run(t)) for t in THREADS]
        while len(stale.acked) < 20:
            await asyncio.sleep(0.02)
        writer.process.send_signal(signal.SIGSTOP)  # hung, not dead: its appends wait
        await wait_for_writer(standby)
        fresh = await both.append(OWNER, "t1", [message("new-writer")])
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
