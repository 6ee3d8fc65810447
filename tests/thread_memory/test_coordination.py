"""Races, redelivery, and Redis as pure derived state."""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis

from libs.identity import Principal
from libs.object_store import LocalObjectStore, S3ObjectStore, WriteConflict
from libs.object_store_settings import ObjectStoreSettings
from libs.settings import Secret
from services.thread_memory.jobs import JobTarget, Outcome, Scheduler, Status
from services.thread_memory.summaries import Summary, SummaryStore, ThreadKey, unavailable
from testkit.journal_client import message

OWNER = Principal("acme", "helper", None, "default")
THREAD = ThreadKey("acme", "helper", "t")


def summary(version: int, content: str) -> Summary:
    return Summary(version, "2026-01-01T00:00:00Z", version * 10, f"m{version}", content, 3,
                   version * 10, "test")


@pytest.fixture(params=["local", "s3"])
def object_store(request, tmp_path):
    if request.param == "local":
        return LocalObjectStore(tmp_path / "objects")
    s3 = request.getfixturevalue("s3_server")
    return S3ObjectStore(ObjectStoreSettings(
        kind="s3", s3_bucket=s3.bucket, s3_prefix=f"race-{tmp_path.name}",
        s3_endpoint=s3.endpoint, s3_access_key_id=s3.access_key_id,
        s3_secret_access_key=Secret(s3.secret_access_key)), unavailable=unavailable)


async def test_compare_and_set_rejects_the_writer_that_lost_the_race(object_store):
    store = SummaryStore(object_store)
    try:
        assert await store.load(THREAD) == (None, None)
        # Two writers both saw "no summary yet" and both write version 1.
        results = await asyncio.gather(store.write(THREAD, summary(1, "writer A"), expected=None),
                                       store.write(THREAD, summary(1, "writer B"), expected=None),
                                       return_exceptions=True)
        assert sum(isinstance(r, WriteConflict) for r in results) == 1
        current, etag = await store.load(THREAD)
        assert current.version == 1 and current.content in ("writer A", "writer B")
        # Both read version 1 and race to version 2: again exactly one wins.
        results = await asyncio.gather(store.write(THREAD, summary(2, "C"), expected=etag),
                                       store.write(THREAD, summary(2, "D"), expected=etag),
                                       return_exceptions=True)
        assert sum(isinstance(r, WriteConflict) for r in results) == 1
        latest, _ = await store.load(THREAD)
        assert latest.version == 2
        with pytest.raises(WriteConflict):  # a stale tag never overwrites
            await store.write(THREAD, summary(3, "stale"), expected=etag)
        assert (await store.load(THREAD))[0] == latest
    finally:
        await object_store.close()


async def test_two_workers_on_one_thread_make_one_version_per_cycle(thread_memory):
    await thread_memory.journal.append("t", [message(f"m{i}") for i in range(10)])
    job = thread_memory.service.summarization
    outcomes = await asyncio.gather(*(job.run(JobTarget(OWNER, "t"), force=True)
                                      for _ in range(2)))
    statuses = sorted(o.status for o in outcomes)
    assert statuses in (sorted([Status.WRITTEN, Status.LOCKED]),
                        sorted([Status.WRITTEN, Status.UP_TO_DATE]))
    # Without the lock (it expired, say), the conditional write still keeps one winner.
    await thread_memory.journal.append("t", [message(f"n{i}") for i in range(10)])
    outcomes = await asyncio.gather(*(job._run_locked(JobTarget(OWNER, "t"), force=True)
                                      for _ in range(2)))
    assert sorted(o.status for o in outcomes) == sorted([Status.WRITTEN, Status.LOST_RACE])
    current, _ = await SummaryStore(thread_memory.service.objects).load(THREAD)
    assert (current.version, current.last_message_offset) == (2, 20)


async def test_redelivered_feed_messages_never_double_count(thread_memory):
    await thread_memory.journal.append("t", [message(f"m{i}", "hello there") for i in range(5)])
    await thread_memory.wait_counted("t", 5)
    await thread_memory.settle()
    before = await thread_memory.counters("t")
    events = []
    call = thread_memory.journal.stub.Subscribe(
        __import__("agentmemory.journal.v1.journal_service_pb2", fromlist=["x"])
        .SubscribeRequest(after_sequence=0), timeout=10)
    async for event in call:
        events.append(event)
        if len(events) == 5:
            break
    call.cancel()
    for event in events * 3:  # the feed delivers them again, and again
        await thread_memory.service.counter.count(event)
    assert await thread_memory.counters("t") == before == (before[0], 5)


