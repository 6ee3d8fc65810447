"""Through the gateway, the whole platform running: retried tool calls are idempotent,
tool calls resolve in their own thread, thread metadata is stored, DeleteThread keeps
what docs/gateway.md says, bad input is INVALID_ARGUMENT naming the field, and every service
serves Prometheus metrics that move with the calls."""

from __future__ import annotations

import asyncio
import math
import time
import urllib.request

import grpc
import pytest
from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from google.protobuf import struct_pb2

from libs import clients
from testkit.journal_client import rpc_error
from tests.libs.test_metrics import sample

AGENT, MCP = principal_pb2.SURFACE_AGENT, principal_pb2.SURFACE_MCP_GATEWAY
USER, ASSISTANT, TOOL = message_pb2.ROLE_USER, message_pb2.ROLE_ASSISTANT, message_pb2.ROLE_TOOL
SYSTEM = message_pb2.ROLE_SYSTEM


def caller(agent="helper", user="ana", surface=AGENT) -> pb.Caller:
    """Memory is bound to "helper" (tests/e2e/conftest.py), not to the other agents."""
    return pb.Caller(agent_id=agent, user_id=user, surface=surface)


def struct(**values) -> struct_pb2.Struct:
    data = struct_pb2.Struct()
    data.update(values)
    return data


@pytest.fixture
async def gateway(platform):
    key = platform.keys["acme"]
    async with clients.channel(platform.gateway, default_timeout=30) as channel:
        stub = pb_grpc.GatewayServiceStub(channel)

        class Gateway:
            raw = channel

            @staticmethod
            def auth():
                return (("authorization", f"Bearer {key}"),)

            @staticmethod
            async def append(thread, messages, c=None, **kwargs):
                return await stub.AppendMessages(pb.AppendMessagesRequest(
                    caller=c or caller(), thread_id=thread, messages=messages, **kwargs),
                    metadata=Gateway.auth())

            @staticmethod
            async def context(thread, c=None, **kwargs):
                return await stub.BuildContext(pb.BuildContextRequest(
                    caller=c or caller(), thread_id=thread, **kwargs), metadata=Gateway.auth())

            @staticmethod
            async def tool(name, c=None, thread="", request_id="", **arguments):
                return await stub.CallTool(pb.CallToolRequest(
                    caller=c or caller(), thread_id=thread, tool_name=name,
                    arguments=struct(**arguments), request_id=request_id),
                    metadata=Gateway.auth())

            @staticmethod
            def call(method, request):
                return getattr(stub, method)(request, metadata=Gateway.auth())

        yield Gateway


def texts(count: int, prefix: str) -> list[message_pb2.Message]:
    return [message_pb2.Message(id=f"{prefix}{i}", role=USER if i % 2 == 0 else ASSISTANT,
                                content=f"{prefix} message {i} about zebrafish migration")
            for i in range(count)]


async def test_a_retried_memory_store_is_a_no_op(gateway):
    first = await gateway.tool("memory_store", key="deploy_day", content="Deploys happen on "
                               "Tuesdays.", category="project_fact", request_id="rid-deploy-1")
    assert not first.is_error
    changed = await gateway.tool("memory_store", key="deploy_day",
                                 content="Deploys happen on Thursdays.", category="project_fact")
    assert changed.result["replaced"]
    retried = await gateway.tool("memory_store", key="deploy_day", content="Deploys happen on "
                                 "Tuesdays.", category="project_fact", request_id="rid-deploy-1")
    assert not retried.is_error and not retried.result["replaced"]
    recalled = await gateway.tool("memory_recall", query="when do deploys happen")
    contents = [e["content"] for e in recalled.result["entries"] if e["key"] == "deploy_day"]
    assert contents == ["Deploys happen on Thursdays."]


async def test_a_tool_call_id_used_in_two_threads_resolves_in_the_callers_thread(gateway):
    for thread, city in (("trip-a", "Lisbon"), ("trip-b", "Porto")):
        await gateway.append(thread, [
            message_pb2.Message(id="q", role=USER, content=f"Weather in {city}?"),
            message_pb2.Message(id="a", role=ASSISTANT, content="Checking.", tool_calls=[
                message_pb2.ToolCall(id="call-7", name="weather",
                                     arguments=f'{{"city":"{city}"}}')]),
            message_pb2.Message(id="r", role=TOOL, tool_call_id="call-7",
                                content=f"Sunny in {city}")])
    for thread, city in (("trip-a", "Lisbon"), ("trip-b", "Porto")):
        viewed = await gateway.tool("journal_tool_call_view", thread=thread,
                                    tool_call_id="call-7")
        assert not viewed.is_error, viewed.result
        assert f"Sunny in {city}" in viewed.result["data"]
    # Another thread named explicitly, from trip-a.
    other = await gateway.tool("journal_tool_call_view", thread="trip-a", tool_call_id="call-7",
                               thread_id="trip-b")
    assert "Porto" in other.result["data"]
    # No thread at all: ambiguous, and the tool says so.
    ambiguous = await gateway.tool("journal_tool_call_view", tool_call_id="call-7")
    assert ambiguous.is_error and "name the thread" in ambiguous.result["message"]


