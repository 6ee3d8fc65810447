"""Where a summary lives, how long Redis keeps what it holds, and what purging removes.

"Deleted" here: the gateway's DeleteThread removes only the thread record and
never calls thread memory, so a deleted thread's keys simply expire (the cached
summary after an hour, the counters and the flush guard a week after the
thread's last message, the lock after five minutes). PurgeThread removes the
summary object and the thread's keys at once, and only that thread's.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import boto3
import pytest
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as pb
from redis.asyncio import Redis

from services.thread_memory.coordination import KEY_SECONDS, SUMMARY_CACHE_SECONDS
from testkit.journal_client import message, principal
from tests.thread_memory.conftest import start_thread_memory, thread_memory_env

SUMMARY_FIELDS = {"version", "timestamp", "last_message_offset", "last_message_id", "content",
                  "token_count", "message_count"}


@pytest.fixture
async def redis(thread_memory):
    client = Redis.from_url(thread_memory.redis_url)
    yield client
    await client.aclose()


async def fifty(memory, thread: str, who=None) -> None:
    await memory.journal.append(thread, [message(f"{thread}-{i}", f"note {i}") for i in range(50)],
                                who=who)


async def test_purging_a_thread_leaves_the_threads_whose_ids_it_prefixes(thread_memory, redis):
    # Ids may hold . _ : @ + - but no glob character (* ? [ ] \): prefixes are the risk.
    threads = ["cl", "cl:7", "cl:70", "cl.x", "cl_", "c"]
    for thread in threads:
        await fifty(thread_memory, thread)
    await thread_memory.settle()
    before = set(await redis.keys("*"))
    assert {b"tm:counters:acme/helper/cl:7", b"tm:summary:acme/helper/cl:7"} <= before
    await thread_memory.journal.stub.PurgeThread(  # the journal first, as the gateway does
        journal_pb.PurgeThreadRequest(principal=principal(), thread_id="cl"))
    reply = await thread_memory.stub.PurgeThread(pb.PurgeThreadRequest(principal=principal(),
                                                                       thread_id="cl"))
    assert reply.summary_deleted and reply.redis_keys_deleted == 2
    assert before - set(await redis.keys("*")) == {b"tm:summary:acme/helper/cl",
                                                   b"tm:counters:acme/helper/cl"}
    assert not (await thread_memory.context("cl")).HasField("summary")
    for thread in threads[1:]:
        assert (await thread_memory.context(thread)).summary.last_message_offset == 50
    again = await thread_memory.stub.PurgeThread(pb.PurgeThreadRequest(principal=principal(),
                                                                       thread_id="cl"))
    assert (again.summary_deleted, again.redis_keys_deleted) == (False, 0)


async def test_every_key_expires_so_a_deleted_thread_leaves_nothing_for_good(thread_memory,
                                                                              redis):
    await fifty(thread_memory, "t")
    await thread_memory.settle()
    await thread_memory.journal.append("t", [message("late", "one more")])
    await thread_memory.wait_counted("t", 1)
    keys = await redis.keys("*")
    assert keys
    for key in keys:
        ttl = await redis.ttl(key)
        limit = SUMMARY_CACHE_SECONDS if key.startswith(b"tm:summary:") else KEY_SECONDS
        assert 0 < ttl <= limit, key
    # Each counted message pushes the counters' expiry back a week.
    await redis.expire(b"tm:counters:acme/helper/t", 60)
    await thread_memory.journal.append("t", [message("later", "and another")])
    await thread_memory.wait_counted("t", 2)
    assert await redis.ttl(b"tm:counters:acme/helper/t") > KEY_SECONDS - 60


async def test_expired_counters_are_measured_again_from_the_journal(thread_memory, redis):
    await fifty(thread_memory, "t")
    await thread_memory.settle()
    await thread_memory.journal.append("t", [message(f"n{i}", "ok") for i in range(30)])
    await thread_memory.wait_counted("t", 30)
    counted = await thread_memory.counters("t")
    await redis.pexpire(b"tm:counters:acme/helper/t", 1)
    await asyncio.sleep(0.05)
    assert await thread_memory.counters("t") == (0, 0)  # gone
    await thread_memory.journal.append("t", [message("n30", "ok")])
    await thread_memory.wait_counted("t", 31)
    tokens = (await thread_memory.journal.recent("t", limit=1))[0].token_count
    assert await thread_memory.counters("t") == (counted[0] + tokens, 31)


async def test_the_summary_is_cached_for_one_hour(thread_memory, redis):
    await fifty(thread_memory, "t")
    await thread_memory.settle()
    key = b"tm:summary:acme/helper/t"
    assert SUMMARY_CACHE_SECONDS - 10 < await redis.ttl(key) <= SUMMARY_CACHE_SECONDS == 3600
    first = await thread_memory.context("t")
    await redis.pexpire(key, 1)  # the hour is over
    await asyncio.sleep(0.05)
    assert not await redis.exists(key)
    assert (await thread_memory.context("t")).summary == first.summary  # from the store
    assert SUMMARY_CACHE_SECONDS - 10 < await redis.ttl(key) <= SUMMARY_CACHE_SECONDS
    # While cached, the cache answers: what it holds is what is served.
    cached = json.loads(await redis.get(key))
    await redis.set(key, json.dumps({**cached, "content": "from the cache"}), keepttl=True)
    assert (await thread_memory.context("t")).summary.content == "from the cache"


@pytest.fixture(params=["local", "s3"])
def summary_store(request, tmp_path) -> tuple[dict[str, str], object]:
    """THREAD_MEMORY_* variables of a fresh summary store of each kind, and its S3 server."""
    if request.param == "local":
        return {"THREAD_MEMORY_OBJECT_STORE": "local",
                "THREAD_MEMORY_LOCAL_PATH": str(tmp_path / "summaries")}, None
    s3 = request.getfixturevalue("s3_server")
    return s3.thread_memory_env(), s3


def stored_objects(env: dict[str, str], s3) -> dict[str, bytes]:
    """Every object of the summary store, by key relative to the store's root."""
    if s3 is None:
        root = Path(env["THREAD_MEMORY_LOCAL_PATH"])
        return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()
                and not p.name.startswith(".")}
    client = boto3.client("s3", endpoint_url=s3.endpoint, region_name="us-east-1",
                          aws_access_key_id=s3.access_key_id,
                          aws_secret_access_key=s3.secret_access_key)
    prefix = env["THREAD_MEMORY_S3_PREFIX"] + "/"
    listed = client.list_objects_v2(Bucket=s3.bucket, Prefix=prefix)["Contents"]
    return {o["Key"].removeprefix(prefix):
            client.get_object(Bucket=s3.bucket, Key=o["Key"])["Body"].read() for o in listed}


async def test_the_summary_object_key(summary_store, local_journal, redis_server, fake_model):
    env, s3 = summary_store
    config = thread_memory_env(local_journal.address, redis_server.url, env, fake_model.base_url)
    alice = principal(account="acc-1", agent="agent.2", user="alice")
    async for memory in start_thread_memory(config, local_journal, redis_server.url):
        await fifty(memory, "thr:3", who=alice)
        await memory.settle()
    expected = "accounts/acc-1/agents/agent.2/threads/thr:3/summary.json"
    objects = await asyncio.to_thread(stored_objects, env, s3)
    assert sorted(k for k in objects if k.endswith("summary.json")) == [expected]
    assert all(k == expected or k.startswith("consumers/thread_memory/shard-") for k in objects)
    stored = json.loads(objects[expected])
    assert SUMMARY_FIELDS <= set(stored)
    assert (stored["version"], stored["last_message_offset"], stored["message_count"]) == (1, 50, 50)
    assert stored["last_message_id"] == "thr:3-49" and stored["owner_user_id"] == "alice"
