"""Summaries on a real S3-compatible server (also while it is down), and the
pre-compaction flush into a real agent memory."""

from __future__ import annotations

import asyncio
import time

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as pb
from redis.asyncio import Redis

from services.thread_memory.summaries import SummaryStore, ThreadKey
from testkit.journal_client import message, principal
from testkit.s3 import start_s3_server
from tests.agent_memory.conftest import start_memory
from tests.thread_memory.conftest import start_thread_memory, thread_memory_env

FACTS = [{"key": "name", "content": "The user's name is Ana Lopes.", "category": "user_profile",
          "importance": 0.9},
         {"key": "stack", "content": "The team deploys with Argo CD.", "category": "project_fact",
          "importance": 0.6}]


async def test_summaries_on_s3(local_journal, redis_server, s3_server, fake_model):
    env = thread_memory_env(local_journal.address, redis_server.url,
                            s3_server.thread_memory_env(), fake_model.base_url)
    async for memory in start_thread_memory(env, local_journal, redis_server.url):
        await memory.journal.append("t", [message(f"m{i}") for i in range(50)])
        await memory.settle()
        reply = await memory.context("t")
        assert reply.summary.version == 1 and reply.summary.last_message_offset == 50
        summary, etag = await SummaryStore(memory.service.objects).load(
            ThreadKey("acme", "helper", "t"))
        assert summary.version == 1 and etag


async def test_s3_down_during_a_job_is_retried_later(local_journal, redis_server, fake_model,
                                                     tmp_path):
    s3 = await asyncio.to_thread(start_s3_server, tmp_path / "s3", tmp_path / "weed.log")
    try:
        env = thread_memory_env(local_journal.address, redis_server.url,
                                s3.thread_memory_env("summaries"), fake_model.base_url)
        async for memory in start_thread_memory(env, local_journal, redis_server.url):
            await memory.journal.append("t", [message("m0")])
            await memory.wait_counted("t", 1)  # the feed is being followed
            s3.stop()
            await memory.journal.append("t", [message(f"m{i}") for i in range(1, 50)])
            await memory.wait_counted("t", 50)
            await asyncio.sleep(2)  # the job has run and failed at least once
            assert (await memory.counters("t"))[1] == 50  # counters kept
            assert memory.service.scheduler.completed == 0
            await asyncio.to_thread(s3.start)
            deadline = time.monotonic() + 60
            while not (await memory.context("t")).HasField("summary"):
                assert time.monotonic() < deadline, "the job was never retried"
                await asyncio.sleep(0.25)
            reply = await memory.context("t")
            assert reply.summary.version == 1 and reply.summary.last_message_offset == 50
            assert await memory.counters("t") == (0, 0)
            listed = await memory.service.objects.get(ThreadKey("acme", "helper", "t").summary_path)
            assert listed is not None and b'"version": 1' in listed.data
    finally:
        s3.stop()


async def _flush_setup(postgres, tmp_path, local_journal, redis_server, summary_store_env,
                       model_url, bound: bool):
    async for agent_memory in start_memory(postgres, tmp_path / "agent-memory"):
        await agent_memory.stub.SetAgentSettings(memory_pb.SetAgentSettingsRequest(
            principal=principal(), settings=memory_pb.AgentSettings(memory_bound=bound)))
        env = thread_memory_env(local_journal.address, redis_server.url, summary_store_env,
                                model_url, f"127.0.0.1:{agent_memory.service.server.port}")
        async for memory in start_thread_memory(env, local_journal, redis_server.url):
            yield agent_memory, memory


async def entries(agent_memory) -> list:
    reply = await agent_memory.stub.ListEntries(memory_pb.ListEntriesRequest(principal=principal()))
    return list(reply.entries)