async def test_memory_store_takes_scope_and_recall_caps_its_limit(gateway):
    private = await gateway.tool("memory_store", key="shoe_size", content="Ana wears size 38.",
                                 category="user_profile", scope="private")
    assert private.result["visibility"] == "private"
    shared = await gateway.tool("memory_store", c=caller(surface=MCP, user=""), key="office",
                                content="The office is in Braga.", category="project_fact",
                                scope="private")
    assert shared.result["visibility"] == "shared" and "no authenticated user" in \
        shared.result["note"]
    many = await gateway.tool("memory_recall", query="size office", limit=50)
    assert not many.is_error and len(many.result["entries"]) <= 20
    tools = await gateway.call("ListTools", pb.ListToolsRequest(caller=caller()))
    store = next(t for t in tools.tools if t.name == "memory_store")
    assert set(store.parameters["properties"]) == {"key", "content", "category", "scope",
                                                   "importance"}
    invalid = await rpc_error(gateway.tool("memory_recall", query="x", limit=True))
    assert invalid.code == grpc.StatusCode.INVALID_ARGUMENT
    assert invalid.field_violations == {"arguments.limit": "must be an integer"}


async def test_the_threads_stored_metadata_lowers_its_window(gateway):
    agent = caller(agent="windowed")
    metadata = struct(config={"max_working_memory_messages": 3})
    await gateway.append("small", texts(8, "w"), c=agent, thread_metadata=metadata)
    window = await gateway.context("small", c=agent)
    assert [m.content for m in window.messages] == [f"w message {i} about zebrafish migration"
                                                    for i in range(5, 8)]
    # Set only at creation: a later append's metadata changes nothing.
    await gateway.append("small", texts(1, "x"), c=agent,
                         thread_metadata=struct(config={"max_working_memory_messages": 1}))
    assert len((await gateway.context("small", c=agent)).messages) == 3
    updated = await gateway.call("UpdateThread", pb.UpdateThreadRequest(
        caller=agent, thread_id="small", metadata=struct(config={
            "max_working_memory_messages": 5}, owner="ops")))
    assert updated.metadata["owner"] == "ops"
    assert len((await gateway.context("small", c=agent)).messages) == 5
    turn = struct(config={"max_working_memory_messages": 2})
    assert len((await gateway.context("small", c=agent, thread_metadata=turn)).messages) == 2
    turn = struct(config={"max_working_memory_messages": 10})
    assert len((await gateway.context("small", c=agent, thread_metadata=turn)).messages) == 5
    await gateway.call("UpdateThread", pb.UpdateThreadRequest(caller=agent, thread_id="small"))
    assert len((await gateway.context("small", c=agent)).messages) == 9
    missing = await rpc_error(gateway.call("UpdateThread", pb.UpdateThreadRequest(
        caller=caller(agent="windowed", user="bob"), thread_id="small")))
    assert missing.code == grpc.StatusCode.NOT_FOUND


async def test_delete_thread_keeps_journal_summary_and_search_rows(gateway):
    agent = caller(agent="deleter")
    await gateway.append("kept", texts(60, "k"), c=agent)
    deadline = time.monotonic() + 60
    while True:  # 60 messages cross the 50-message threshold: a summary is written
        context = await gateway.context("kept", c=agent)
        if context.messages and context.messages[0].content.startswith(
                "Previous conversation summary: "):
            break
        assert time.monotonic() < deadline, "never summarized"
        await asyncio.sleep(0.5)
    await gateway.call("DeleteThread", pb.DeleteThreadRequest(caller=agent, thread_id="kept"))
    gone = await rpc_error(gateway.context("kept", c=agent))
    assert gone.code == grpc.StatusCode.NOT_FOUND  # the record is gone
    found = await gateway.tool("journal_message_search", c=agent, query="zebrafish",
                               summarize=False, limit=50)
    assert {h["thread_id"] for h in found.result["hits"]} == {"kept"}  # search rows stay
    # Appending again recreates the record over the old messages and summary.
    await gateway.append("kept", [message_pb2.Message(id="again", role=USER, content="back")],
                         c=agent)
    context = await gateway.context("kept", c=agent)
    summary, *window = context.messages
    assert summary.role == SYSTEM and summary.content.startswith("Previous conversation summary")
    assert [m.content for m in window] == [f"k message {i} about zebrafish migration"
                                           for i in range(41, 60)] + ["back"]


@pytest.mark.parametrize("thread, agent, field", [
    ("..", "helper", "thread_id"), (".", "helper", "thread_id"), ("t", ".", "caller.agent_id"),
    ("t", "..", "caller.agent_id")])
async def test_dot_ids_are_invalid(gateway, thread, agent, field):
    error = await rpc_error(gateway.append(thread, texts(1, "d"), c=caller(agent=agent)))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT and field in error.field_violations