async def test_redelivery_after_a_restart_from_an_old_cursor(local_journal, redis_server,
                                                             summary_store_env, fake_model):
    from tests.thread_memory.conftest import start_thread_memory, thread_memory_env

    env = thread_memory_env(local_journal.address, redis_server.url, summary_store_env,
                            fake_model.base_url)
    await local_journal.append("t", [message(f"m{i}") for i in range(10)])
    async for memory in start_thread_memory(env, local_journal, redis_server.url):
        await memory.wait_counted("t", 10)
        await memory.settle()
        counted = await memory.counters("t")
    # Throw the saved cursor away: the next instance replays the whole feed.
    await LocalObjectStore(
        __import__("pathlib").Path(summary_store_env["THREAD_MEMORY_LOCAL_PATH"])
    ).delete("consumers/thread_memory/shard-0000.json")
    async for memory in start_thread_memory(env, local_journal, redis_server.url):
        await memory.settle()
        assert memory.service.counter.follower.positions[0] == 10
        assert await memory.counters("t") == counted


async def test_wiping_redis_changes_nothing_the_model_sees(thread_memory):
    await thread_memory.journal.append("t", [message(f"m{i}", f"point {i}") for i in range(60)])
    await thread_memory.settle()
    before = await thread_memory.context("t")
    assert before.HasField("summary") and len(before.messages) == 20
    redis = Redis.from_url(thread_memory.redis_url)
    try:
        assert await redis.dbsize() > 0
        await redis.flushall()
        assert await redis.dbsize() == 0
    finally:
        await redis.aclose()
    after = await thread_memory.context("t")
    assert after == before
    keys = await Redis.from_url(thread_memory.redis_url).keys("*")
    assert all(not k.startswith(b"tm:claim") and b"m5" not in k for k in keys)


async def test_redis_never_holds_messages(thread_memory):
    secret_phrase = "the zebra sings at midnight"
    await thread_memory.journal.append("t", [message(f"m{i}", f"{secret_phrase} {i}")
                                             for i in range(55)])
    await thread_memory.settle()
    redis = Redis.from_url(thread_memory.redis_url)
    try:
        kinds = set()
        for key in await redis.keys("*"):
            kinds.add(key.decode().split(":")[1])
            if key.startswith(b"tm:summary:"):
                continue  # the cached summary is derived (the offline summary may quote)
            value = await redis.dump(key)
            assert secret_phrase.encode() not in (value or b"")
    finally:
        await redis.aclose()
    assert kinds <= {"summary", "lock", "counters", "flushed"}
    assert {"summary", "counters"} <= kinds


async def test_the_scheduler_reports_its_queue_depth(thread_memory, fake_model):
    fake_model.delay_seconds = 0.5  # two workers: two jobs run, two wait
    scheduler = thread_memory.service.scheduler
    assert (scheduler.queue_depth, scheduler.running) == (0, 0)
    for thread in ("a", "b", "c", "d"):
        await thread_memory.journal.append(thread, [message(f"{thread}{i}") for i in range(50)])
    seen = set()
    while len(fake_model.chats("rolling summary")) < 4:
        seen.add((scheduler.queue_depth, scheduler.running))
        await asyncio.sleep(0.005)
    assert (2, 2) in seen and max(depth for depth, _ in seen) == 2
    await thread_memory.settle()
    assert (scheduler.queue_depth, scheduler.running) == (0, 0)
    assert len(fake_model.chats("rolling summary")) == 4


class ScriptedJob:
    """A job whose first run fails and whose later runs wait to be released."""

    def __init__(self) -> None:
        self.calls = self.running = self.most_at_once = 0
        self.release = asyncio.Event()

    async def run(self, target: JobTarget) -> Outcome:
        self.calls += 1
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            if self.calls == 1:
                raise RuntimeError("object store down")
            await self.release.wait()
            return Outcome(Status.WRITTEN, None)
        finally:
            self.running -= 1


async def test_a_retry_that_comes_due_while_the_thread_runs_waits_for_it():
    job = ScriptedJob()
    scheduler = Scheduler(job, workers=2, max_delay=0.2)
    scheduler.start()
    try:
        target = JobTarget(OWNER, "t")
        scheduler.schedule(target)
        while job.calls < 1 or job.running:
            await asyncio.sleep(0.01)  # the first run failed: a retry is due in 0.2 s
        scheduler.schedule(target)  # a new message: the second run starts now and holds
        await asyncio.sleep(0.4)  # the retry comes due meanwhile
        assert (job.most_at_once, scheduler.running, scheduler.queue_depth) == (1, 1, 0)
        job.release.set()
        await asyncio.wait_for(scheduler.idle(), 5)
        assert job.most_at_once == 1 and job.calls == 3  # the retry ran after, not beside
        assert (scheduler.running, scheduler.queue_depth) == (0, 0)
    finally:
        await scheduler.close()
