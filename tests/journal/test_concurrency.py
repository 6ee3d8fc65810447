"""Many appenders on one thread: offsets dense, no gaps, no duplicates."""

from __future__ import annotations

import asyncio

from testkit.journal_client import message


async def test_100_concurrent_appenders_on_one_thread(journal):
    async def appender(n: int):
        batch = [message(f"w{n}-{k}", f"writer {n} message {k}") for k in range(3)]
        reply = await journal.append("busy", batch)
        return [(r.message_id, r.offset) for r in reply.results]

    results = await asyncio.gather(*(appender(n) for n in range(100)))
    offsets = sorted(offset for batch in results for _, offset in batch)
    assert offsets == list(range(1, 301))
    for batch in results:  # a batch is atomic: its offsets are consecutive
        batch_offsets = [offset for _, offset in batch]
        assert batch_offsets == list(range(batch_offsets[0], batch_offsets[0] + 3))
    stored = await journal.read_all("busy")
    assert [m.offset for m in stored] == list(range(1, 301))
    acked = {message_id: offset for batch in results for message_id, offset in batch}
    assert {m.id: m.offset for m in stored} == acked
    assert (await journal.stats("busy")).message_count == 300


async def test_concurrent_retries_of_the_same_batch_write_it_once(journal):
    batch = [message("once-a"), message("once-b")]
    replies = await asyncio.gather(*(journal.append("retry-storm", batch) for _ in range(20)))
    assert {tuple(r.offset for r in reply.results) for reply in replies} == {(1, 2)}
    assert sum(not r.deduplicated for reply in replies for r in reply.results) == 2
    assert [m.id for m in await journal.read_all("retry-storm")] == ["once-a", "once-b"]
