"""Two journal processes on one store: the newer fences the older, and only
acknowledged messages ever exist."""

from __future__ import annotations

import asyncio
import time

import grpc
from grpc_health.v1 import health_pb2

from libs import clients
from libs.errors import error_details
from testkit.journal_client import JournalClient, message
from testkit.journal_process import JournalProcess

THREADS = ("t0", "t1", "t2", "t3")


async def _append_until_fenced(client: JournalClient, thread: str, acked: dict, fenced: list):
    """Append one message at a time until the journal refuses; record every ack."""
    for i in range(100_000):
        message_id = f"{thread}-{i}"
        try:
            reply = await client.append(thread, [message(message_id)])
        except grpc.aio.AioRpcError as exc:
            fenced.append(error_details(exc))
            return
        acked[(thread, message_id)] = reply.results[0].offset


async def test_newer_writer_fences_older_and_nothing_unacknowledged_appears(store_env, tmp_path):
    older = JournalProcess(store_env, tmp_path / "older.log").start()
    newer = JournalProcess(store_env, tmp_path / "newer.log")
    acked: dict[tuple[str, str], int] = {}
    refusals: list = []
    try:
        async with clients.channel(older.address) as channel:
            client = JournalClient(channel)
            writers = [asyncio.create_task(_append_until_fenced(client, t, acked, refusals))
                       for t in THREADS]
            while len(acked) < 40:
                await asyncio.sleep(0.05)
            await asyncio.to_thread(newer.start)  # opening the store fences the older writer
            await asyncio.wait_for(asyncio.gather(*writers), 30)

            assert len(refusals) == len(THREADS)
            for refusal in refusals:
                assert refusal.code == grpc.StatusCode.UNAVAILABLE, refusal
                assert refusal.reason == "JOURNAL_FENCED"
            later = await asyncio.gather(
                *(client.append("t0", [message(f"late-{i}")]) for i in range(5)),
                return_exceptions=True,
            )
            assert all(error_details(e).reason == "JOURNAL_FENCED" for e in later)

        deadline = time.monotonic() + 10
        while older.health() != health_pb2.HealthCheckResponse.NOT_SERVING:
            assert time.monotonic() < deadline, "fenced journal still reports SERVING"
            await asyncio.sleep(0.2)

        async with clients.channel(newer.address) as channel:
            client = JournalClient(channel)
            stored = {}
            for thread in THREADS:
                messages = await client.read_all(thread)
                assert [m.offset for m in messages] == list(range(1, len(messages) + 1))
                stored.update({(thread, m.id): m.offset for m in messages})
            assert stored == acked  # every ack is there, and nothing else is
            reply = await client.append("t0", [message("after-takeover")])
            assert reply.results[0].offset == sum(1 for t, _ in acked if t == "t0") + 1
    finally:
        older.kill()
        if newer.process:
            newer.terminate()