async def test_flush_runs_with_memory_bound(postgres, tmp_path, local_journal, redis_server,
                                            summary_store_env, fake_model):
    fake_model.facts = FACTS
    async for agent_memory, memory in _flush_setup(postgres, tmp_path, local_journal, redis_server,
                                                   summary_store_env, fake_model.base_url, True):
        await memory.journal.append("t", [message(f"m{i}", f"chat {i}") for i in range(50)])
        await memory.settle()
        stored = {e.key: e for e in await entries(agent_memory)}
        assert set(stored) == {"name", "stack"}
        assert stored["name"].source.kind == memory_pb.SOURCE_KIND_PRE_COMPACTION_FLUSH
        assert stored["name"].source.thread_id == "t"
        assert stored["name"].source.message_ids[-1] == "m49"
        flush_prompts = fake_model.chats("durable facts")
        assert len(flush_prompts) == 1 and "chat 49" in flush_prompts[0]["body"]["messages"][1][
            "content"]
        pinned = await agent_memory.stub.ListPinned(memory_pb.ListPinnedRequest(
            principal=principal()))
        assert [e.key for e in pinned.entries] == ["name"]
        forced = await memory.stub.Summarize(pb.SummarizeRequest(principal=principal(),
                                                                 thread_id="t"))
        assert not forced.summarized  # nothing new: no second flush either
        assert len(fake_model.chats("durable facts")) == 1


async def test_no_flush_without_memory_bound(postgres, tmp_path, local_journal, redis_server,
                                             summary_store_env, fake_model):
    fake_model.facts = FACTS
    async for agent_memory, memory in _flush_setup(postgres, tmp_path, local_journal, redis_server,
                                                   summary_store_env, fake_model.base_url, False):
        await memory.journal.append("t", [message(f"m{i}") for i in range(50)])
        await memory.settle()
        assert (await memory.context("t")).summary.version == 1
        assert fake_model.chats("durable facts") == []
        assert await entries(agent_memory) == []


async def test_a_failing_flush_still_yields_the_summary(postgres, tmp_path, local_journal,
                                                        redis_server, summary_store_env,
                                                        fake_model):
    fake_model.facts = FACTS
    fake_model.fail = lambda r: "durable facts" in r["body"]["messages"][0]["content"]
    async for agent_memory, memory in _flush_setup(postgres, tmp_path, local_journal, redis_server,
                                                   summary_store_env, fake_model.base_url, True):
        await memory.journal.append("t", [message(f"m{i}") for i in range(50)])
        await memory.settle()
        assert (await memory.context("t")).summary.version == 1
        assert len(fake_model.chats("durable facts")) >= 1
        assert await entries(agent_memory) == []


async def test_offline_flush_keeps_what_users_say_about_themselves(
        postgres, tmp_path, local_journal, redis_server, summary_store_env):
    async for agent_memory, memory in _flush_setup(postgres, tmp_path, local_journal, redis_server,
                                                   summary_store_env, "", True):
        said = ["Hi! My name is Ana Lopes.", "I work at Globex and I live in Porto.",
                "I prefer short answers with code", "We use Terraform for infrastructure"]
        await memory.journal.append("t", [message(f"u{i}", text) for i, text in enumerate(said)]
                                    + [message(f"x{i}", "ok") for i in range(46)])
        await memory.settle()
        stored = {e.key: e.content for e in await entries(agent_memory)}
        assert stored["name"] == "The user's name is Ana Lopes."
        assert stored["employer"] == "The user works at Globex."
        assert stored["home_city"] == "The user lives in Porto."
        assert "short answers with code" in stored["preference_short_answers_with_code"]
        assert stored["stack_terraform_for_infrastructure"].startswith("The team uses Terraform")


async def test_a_retried_job_does_not_flush_the_same_messages_again(
        postgres, tmp_path, local_journal, redis_server, summary_store_env, fake_model):
    fake_model.facts = FACTS
    failed: list[dict] = []

    def first_summary_fails(request) -> bool:  # after the flush, the summary call fails once
        if "rolling summary" in request["body"]["messages"][0]["content"] and not failed:
            failed.append(request)
            return True
        return False

    fake_model.fail = first_summary_fails
    async for agent_memory, memory in _flush_setup(postgres, tmp_path, local_journal, redis_server,
                                                   summary_store_env, fake_model.base_url, True):
        await memory.journal.append("t", [message(f"m{i}", f"chat {i}") for i in range(50)])
        await memory.settle()  # the job failed once and was retried
        assert failed and len(fake_model.chats("rolling summary")) == 2
        assert len(fake_model.chats("durable facts")) == 1
        assert (await memory.context("t")).summary.version == 1
        assert sorted(e.key for e in await entries(agent_memory)) == ["name", "stack"]
        redis = Redis.from_url(memory.redis_url)
        try:
            assert await redis.get("tm:flushed:acme/helper/t") == b"50"
        finally:
            await redis.aclose()
