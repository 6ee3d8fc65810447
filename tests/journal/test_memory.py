"""A journal's memory stays bounded however much it reads: SlateDB's block cache is the
journal's own, of JOURNAL_CACHE_MB (the default one SlateDB builds, 640 MiB per database,
kept every block read, so the process grew with the data read back, as if it leaked)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from agentmemory.journal.v1 import journal_service_pb2 as pb

from libs import clients
from testkit.journal_client import JournalClient, message, principal
from testkit.journal_process import JournalProcess

MESSAGE_BYTES = 256 * 1024
ROUNDS, PER_ROUND = 6, 48  # 72 MiB in all, 12 MiB a round


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def test_reading_back_72_mib_grows_the_journal_by_less_than_that(tmp_path):
    env = {"JOURNAL_OBJECT_STORE": "local", "JOURNAL_LOCAL_PATH": str(tmp_path / "j"),
           "JOURNAL_CACHE_MB": "8"}
    process = JournalProcess(env, tmp_path / "journal.log").start()
    try:
        async with clients.channel(process.address, default_timeout=30) as channel:
            journal = JournalClient(channel)
            started = None
            for round_ in range(ROUNDS):
                first = round_ * PER_ROUND + 1
                for offset in range(first, first + PER_ROUND):
                    # Reasoning is stored and not tokenized: the test costs copies, not BPE.
                    await journal.append("big", [message(
                        f"m{offset}", reasoning=os.urandom(MESSAGE_BYTES // 2).hex())])
                await asyncio.sleep(5.5)  # the memtable is flushed: the round lies in an SST
                for offset in range(first, first + PER_ROUND):
                    reply = await journal.stub.ReadRange(pb.ReadRangeRequest(
                        principal=principal(), thread_id="big", from_offset=offset,
                        page_size=1))
                    assert len(reply.messages[0].reasoning) == MESSAGE_BYTES
                if started is None:  # after one round: the memtable's memory is in use
                    started = _rss_mib(process.process.pid)
            grown = _rss_mib(process.process.pid) - started
            # 8 MiB of cache, allocator slack around 12 MiB memtables; a cache that kept
            # every block read held the 60 MiB read since (and what compactions rewrote).
            assert grown < 40, f"the journal grew by {grown:.0f} MiB"
    finally:
        process.terminate()
