"""Gateway benchmarks: the whole platform as `make run` starts it (five service
processes, PostgreSQL, Valkey), clients in this process.

BuildContext calls/s, p50 and p99 at 1, 16 and 64 concurrent clients, for two
agents with Memory bound (by the agent setting, with an admin key), each on a
thread with a summary, 10 pinned facts and a full 20-message window:

- ``plain``: the agent has recorded no procedure (the common case);
- ``procedures``: the agent has one procedure whose task is like the thread's
  latest user message, and the thread has an open run: the procedure rides into
  every context under its header (23 messages back) and the recall is counted
  for the run (once; the run's next turns are served from the gateway's cache);
- ``relevant``: the agent has relevant memories on (the agent setting) and
  10,000 memories of its own (``--memories``): every context carries the
  ``<relevant_memories>`` block for the thread's latest user message (23
  messages back), retrieved once per call and with a receipt each time. The
  memories are written straight into agent memory's tables and index before it
  starts, as ``bench.retrieval_bench`` loads them (the first 1,000 texts
  embedded for real, the rest reusing those vectors with a little noise), and
  the index's HNSW graphs built; the latest user message is the same on every
  call, so agent memory has its vector cached (as for a turn's later model calls).

Then AppendMessages throughput through the gateway, at 1 and 16 clients; then
the ``journal_message_search`` tool (CallTool, hybrid and keyword, summaries off
and on) over one user's 600 messages in six threads, as issue 14 measured it
from outside (~40 ms a search then), once the projection and its embeddings
have caught up.
Target (issue 14): >= 556 BuildContext calls/s at 16 clients, p99 <= 60 ms
there, p50 <= 4 ms for one client; search p50 <= 10 ms at a 1k-message scope;
BuildContext with relevant memories p50 <= 20 ms for one client at 10k memories.

    python -m bench.gateway_bench [--seconds 5] [--only buildcontext|append|search]
        [--memories 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import uvloop
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as memory_grpc
from agentmemory.common.v1 import message_pb2, principal_pb2, run_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from agentmemory.gateway.v1 import learning_service_pb2 as learning_pb
from agentmemory.gateway.v1 import learning_service_pb2_grpc as learning_grpc
from agentmemory.gateway.v1 import run_service_pb2 as run_pb
from agentmemory.gateway.v1 import run_service_pb2_grpc as run_grpc
from agentmemory.search.v1 import search_service_pb2 as search_pb
from agentmemory.search.v1 import search_service_pb2_grpc as search_grpc
from agentmemory.thread_memory.v1 import thread_memory_service_pb2 as thread_pb
from agentmemory.thread_memory.v1 import thread_memory_service_pb2_grpc as thread_grpc
from google.protobuf import struct_pb2

from bench import platform
from bench.platform import SERVICES
from bench.retrieval_bench import QUERIES, load_memories
from bench.search_bench import VOCABULARY, sentence
from libs import clients
from services.agent_memory.app import MIGRATIONS
from testkit.platform import bind_memory, update_agent_settings

USER, ASSISTANT, TOOL = message_pb2.ROLE_USER, message_pb2.ROLE_ASSISTANT, message_pb2.ROLE_TOOL
OK = message_pb2.TOOL_CALL_STATUS_SUCCEEDED
PLAIN, LEARNER, SEARCHER = "bench-agent", "bench-learner", "bench-searcher"
RELEVANT = "bench-relevant"
RECORDED_TASK = "Book me a flight to Porto next Friday."
LATEST_TASK = "Please book a flight to Porto for Friday"


def caller(agent: str) -> pb.Caller:
    return pb.Caller(agent_id=agent, user_id="u1", surface=principal_pb2.SURFACE_AGENT)


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


def _ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def cpu_seconds(roots: dict[str, int]) -> dict[str, float]:
    """CPU time used so far by each named process, from /proc: a backend's with all its
    descendants (PostgreSQL's backends), this process's alone (the others are its children)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().rpartition(")")[2].split()[1])
            except (OSError, ValueError):
                continue

    def tree(pid: int) -> list[int]:
        return [pid] + [p for child, parent in parents.items() if parent == pid
                        for p in tree(child)]

    used = {}
    for name, pid in roots.items():
        total = 0
        for member in (tree(pid) if pid != os.getpid() else [pid]):
            try:
                total += _ticks(member)
            except (OSError, ValueError):
                continue
        used[name] = total / os.sysconf("SC_CLK_TCK")
    return used


