"""Gateway benchmarks: the whole platform as `make run` starts it (five service
processes, PostgreSQL, Valkey), clients in this process.

BuildContext p50/p99 at 1, 16 and 64 concurrent clients, for a thread with a
summary, 10 pinned facts and a full 20-message window (target: p50 <= 10 ms,
p99 <= 40 ms at 16 clients); AppendMessages throughput through the gateway.

    python -m bench.gateway_bench [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

import uvloop
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as memory_grpc
from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as thread_pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2_grpc as thread_grpc

from libs import clients
from tests.support.ports import free_port
from tools import launch

CALLER = pb.Caller(agent_id="bench-agent", user_id="u1", surface=principal_pb2.SURFACE_AGENT,
                   capabilities=[principal_pb2.CAPABILITY_MEMORY])


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


async def load(make_call, concurrency: int, seconds: float) -> tuple[float, float, float]:
    latencies: list[float] = []
    stop_at = time.monotonic() + seconds

    async def worker(n: int) -> None:
        i = 0
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            await make_call(n, i)
            latencies.append(time.perf_counter() - started)
            i += 1

    started = time.monotonic()
    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    return (len(latencies) / (time.monotonic() - started), percentile(latencies, 0.5),
            percentile(latencies, 0.99))


async def main(seconds: float) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="gateway-bench-"))
    ports = {name: str(free_port()) for name in
             ("JOURNAL_PORT", "AGENT_MEMORY_PORT", "THREAD_MEMORY_PORT", "SEARCH_PORT",
              "GATEWAY_PORT", "GATEWAY_HTTP_PORT", "AGENTMEMORY_POSTGRES_PORT",
              "AGENTMEMORY_REDIS_PORT")}
    os.environ.update(ports | {"LOG_LEVEL": "WARNING"})
    components = launch.components(data_dir)
    started = []
    try:
        for component in components:
            started.append(component)
            component.start()
        key = launch.ensure_demo_key(data_dir, components[-1].env).read_text().strip()
        metadata = (("authorization", f"Bearer {key}"),)
        principal = principal_pb2.Principal(account_id="demo", agent_id="bench-agent",
                                            user_id="u1", environment="default")
        by_name = {c.name: c.address for c in components}
        async with clients.channel(by_name["gateway"], default_timeout=30) as channel, \
                clients.channel(by_name["agent_memory"], default_timeout=30) as memory_channel, \
                clients.channel(by_name["thread_memory"], default_timeout=30) as thread_channel:
            gateway = pb_grpc.GatewayServiceStub(channel)
            for start in range(0, 60, 20):
                await gateway.AppendMessages(pb.AppendMessagesRequest(
                    caller=CALLER, thread_id="busy", messages=[
                        message_pb2.Message(id=f"m{i}", role=1 + i % 2,
                                            content=f"Message {i} about the quarterly plan.")
                        for i in range(start, start + 20)]), metadata=metadata)
            memory = memory_grpc.AgentMemoryServiceStub(memory_channel)
            for i in range(10):
                await memory.Store(memory_pb.StoreRequest(
                    principal=principal, key=f"fact{i}", content=f"Profile fact number {i}.",
                    category=memory_pb.CATEGORY_USER_PROFILE, importance=0.8))
            await thread_grpc.ThreadMemoryServiceStub(thread_channel).Summarize(
                thread_pb.SummarizeRequest(principal=principal, thread_id="busy"))
            request = pb.BuildContextRequest(caller=CALLER, thread_id="busy")
            reply = await gateway.BuildContext(request, metadata=metadata)
            assert len(reply.messages) == 22, len(reply.messages)
            assert reply.messages[0].content.count("\n- ") == 10
            for concurrency in (1, 16, 64):
                rate, p50, p99 = await load(
                    lambda n, i: gateway.BuildContext(request, metadata=metadata),
                    concurrency, seconds)
                print(f"BuildContext clients={concurrency:<3} {rate:6.0f}/s   p50 {p50:6.2f} ms"
                      f"   p99 {p99:6.2f} ms", flush=True)
            for concurrency in (1, 16):
                rate, p50, p99 = await load(lambda n, i, c=concurrency: gateway.AppendMessages(
                    pb.AppendMessagesRequest(caller=CALLER, thread_id=f"append-{c}-{n}",
                                             messages=[message_pb2.Message(
                                                 id=f"a{i}", role=1, content="hello there")]),
                    metadata=metadata), concurrency, seconds)
                print(f"AppendMessages clients={concurrency:<3} {rate:6.0f} appends/s"
                      f"   p50 {p50:6.2f} ms   p99 {p99:6.2f} ms", flush=True)
    finally:
        for component in reversed(started):
            component.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    uvloop.run(main(parser.parse_args().seconds))
