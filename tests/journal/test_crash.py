"""kill -9 during a stream of appends: every acknowledged message survives, in order."""

from __future__ import annotations

import asyncio

import grpc

from libs import clients
from testkit.journal_client import JournalClient, message
from testkit.journal_process import JournalProcess

THREADS = ("c0", "c1", "c2")


async def _append_until_failure(client, thread, acked, unacked):
    for i in range(100_000):
        batch = [message(f"{thread}-{i}-{k}") for k in range(2)]
        try:
            reply = await client.append(thread, batch)
        except grpc.aio.AioRpcError:
            unacked.append((thread, batch))
            return
        acked[thread] += [(r.message_id, r.offset) for r in reply.results]


async def test_kill_9_loses_no_acknowledged_message(store_env, tmp_path):
    log = tmp_path / "journal.log"
    journal = JournalProcess(store_env, log).start()
    acked: dict[str, list[tuple[str, int]]] = {t: [] for t in THREADS}
    unacked: list = []
    async with clients.channel(journal.address) as channel:
        client = JournalClient(channel)
        writers = [asyncio.create_task(_append_until_failure(client, t, acked, unacked))
                   for t in THREADS]
        while sum(map(len, acked.values())) < 150:
            await asyncio.sleep(0.02)
        journal.kill()
        await asyncio.wait_for(asyncio.gather(*writers), 30)
    assert len(unacked) == len(THREADS)

    restarted = JournalProcess(store_env, log).start()
    try:
        async with clients.channel(restarted.address) as channel:
            client = JournalClient(channel)
            for thread in THREADS:
                stored = await client.read_all(thread)
                assert [m.offset for m in stored] == list(range(1, len(stored) + 1))
                by_id = {m.id: m.offset for m in stored}
                for message_id, offset in acked[thread]:
                    assert by_id.get(message_id) == offset, f"acked {message_id} lost"
                # Acked messages are a prefix, in the order they were appended.
                assert [m.id for m in stored[: len(acked[thread])]] == [i for i, _ in acked[thread]]
            # The client retries what it never saw acknowledged: each message exactly once.
            for thread, batch in unacked:
                await client.append(thread, batch)
                stored = await client.read_all(thread)
                assert len({m.id for m in stored}) == len(stored)
                assert {m.id for m in batch} <= {m.id for m in stored}
    finally:
        assert restarted.terminate() == 0