class Meter:
    """CPU milliseconds per call of each process over one load phase."""

    def __init__(self, roots: dict[str, int]) -> None:
        self._roots = roots

    def __enter__(self) -> Meter:
        self._before = cpu_seconds(self._roots)
        return self

    def __exit__(self, *exc) -> None:
        after = cpu_seconds(self._roots)
        self.used = {name: after[name] - self._before[name] for name in self._roots}

    def per_call(self, calls: int) -> dict[str, float]:
        return {name: round(used * 1000 / max(calls, 1), 2) for name, used in self.used.items()}


async def load(make_call, concurrency: int, seconds: float) -> tuple[int, float, float, float]:
    """(calls, calls per second, p50 ms, p99 ms) of ``concurrency`` clients for ``seconds``."""
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
    return (len(latencies), len(latencies) / (time.monotonic() - started),
            percentile(latencies, 0.5), percentile(latencies, 0.99))


@dataclass
class Bench:
    roots: dict[str, int]  # process name -> pid, for CPU per call
    seconds: float
    profile: Path | None  # py-spy's collapsed stacks of each service, at 16 clients

    async def measure(self, label: dict, make_call, concurrency: int,
                      outcomes: Counter | None = None) -> None:
        """``outcomes``: what ``make_call`` tallies there, printed with the figures."""
        profiling = self._profile(label) if self.profile and concurrency == 16 else []
        with Meter(self.roots) as meter:
            calls, rate, p50, p99 = await load(make_call, concurrency, self.seconds)
        for process in profiling:
            process.wait()
        print(json.dumps(label | {
            "clients": concurrency, "per_second": round(rate), "p50_ms": round(p50, 2),
            "p99_ms": round(p99, 2), "load": round(os.getloadavg()[0], 2),
            "cpu_ms_per_call": meter.per_call(calls)}
            | ({"outcomes": dict(outcomes)} if outcomes else {})), flush=True)

    async def idle(self) -> None:
        """What each process spends with no call at all (feeds, flushes, polling), in CPU
        milliseconds per second: part of every per-call figure above it."""
        with Meter(self.roots) as meter:
            await asyncio.sleep(self.seconds)
        print(json.dumps({"call": "none (idle)", "load": round(os.getloadavg()[0], 2),
                          "cpu_ms_per_second": {name: round(used * 1000 / self.seconds, 2)
                                                for name, used in meter.used.items()}}),
              flush=True)

    def _profile(self, label: dict) -> list[subprocess.Popen]:
        self.profile.mkdir(parents=True, exist_ok=True)
        stem = "-".join(str(v) for v in label.values())
        return [subprocess.Popen(
            [str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(pid),
             "--duration", str(int(self.seconds)),
             "--rate", "200", "--format", "raw", "--nonblocking",
             "--output", str(self.profile / f"{stem}-{name}.txt")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for name, pid in self.roots.items() if name in SERVICES]


def recorded_turn() -> list[message_pb2.Message]:
    calls = [message_pb2.ToolCall(id="c1", name="search_flights",
                                  arguments='{"to": "OPO", "day": "friday"}', status=OK,
                                  result="3 flights"),
             message_pb2.ToolCall(id="c2", name="book_flight", arguments='{"flight": "TP123"}',
                                  status=OK, result="booked TP123")]
    return [message_pb2.Message(id="r-u", role=USER, content=RECORDED_TASK),
            message_pb2.Message(id="r-a", role=ASSISTANT, content="On it.", tool_calls=calls),
            message_pb2.Message(id="r-t1", role=TOOL, content="3 flights", tool_call_id="c1"),
            message_pb2.Message(id="r-t2", role=TOOL, content="booked TP123", tool_call_id="c2"),
            message_pb2.Message(id="r-r", role=ASSISTANT, content="Booked.")]


async def record_procedure(channel, metadata) -> None:
    """One successful run with two tool calls: learning records it as a procedure."""
    gateway, runs = pb_grpc.GatewayServiceStub(channel), run_grpc.RunServiceStub(channel)
    learner = caller(LEARNER)
    await runs.StartRun(run_pb.StartRunRequest(caller=learner, thread_id="learned",
                                               run_id="r1"), metadata=metadata)
    await gateway.AppendMessages(pb.AppendMessagesRequest(
        caller=learner, thread_id="learned", messages=recorded_turn()), metadata=metadata)
    await runs.FinishRun(run_pb.FinishRunRequest(
        caller=learner, thread_id="learned", run_id="r1",
        outcome=run_pb2.RUN_OUTCOME_SUCCEEDED), metadata=metadata)
    learning = learning_grpc.LearningServiceStub(channel)
    deadline = time.monotonic() + 60
    while not (await learning.ListProcedures(learning_pb.ListProceduresRequest(
            caller=learner), metadata=metadata)).procedures:
        assert time.monotonic() < deadline, "the procedure was not recorded"
        await asyncio.sleep(0.5)


async def seed_thread(channels, metadata, agent: str, last_task: str) -> None:
    """60 messages (the last user message ``last_task``), a summary, 10 pinned facts."""
    gateway = pb_grpc.GatewayServiceStub(channels["gateway"])
    texts = [f"Message {i} about the quarterly plan." for i in range(58)]
    messages = [message_pb2.Message(id=f"m{i}", role=USER if i % 2 == 0 else ASSISTANT,
                                    content=text) for i, text in enumerate(texts)]
    messages += [message_pb2.Message(id="m58", role=USER, content=last_task),
                 message_pb2.Message(id="m59", role=ASSISTANT, content="Looking into it.")]
    for start in range(0, 60, 20):
        await gateway.AppendMessages(pb.AppendMessagesRequest(
            caller=caller(agent), thread_id="busy", messages=messages[start:start + 20]),
            metadata=metadata)
    principal = principal_pb2.Principal(account_id="demo", agent_id=agent, user_id="u1",
                                        environment="default")
    memory = memory_grpc.AgentMemoryServiceStub(channels["agent_memory"])
    for i in range(10):
        await memory.Store(memory_pb.StoreRequest(
            principal=principal, key=f"fact{i}", content=f"Profile fact number {i}.",
            category=memory_pb.CATEGORY_USER_PROFILE, importance=0.8))
    await thread_grpc.ThreadMemoryServiceStub(channels["thread_memory"]).Summarize(
        thread_pb.SummarizeRequest(principal=principal, thread_id="busy"))


async def check_context(gateway, metadata, agent: str, expected: int) -> pb.BuildContextRequest:
    request = pb.BuildContextRequest(caller=caller(agent), thread_id="busy")
    reply = await gateway.BuildContext(request, metadata=metadata)
    deadline = time.monotonic() + 60
    while reply.relevant_memories_status == pb.RELEVANT_MEMORIES_STATUS_TIMED_OUT:
        assert time.monotonic() < deadline, "the relevant memories keep timing out"
        reply = await gateway.BuildContext(request, metadata=metadata)  # the model loading
    assert len(reply.messages) == expected, (agent, len(reply.messages))
    assert reply.messages[0].content.count("\n- ") == 10
    assert "memory_store" in {t.name for t in reply.tools}, "Memory is not bound"
    if agent == RELEVANT:
        assert reply.messages[1].content.startswith("<relevant_memories>"), reply.messages[1]
    return request


async def bench_build_context(bench: Bench, channels, key: str) -> None:
    metadata = (("authorization", f"Bearer {key}"),)
    await record_procedure(channels["gateway"], metadata)
    await seed_thread(channels, metadata, PLAIN, "Draft the quarterly plan summary.")
    await seed_thread(channels, metadata, LEARNER, LATEST_TASK)
    await seed_thread(channels, metadata, RELEVANT, QUERIES[0])
    await run_grpc.RunServiceStub(channels["gateway"]).StartRun(run_pb.StartRunRequest(
        caller=caller(LEARNER), thread_id="busy", run_id="r2"), metadata=metadata)
    gateway = pb_grpc.GatewayServiceStub(channels["gateway"])
    plain = await check_context(gateway, metadata, PLAIN, 22)
    learner = await check_context(gateway, metadata, LEARNER, 23)
    relevant = await check_context(gateway, metadata, RELEVANT, 23)
    await bench.idle()
    for name, request in (("plain", plain), ("procedures", learner), ("relevant", relevant)):
        for concurrency in (1, 16, 64):
            statuses = Counter()  # relevant_memories_status: DELIVERED, or TIMED_OUT under load

            async def call(n: int, i: int, r=request, tally=statuses) -> None:
                reply = await gateway.BuildContext(r, metadata=metadata)
                tally[pb.RelevantMemoriesStatus.Name(reply.relevant_memories_status)
                      .removeprefix("RELEVANT_MEMORIES_STATUS_")] += 1

            await bench.measure({"call": "BuildContext", "case": name}, call, concurrency,
                                statuses)


async def bench_append(bench: Bench, channels, key: str) -> None:
    gateway = pb_grpc.GatewayServiceStub(channels["gateway"])
    metadata = (("authorization", f"Bearer {key}"),)
    for concurrency in (1, 16):
        await bench.measure({"call": "AppendMessages"}, lambda n, i, c=concurrency: (
            gateway.AppendMessages(pb.AppendMessagesRequest(
                caller=caller(PLAIN), thread_id=f"append-{c}-{n}", messages=[
                    message_pb2.Message(id=f"a{i}", role=USER, content="hello there")]),
                metadata=metadata)), concurrency)


async def bench_search(bench: Bench, channels, key: str) -> None:
    gateway = pb_grpc.GatewayServiceStub(channels["gateway"])
    metadata = (("authorization", f"Bearer {key}"),)
    rng = random.Random(14)
    for thread in range(6):
        for batch in range(0, 100, 50):
            await gateway.AppendMessages(pb.AppendMessagesRequest(
                caller=caller(SEARCHER), thread_id=f"search-{thread}", messages=[
                    message_pb2.Message(id=f"s{i}", role=USER if i % 2 else ASSISTANT,
                                        content=sentence(rng))
                    for i in range(batch, batch + 50)]), metadata=metadata)
    search = search_grpc.SearchServiceStub(channels["search"])
    while True:  # the projection and its embeddings catch up in the background
        status = await search.DescribeProjection(search_pb.DescribeProjectionRequest())
        if status.lag == 0 and status.embedding_lag == 0 and status.embedded_messages >= 600:
            break
        await asyncio.sleep(0.2)
    await bench.idle()

    def call(mode: str, summarize: bool):
        def one(n: int, i: int):
            arguments = struct_pb2.Struct()
            arguments.update({"query": " ".join(rng.sample(VOCABULARY[50:1000], 3)),
                              "mode": mode, "summarize": summarize})
            return gateway.CallTool(pb.CallToolRequest(
                caller=caller(SEARCHER), tool_name="journal_message_search",
                arguments=arguments), metadata=metadata)
        return one

    for mode, summarize in (("hybrid", False), ("keyword", False), ("hybrid", True)):
        for concurrency in (1, 16):
            await bench.measure({"call": "journal_message_search", "mode": mode,
                                 "summarize": summarize, "messages": 600},
                                call(mode, summarize), concurrency)


def preload(memories: int, only: str | None):
    """Before agent memory starts: the relevant case's memories, straight into its
    PostgreSQL and index (as an account that has been in use for a while)."""
    def before_start(component) -> None:
        if component.name != "agent_memory" or only not in (None, "buildcontext"):
            return
        loading = time.monotonic()
        asyncio.run(load_memories(component.env["AGENT_MEMORY_POSTGRES_DSN"],
                                  Path(component.env["AGENT_MEMORY_INDEX_PATH"]),
                                  {"demo": memories}, MIGRATIONS, hnsw=True, agent=RELEVANT))
        print(json.dumps({"loaded_memories": memories,
                          "seconds": round(time.monotonic() - loading)}), flush=True)
    return before_start


async def main(running: platform.Platform, seconds: float, only: str | None,
               profile: Path | None) -> None:
    admin, key = running.admin_key(), running.create_key("agent")
    by_name = running.addresses
    for agent in (PLAIN, LEARNER, RELEVANT):
        bind_memory(by_name["gateway"], admin, agent)
    update_agent_settings(by_name["gateway"], admin, RELEVANT, memory_pb.AgentSettings(
        relevant_memories_enabled=True), ["relevant_memories_enabled"])
    bench = Bench(running.pids | {"bench client": os.getpid()}, seconds, profile)
    channels = {name: clients.channel(by_name[name], default_timeout=30)
                for name in ("gateway", "agent_memory", "thread_memory", "search")}
    try:
        if only in (None, "buildcontext"):
            await bench_build_context(bench, channels, key)
        if only in (None, "append"):
            await bench_append(bench, channels, key)
        if only in (None, "search"):
            await bench_search(bench, channels, key)
    finally:
        for channel in channels.values():
            await channel.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--only", choices=["buildcontext", "append", "search"])
    parser.add_argument("--profile", type=Path,
                        help="write py-spy's collapsed stacks of each service at 16 clients here")
    parser.add_argument("--memories", type=int, default=10_000,
                        help="the relevant case's memories (loaded before agent memory starts)")
    arguments = parser.parse_args()
    with platform.running("gateway-bench-",
                          before_start=preload(arguments.memories, arguments.only)) as started:
        uvloop.run(main(started, arguments.seconds, arguments.only, arguments.profile))
