"""Two replicas of every stateless service: one of each is killed under load."""

from __future__ import annotations

import asyncio

from agentmemory.common.v1 import message_pb2

from testkit.gateway_load import GatewayLoad, check_acknowledged, threads_on
from testkit.waiting import eventually

KILLED = ("gateway-a", "thread-memory-a", "agent-memory-a", "search-a")


async def test_killing_one_replica_of_each_stateless_service_under_load_loses_no_acknowledged_write(
        topology):
    threads = threads_on(0, "replicas", 3) + threads_on(1, "replicas", 3)
    load = GatewayLoad(topology, threads, tools=True)
    running = asyncio.create_task(load.run())
    try:
        await asyncio.sleep(3)
        for name in KILLED:
            before = load.answered()
            topology[name].kill()  # kill -9, in the middle of calls
            await asyncio.sleep(2.5)  # the load runs on between kills

            async def going_on(before: int = before, name: str = name) -> bool:
                assert load.answered() > before, f"the load stopped after {name} was killed"
                return True

            # Well within the calls' 20 s deadline; the load stopped would fail here.
            await eventually(going_on, timeout=15)
        after_kills = dict(load.seen.calls)
        await asyncio.sleep(2)
        load.stop.set()
        await running
        print(f"\nkilled {', '.join(KILLED)} under load: {load.seen.report()}")

        assert not load.seen.unexpected, load.seen.unexpected
        assert load.seen.codes() <= {"UNAVAILABLE"}
        # Every kind of call still went through on the remaining replicas.
        assert all(load.seen.calls[m] > after_kills.get(m, 0) for m in (
            "AppendMessages", "BuildContext", "CallTool memory_store",
            "CallTool journal_message_search", "CallTool memory_recall"))
        assert await check_acknowledged(topology, load.seen.acked) > 50
    finally:
        load.stop.set()
        await asyncio.gather(running, return_exceptions=True)
        await load.close()
        await asyncio.to_thread(topology.restart, *KILLED)


async def test_a_tool_call_is_found_in_whichever_shard_process_holds_its_thread(topology):
    load = GatewayLoad(topology, [], tools=False)
    try:
        for shard in (0, 1):
            thread = threads_on(shard, "tool-calls", 1)[0]
            call = message_pb2.ToolCall(id=f"call-{shard}", name="weather",
                                        arguments='{"city": "Lisbon"}', result=f"sunny {shard}",
                                        status=message_pb2.TOOL_CALL_STATUS_SUCCEEDED)
            await load.append(thread, message_pb2.Message(
                id=f"asks-{shard}", role=message_pb2.ROLE_ASSISTANT, content="Let me check.",
                tool_calls=[call]))
        for shard in (0, 1):
            result = await load.tool("journal_tool_call_view", {"tool_call_id": f"call-{shard}"})
            assert not result.is_error, result
            assert f"sunny {shard}" in result.result["data"]
    finally:
        await load.close()
