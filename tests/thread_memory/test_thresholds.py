"""Thresholds: 50 messages or 2,000 tokens since the last summary; progressive prompts."""

from __future__ import annotations

import asyncio

from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as pb
from redis.asyncio import Redis

from services.thread_memory.summaries import SummaryStore, ThreadKey
from testkit.journal_client import message, principal
from tests.thread_memory.conftest import start_thread_memory, thread_memory_env


async def summary_of(memory, thread: str):
    store = SummaryStore(memory.service.objects)
    summary, _ = await store.load(ThreadKey("acme", "helper", thread))
    return summary


async def test_49_messages_no_summary_the_50th_exactly_one(thread_memory, fake_model):
    for i in range(49):
        await thread_memory.journal.append("t", [message(f"m{i}", "ok")])
    await thread_memory.wait_counted("t", 49)
    await thread_memory.settle()
    assert await summary_of(thread_memory, "t") is None
    assert fake_model.chats() == []
    await thread_memory.journal.append("t", [message("m49", "ok")])
    await thread_memory.settle()
    summary = await summary_of(thread_memory, "t")
    assert summary is not None and summary.version == 1
    assert (summary.last_message_offset, summary.last_message_id) == (50, "m49")
    assert summary.message_count == 50 and summary.token_count > 0
    assert summary.generator.startswith("fake-utility-model")
    assert len(fake_model.chats("rolling summary")) == 1
    assert await thread_memory.counters("t") == (0, 0)
    reply = await thread_memory.context("t")
    assert reply.summary.version == 1 and reply.summary.last_message_offset == 50


async def test_2000_tokens_in_3_messages_trigger_one_summary(thread_memory, fake_model):
    long_text = " ".join(["alpha"] * 700)  # 700 tokens: two make 1,400, three 2,100
    await thread_memory.journal.append("t", [message("a", long_text), message("b", long_text)])
    await thread_memory.wait_counted("t", 2)
    await thread_memory.settle()
    assert await thread_memory.counters("t") == (1400, 2)
    assert await summary_of(thread_memory, "t") is None
    await thread_memory.journal.append("t", [message("c", long_text)])
    await thread_memory.settle()
    summary = await summary_of(thread_memory, "t")
    assert summary.version == 1 and summary.last_message_offset == 3
    assert len(fake_model.chats("rolling summary")) == 1


async def test_second_summary_prompt_has_the_first_summary_and_only_newer_messages(
        thread_memory, fake_model):
    await thread_memory.journal.append("t", [message(f"old{i}", f"old topic {i}")
                                             for i in range(50)])
    await thread_memory.settle()
    first = await summary_of(thread_memory, "t")
    await thread_memory.journal.append("t", [message(f"new{i}", f"new topic {i}")
                                             for i in range(50)])
    await thread_memory.settle()
    second = await summary_of(thread_memory, "t")
    assert (second.version, second.last_message_offset, second.message_count) == (2, 100, 100)
    prompts = [r["body"]["messages"][-1]["content"] for r in fake_model.chats("rolling summary")]
    assert len(prompts) == 2
    assert first.content in prompts[1]
    assert "new topic 0" in prompts[1] and "new topic 49" in prompts[1]
    assert "old topic" not in prompts[1].split("</previous_summary>")[1]


async def test_operator_can_read_and_force_a_summary(thread_memory, fake_model):
    await thread_memory.journal.append("t", [message(f"m{i}") for i in range(3)])
    forced = await thread_memory.stub.Summarize(pb.SummarizeRequest(principal=principal(),
                                                                    thread_id="t"))
    assert forced.summarized and forced.summary.version == 1
    again = await thread_memory.stub.Summarize(pb.SummarizeRequest(principal=principal(),
                                                                   thread_id="t"))
    assert not again.summarized and again.summary.version == 1
    read = await thread_memory.stub.GetSummary(pb.GetSummaryRequest(principal=principal(),
                                                                    thread_id="t"))
    assert read.summary == forced.summary
    empty = await thread_memory.stub.Summarize(pb.SummarizeRequest(principal=principal(),
                                                                   thread_id="nothing"))
    assert not empty.summarized and not empty.HasField("summary")


async def test_another_users_thread_summary_is_invisible(thread_memory):
    alice = principal(user="alice")
    await thread_memory.journal.append("private", [message(f"m{i}") for i in range(3)], who=alice)
    await thread_memory.stub.Summarize(pb.SummarizeRequest(principal=alice, thread_id="private"))
    assert (await thread_memory.context("private", who=alice)).summary.version == 1
    for stranger in (principal(user="bob"), principal()):
        reply = await thread_memory.context("private", who=stranger)
        assert not reply.HasField("summary") and list(reply.messages) == []
        forced = await thread_memory.stub.Summarize(pb.SummarizeRequest(principal=stranger,
                                                                        thread_id="private"))
        assert not forced.summarized and not forced.HasField("summary")
        read = await thread_memory.stub.GetSummary(pb.GetSummaryRequest(principal=stranger,
                                                                        thread_id="private"))
        assert not read.HasField("summary")


