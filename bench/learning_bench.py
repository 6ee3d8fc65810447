"""Learning benchmarks, in process on the embedded stack (PostgreSQL from its wheel, a local
journal, the in-process Qdrant engine, the local embedding model):

- extraction jobs per second with the labelled offline extractor: runs of 10 messages
  (stated facts, no tool calls) learned from end to end (journal read, extraction,
  deduplication, suggestions written), procedures off;
- procedure recording overhead per finished run: the same runs with a turn of three tool
  calls, procedures on minus procedures off (masking, one task embedding, the write, the
  index upsert);
- RecallProcedures p50/p99 at 10,000 procedures of one agent, query embedding included.
  Loading 10,000 procedures through runs would spend most of the time embedding on the CPU,
  so they are written straight into PostgreSQL and the index: 200 task texts are embedded
  for real and the rest reuse those vectors with a little noise.

    python -m bench.learning_bench [--runs 200] [--procedures 10000] [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
import uuid
from pathlib import Path

import numpy
import uvloop
from agentmemory.common.v1 import message_pb2, run_pb2
from agentmemory.journal.v1 import journal_service_pb2 as journal_pb

from libs import clients
from services.agent_memory.app import running as memory_running
from services.agent_memory.learning.model import Procedure, Step
from services.agent_memory.learning.procedures import collection
from services.agent_memory.memories.model import Actor
from services.agent_memory.memories.rules import Scope
from services.agent_memory.settings import AgentMemoryConfig
from services.journal.app import running as journal_running
from services.journal.settings import JournalConfig
from testkit.ports import free_port
from testkit.postgres import fresh_database
from tools.backends.postgres import EmbeddedPostgres

CITIES = ["Porto", "Lisbon", "Berlin", "Osaka", "Lima", "Oslo", "Cairo", "Quito", "Perth", "Riga"]
TASKS = ["Book me a flight to {c}", "Find a hotel in {c} for two nights",
         "Cancel my reservation in {c}", "Summarize the sales report for {c}",
         "Open a support ticket about the {c} office printer", "Refund order {n} for a customer",
         "Deploy the billing service to {c} staging", "Schedule a meeting with the {c} team",
         "Translate the {c} onboarding guide", "Check the weather in {c} tomorrow"]


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def run_messages(n: int, tools: bool) -> list[message_pb2.Message]:
    said = [f"My name is Person{n} Lopes.", f"I live in {CITIES[n % 10]}.",
            "We use Terraform for our cloud.", "I prefer concise answers."]
    messages = []
    for i in range(10):
        role = message_pb2.ROLE_USER if i % 2 == 0 else message_pb2.ROLE_ASSISTANT
        text = said[i // 2] if role == message_pb2.ROLE_USER and i // 2 < 4 else f"Reply {i}."
        messages.append(message_pb2.Message(id=f"m{i}", role=role, content=text))
    if tools:
        calls = [message_pb2.ToolCall(id=f"c{k}", name=name, arguments=json.dumps(
            {"city": CITIES[n % 10], "api_key": f"sk-live-{n:08d}"}),
            status=message_pb2.TOOL_CALL_STATUS_SUCCEEDED, result="ok")
            for k, name in enumerate(["search", "book", "notify"])]
        messages[-1] = message_pb2.Message(id="m9", role=message_pb2.ROLE_ASSISTANT,
                                           content="Working.", tool_calls=calls)
        messages.insert(8, message_pb2.Message(
            id="m-task", role=message_pb2.ROLE_USER,
            content=TASKS[n % 10].format(c=CITIES[(n // 10) % 10], n=n)))
    return messages


async def learn_runs(harness, journal, count: int, tools: bool, label: str) -> float:
    """Seconds to learn from ``count`` finished runs (queued first, then drained)."""
    principal = journal_pb.AppendRequest().principal
    principal.account_id, principal.agent_id, principal.user_id = "bench", "agent", "ana"
    for n in range(count):
        thread = f"{label}-{n}"
        await journal.StartRun(journal_pb.StartRunRequest(principal=principal,
                                                          thread_id=thread, run_id="r"))
        await journal.Append(journal_pb.AppendRequest(principal=principal, thread_id=thread,
                                                      messages=run_messages(n, tools)))
        await journal.FinishRun(journal_pb.FinishRunRequest(
            principal=principal, thread_id=thread, run_id="r",
            outcome=run_pb2.RUN_OUTCOME_SUCCEEDED))
    learner, store = harness.learning.learner, harness.learning.learner._store
    deadline = time.monotonic() + 120
    while await store._pool.fetchval(
            "SELECT count(*) FROM learning_runs WHERE thread_id LIKE $1", f"{label}-%") < count:
        assert time.monotonic() < deadline, "boundaries did not arrive"
        await asyncio.sleep(0.05)
    started = time.perf_counter()
    done = await learner.drain()
    elapsed = time.perf_counter() - started
    assert done == count, (done, count)
    return elapsed


async def set_procedures(harness, enabled: bool) -> None:
    from services.agent_memory.memories.model import AgentSettings, Role

    actor = Actor("bench", "default", "agent", "ana", Role.ADMIN)
    await harness.memory.update_agent_settings(actor, AgentSettings(procedures_enabled=enabled),
                                               ["procedures_enabled"])


async def load_procedures(harness, count: int) -> None:
    memory = harness.learning
    procedures = memory.learner._procedures
    embedder = procedures._embedder
    texts = [TASKS[i % 10].format(c=CITIES[(i // 10) % 10], n=i) + f" (variant {i // 100})"
             for i in range(200)]
    base = numpy.asarray(await embedder.embed_documents(texts), dtype=numpy.float32)
    rng = numpy.random.default_rng(7)
    store = memory.learner._store
    batch = []
    for i in range(count):
        vector = base[i % 200] + rng.normal(0, 0.02, base.shape[1]).astype(numpy.float32)
        vector /= numpy.linalg.norm(vector)
        p = Procedure(id=uuid.uuid4(), account_id="bench", environment="default",
                      scope=Scope.PRIVATE, agent_id="agent", owner_user_id="ana",
                      thread_id=f"load-{i}", run_id="r", turn_offset=1,
                      task=f"{texts[i % 200]} #{i}",
                      steps=(Step("search", "{}", "succeeded", "ok"),
                             Step("book", "{}", "succeeded", "ok")),
                      created_at=procedures._clock.now())
        async with store.transaction() as c:
            await store.add_procedure(c, p, f"sig-{i}", vector.tobytes(), embedder.name)
        batch.append((p, vector.tolist()))
        if len(batch) == 500:
            await procedures._project(batch)
            batch = []
    if batch:
        await procedures._project(batch)
    name = collection("bench", "default", embedder)
    print(f"  loaded {count} procedures ({await procedures._index.count(name)} in the index)")


async def main(runs: int, procedures: int, calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        postgres = EmbeddedPostgres(root / "postgres", free_port()).start()
        try:
            dsn = await fresh_database(postgres)
            journal_config = JournalConfig.from_env({
                "JOURNAL_PORT": "0", "JOURNAL_OBJECT_STORE": "local",
                "JOURNAL_LOCAL_PATH": str(root / "journal")})
            async with journal_running(journal_config) as (_, journal_server):
                address = f"127.0.0.1:{journal_server.port}"
                config = AgentMemoryConfig.from_env({
                    "AGENT_MEMORY_PORT": "0", "AGENT_MEMORY_POSTGRES_DSN": dsn,
                    "AGENT_MEMORY_INDEX_PATH": str(root / "qdrant"),
                    "AGENT_MEMORY_JOURNAL_ADDRESS": address})
                async with memory_running(config, background=False) as harness, \
                        clients.channel(address) as channel:
                    from agentmemory.journal.v1 import journal_service_pb2_grpc

                    journal = journal_service_pb2_grpc.JournalServiceStub(channel)
                    follower = asyncio.create_task(harness.learning.follower.run_forever())
                    try:
                        await bench(harness, journal, runs, procedures, calls)
                    finally:
                        harness.learning.follower.stop()
                        await follower
        finally:
            postgres.stop()


async def bench(harness, journal, runs: int, procedures: int, calls: int) -> None:
    await set_procedures(harness, False)
    await learn_runs(harness, journal, 20, False, "warm")
    seconds = await learn_runs(harness, journal, runs, False, "facts")
    print(f"extraction (offline extractor): {runs / seconds:.1f} jobs/s "
          f"({seconds / runs * 1000:.1f} ms a run of 10 messages)")
    off = await learn_runs(harness, journal, runs, True, "tools-off")
    await set_procedures(harness, True)
    on = await learn_runs(harness, journal, runs, True, "tools-on")
    print(f"procedure recording overhead: {(on - off) / runs * 1000:.1f} ms per finished run "
          f"({off / runs * 1000:.1f} ms without, {on / runs * 1000:.1f} ms with)")
    await load_procedures(harness, procedures)
    service = harness.learning.service
    actor = Actor("bench", "default", "agent", "ana")
    samples = []
    for i in range(calls):
        task = TASKS[i % 10].format(c=random.choice(CITIES), n=i)
        started = time.perf_counter()
        await service.recall(actor, task, 3, None)
        samples.append((time.perf_counter() - started) * 1000)
    print(f"RecallProcedures at {procedures} procedures: p50 {percentile(samples, 0.5):.1f} ms, "
          f"p99 {percentile(samples, 0.99):.1f} ms (query embedding included)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--procedures", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    arguments = parser.parse_args()
    uvloop.run(main(arguments.runs, arguments.procedures, arguments.calls))