async def test_nul_nan_bad_utf8_and_deep_structs_are_invalid_argument(gateway):
    error = await rpc_error(gateway.append("nul", [message_pb2.Message(
        id="n", role=USER, content="a\x00b")]))
    assert error.field_violations == {"messages[0].content": "must not contain NUL (U+0000)"}
    error = await rpc_error(gateway.tool("memory_store", key="k", content="a\x00",
                                         category="user_profile"))
    assert error.field_violations == {"arguments.content": "must not contain NUL (U+0000)"}
    for number in (math.nan, math.inf):
        error = await rpc_error(gateway.tool("memory_store", key="k", content="c",
                                             category="user_profile", importance=number))
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT
        assert list(error.field_violations) == ["arguments.importance"]
    method = gateway.raw.unary_unary("/agentmemory.gateway.v1.GatewayService/CallTool")
    deep = struct_pb2.Struct()
    inner = deep
    for _ in range(60):
        inner = inner.fields["a"].struct_value
    bad_key = b"\x0a\x04\x0a\x02\xc3\x28"  # Struct {fields {key: "\xc3\x28"}}
    for data in (deep.SerializeToString(), bad_key):
        request = pb.CallToolRequest(tool_name="memory_recall").SerializeToString() + \
            _length_delimited(4, data)  # CallToolRequest.arguments
        error = await rpc_error(method(request, metadata=gateway.auth()))
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT
        assert list(error.field_violations) == ["arguments"]


def _length_delimited(number: int, data: bytes) -> bytes:
    def varint(n: int) -> bytes:
        out = b""
        while n > 127:
            out += bytes([n & 0x7F | 0x80])
            n >>= 7
        return out + bytes([n])
    return varint(number << 3 | 2) + varint(len(data)) + data


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        return reply.read().decode()


async def test_every_service_serves_metrics_that_move_with_calls(platform, gateway):
    ports = platform.metrics_ports
    service = "agentmemory.gateway.v1.GatewayService"

    def counted(text, method, code, rpc_service=service):
        return sample(text, "rpc_server_requests_total", rpc_service=rpc_service,
                      rpc_method=method, grpc_code=code)

    before = await asyncio.to_thread(scrape, ports["gateway"])
    journal_before = await asyncio.to_thread(scrape, ports["journal"])
    await gateway.append("metered", texts(2, "m"))
    await rpc_error(gateway.append("..", texts(1, "m")))
    after = await asyncio.to_thread(scrape, ports["gateway"])
    assert counted(after, "AppendMessages", "OK") == counted(before, "AppendMessages", "OK") + 1
    assert counted(after, "AppendMessages", "INVALID_ARGUMENT") == counted(
        before, "AppendMessages", "INVALID_ARGUMENT") + 1
    assert sample(after, "rpc_server_duration_seconds_count", rpc_method="AppendMessages",
                  grpc_code="OK") >= 1
    journal = await asyncio.to_thread(scrape, ports["journal"])
    append = ("Append", "OK", "agentmemory.journal.v1.JournalService")
    assert counted(journal, *append) == counted(journal_before, *append) + 1
    assert sample(journal, "journal_commit_appends_count") >= 1
    assert sample(journal, "journal_commit_messages_sum") >= 2
    search = await asyncio.to_thread(scrape, ports["search"])
    assert "# TYPE search_projection_lag gauge" in search
    assert sample(search, "search_projection_lag") >= 0
    assert "# TYPE search_embedding_lag gauge" in search  # the platform embeds by default
    assert sample(search, "search_embedding_lag") >= 0
    thread_memory = await asyncio.to_thread(scrape, ports["thread_memory"])
    assert "# TYPE thread_memory_jobs_queued gauge" in thread_memory
    agent_memory = await asyncio.to_thread(scrape, ports["agent_memory"])
    assert "# TYPE agent_memory_outbox_size gauge" in agent_memory
    assert "agent_memory_outbox_size " in agent_memory  # the query answered


async def test_journal_message_search_takes_a_mode_and_says_when_it_fell_back(gateway):
    agent = caller(agent="searcher")
    await gateway.append("moods", [message_pb2.Message(
        id="s1", role=USER, content="The aquarium pump broke again on Tuesday.")], c=agent)
    deadline = time.monotonic() + 60
    while True:  # the projection (and its embeddings) catch up in the background
        found = await gateway.tool("journal_message_search", c=agent, query="aquarium pump",
                                   mode="keyword", summarize=False)
        if found.result["hits"]:
            break
        assert time.monotonic() < deadline, "never projected"
        await asyncio.sleep(0.5)
    assert found.result["hits"][0]["message_id"] == "s1" and found.result["fallback"] is False
    hybrid = await gateway.tool("journal_message_search", c=agent, query="fish tank equipment",
                                summarize=False)
    assert "fallback" in hybrid.result
    wrong = await rpc_error(gateway.tool("journal_message_search", c=agent, query="x",
                                         mode="semantic"))
    assert list(wrong.field_violations) == ["arguments.mode"]