async def test_offline_fallback_is_labelled(local_journal, redis_server, summary_store_env):
    env = thread_memory_env(local_journal.address, redis_server.url, summary_store_env)
    async for memory in start_thread_memory(env, local_journal, redis_server.url):
        await memory.journal.append("t", [message(f"m{i}", f"Point number {i}. Details.")
                                          for i in range(50)])
        await memory.settle()
        await asyncio.sleep(0)
        summary = await summary_of(memory, "t")
        assert summary.generator == "offline-extractive-v1"
        assert "User: Point number 49." in summary.content


async def test_crossing_the_threshold_again_during_a_job_gets_another_job(thread_memory,
                                                                          fake_model):
    fake_model.delay_seconds = 1.0  # the first job is still running while messages arrive
    await thread_memory.journal.append("t", [message(f"a{i}", "ok") for i in range(50)])
    while not fake_model.chats("rolling summary"):
        await asyncio.sleep(0.02)
    first_prompt = fake_model.chats("rolling summary")[0]["body"]["messages"][1]["content"]
    await thread_memory.journal.append("t", [message(f"b{i}", "ok") for i in range(60)])
    await thread_memory.wait_counted("t", 50)  # counted while the first job runs
    deadline = asyncio.get_running_loop().time() + 20
    while (summary := await summary_of(thread_memory, "t")) is None or summary.version < 2:
        assert asyncio.get_running_loop().time() < deadline, "no second job"
        await asyncio.sleep(0.1)
    assert "#51" not in first_prompt
    assert summary.last_message_offset == 110


async def wipe(memory) -> None:
    redis = Redis.from_url(memory.redis_url)
    try:
        await redis.flushall()
    finally:
        await redis.aclose()


async def test_wiping_redis_keeps_the_thresholds_exact(thread_memory, fake_model):
    await thread_memory.journal.append("t", [message(f"m{i}", "ok") for i in range(30)])
    long_text = " ".join(["alpha"] * 700)
    await thread_memory.journal.append("k", [message("a", long_text), message("b", long_text)])
    await thread_memory.wait_counted("t", 30)
    await thread_memory.wait_counted("k", 2)
    await wipe(thread_memory)  # both threads' counters are gone
    await thread_memory.journal.append("t", [message(f"m{i}", "ok") for i in range(30, 49)])
    await thread_memory.settle()
    assert await summary_of(thread_memory, "t") is None  # 49 since the start: none due
    assert (await thread_memory.counters("t"))[1] == 49  # measured again from the journal
    await thread_memory.journal.append("t", [message("m49", "ok")])
    await thread_memory.journal.append("k", [message("c", long_text)])  # 2,100 tokens
    await thread_memory.settle()
    assert (await summary_of(thread_memory, "t")).last_message_offset == 50
    assert (await summary_of(thread_memory, "k")).last_message_offset == 3
    assert len(fake_model.chats("rolling summary")) == 2


async def test_a_summary_belongs_to_the_threads_owner_whoever_asked(thread_memory):
    await thread_memory.journal.append("team", [message(f"m{i}") for i in range(3)])
    carol, dave = principal(user="carol"), principal(user="dave")
    forced = await thread_memory.stub.Summarize(pb.SummarizeRequest(principal=carol,
                                                                    thread_id="team"))
    assert forced.summarized
    for reader in (dave, principal(), carol):  # a shared thread's summary is shared too
        assert (await thread_memory.context("team", who=reader)).summary.version == 1


async def test_a_read_notices_a_lost_job_and_the_thresholds_still_decide(
        local_journal, redis_server, summary_store_env, fake_model):
    # No feed follower: as if the job scheduled for these messages died with its instance.
    env = {**thread_memory_env(local_journal.address, redis_server.url, summary_store_env,
                               fake_model.base_url), "THREAD_MEMORY_FOLLOW_FEED": "false"}
    async for memory in start_thread_memory(env, local_journal, redis_server.url):
        await local_journal.append("lost", [message(f"m{i}", "ok") for i in range(60)])
        await local_journal.append("young", [message(f"m{i}", "ok") for i in range(30)])
        for thread in ("lost", "young"):
            first = await memory.context(thread)  # 41-60 and 11-30: in neither, for now
            assert not first.HasField("summary") and first.messages[0].offset > 1
        await memory.service.scheduler.idle()
        healed = await memory.context("lost")
        assert healed.summary.last_message_offset == 60
        assert not (await memory.context("young")).HasField("summary")  # 30 < 50: not due
        assert len(fake_model.chats("rolling summary")) == 1
        completed = memory.service.scheduler.completed
        await memory.context("young")  # now the counters answer: below threshold, no job
        assert memory.service.scheduler.queue_depth == 0
        await memory.service.scheduler.idle()
        assert memory.service.scheduler.completed == completed
