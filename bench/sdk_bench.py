"""The client libraries' overhead over the raw generated stubs: the whole platform as
`make run` starts it, the same call through each, one client at a time, interleaved in
rounds so that load drift hits all of them alike.

- ``memory_recall``: the raw stub's CallTool against ``memory.recall`` (which builds the
  Struct, adds the key, the deadline and the retry loop, and turns the result into a
  RecallResult);
- the compiled context (seed 002): the raw stub's RetrieveContext against
  ``memory.search``;
- the Python SDK's own work per call without the network (building the call, turning a
  real reply into the result), against building the raw request: on a loaded machine the
  latencies' noise (several ms) hides a difference this small.

Python: the blocking ``Client`` against a blocking stub, and ``AsyncClient`` against an
asyncio stub. TypeScript (``clients/typescript/bench/overhead.mjs``, run with node): the
SDK against a Connect client of the generated code on its own HTTP/2 connection.

    python -m bench.sdk_bench [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import time
import timeit
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from agentmemory_client import AsyncClient, Client, _calls
from agentmemory_client._proto.agentmemory.common.v1 import principal_pb2
from agentmemory_client._proto.agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory_client._proto.agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from agentmemory_client._proto.agentmemory.gateway.v1 import retrieval_service_pb2 as retrieval_pb
from agentmemory_client._proto.agentmemory.gateway.v1 import (
    retrieval_service_pb2_grpc as retrieval_grpc,
)

from bench import http_bench
from bench.scratch import scratch_dir
from testkit.platform import running_platform

ROOT = Path(__file__).resolve().parents[1]
ACCOUNT, AGENT, USER = "acme", "sdk-bench", "u1"
QUERY, RUN, BUDGET = "Which database does the team use?", "bench-run", 1000
FACTS = ["The team uses PostgreSQL 16 for billing.", "Deploys happen on Tuesdays.",
         "The user prefers dark mode.", "The staging database is refreshed nightly."]
PER_ROUND = 20


def report(title: str, latencies: dict[str, list[float]], baseline: str) -> None:
    http_bench.report(title, latencies, baseline, column="client", over="the raw stub")


def measure(calls: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    latencies: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            for _ in range(PER_ROUND):
                started = time.perf_counter()
                call()
                latencies[name].append(time.perf_counter() - started)
    return latencies


def measure_async(calls: dict[str, Callable[[], Awaitable[object]]],
                  rounds: int) -> Awaitable[dict[str, list[float]]]:
    return http_bench.measure(calls, rounds, PER_ROUND)


def _caller() -> pb.Caller:
    return pb.Caller(agent_id=AGENT, user_id=USER, surface=principal_pb2.SURFACE_AGENT)


def _recall_request() -> pb.CallToolRequest:
    request = pb.CallToolRequest(caller=_caller(), tool_name="memory_recall")
    request.arguments.update({"query": QUERY})
    return request


def _search_request() -> retrieval_pb.RetrieveContextRequest:
    return retrieval_pb.RetrieveContextRequest(caller=_caller(), run_id=RUN,
                                               semantic_query=QUERY, token_budget=BUDGET)


def python_sync(address: str, key: str, rounds: int) -> None:
    metadata = (("authorization", f"Bearer {key}"),)
    recall, retrieve = _recall_request(), _search_request()
    with grpc.insecure_channel(address) as channel, \
            Client(api_key=key, address=address, agent_id=AGENT, user_id=USER) as client:
        gateway, retrieval = pb_grpc.GatewayServiceStub(channel), \
            retrieval_grpc.RetrievalServiceStub(channel)
        recalls = {"raw stub CallTool": lambda: gateway.CallTool(recall, metadata=metadata,
                                                                 timeout=30),
                   "Client.memory.recall": lambda: client.memory.recall(QUERY)}
        searches = {"raw stub RetrieveContext": lambda: retrieval.RetrieveContext(
                        retrieve, metadata=metadata, timeout=30),
                    "Client.memory.search": lambda: client.memory.search(
                        QUERY, run_id=RUN, token_budget=BUDGET)}
        for group in (recalls, searches):  # warm-up
            measure(group, 1)
        report(f"Python, blocking: memory_recall, {rounds * PER_ROUND} calls each",
               measure(recalls, rounds), "raw stub CallTool")
        report(f"Python, blocking: compiled context, {rounds * PER_ROUND} calls each",
               measure(searches, rounds), "raw stub RetrieveContext")


def python_work(address: str, key: str) -> None:
    """Microseconds of client-side work per call, with replies the gateway really gave."""
    metadata = (("authorization", f"Bearer {key}"),)
    recall, retrieve = _recall_request(), _search_request()
    with grpc.insecure_channel(address) as channel:
        recalled = pb_grpc.GatewayServiceStub(channel).CallTool(recall, metadata=metadata)
        found = retrieval_grpc.RetrievalServiceStub(channel).RetrieveContext(
            retrieve, metadata=metadata)
    work = {
        "recall, raw request": _recall_request,
        "recall, SDK call and result": lambda: _calls.recall(_caller(), QUERY).convert(recalled),
        "search, raw request": _search_request,
        "search, SDK call and result": lambda: _calls.search(
            _caller(), QUERY, run_id=RUN, token_budget=BUDGET).convert(found),
    }
    print("\nPython, client-side work per call (no network), best of 5 x 2,000\n"
          "| work | per call |\n|---|---|")
    for name, step in work.items():
        best = min(timeit.repeat(step, number=2000, repeat=5)) / 2000
        print(f"| {name} | {best * 1e6:.1f} µs |")


async def python_async(address: str, key: str, rounds: int) -> None:
    metadata = (("authorization", f"Bearer {key}"),)
    recall, retrieve = _recall_request(), _search_request()
    async with grpc.aio.insecure_channel(address) as channel, \
            AsyncClient(api_key=key, address=address, agent_id=AGENT, user_id=USER) as client:
        gateway, retrieval = pb_grpc.GatewayServiceStub(channel), \
            retrieval_grpc.RetrievalServiceStub(channel)
        recalls = {"raw aio stub CallTool": lambda: gateway.CallTool(
                       recall, metadata=metadata, timeout=30),
                   "AsyncClient.memory.recall": lambda: client.memory.recall(QUERY)}
        searches = {"raw aio stub RetrieveContext": lambda: retrieval.RetrieveContext(
                        retrieve, metadata=metadata, timeout=30),
                    "AsyncClient.memory.search": lambda: client.memory.search(
                        QUERY, run_id=RUN, token_budget=BUDGET)}
        for group in (recalls, searches):
            await measure_async(group, 1)
        report(f"Python, asyncio: memory_recall, {rounds * PER_ROUND} calls each",
               await measure_async(recalls, rounds), "raw aio stub CallTool")
        report(f"Python, asyncio: compiled context, {rounds * PER_ROUND} calls each",
               await measure_async(searches, rounds), "raw aio stub RetrieveContext")


def typescript(address: str, key: str, rounds: int) -> None:
    sdk = ROOT / "clients" / "typescript"
    subprocess.run(["npm", "run", "build", "--silent"], cwd=sdk, check=True)
    done = subprocess.run(
        ["node", str(sdk / "bench" / "overhead.mjs")], check=True, capture_output=True,
        text=True, env={**os.environ, "AGENTMEMORY_ADDRESS": address, "AGENTMEMORY_API_KEY": key,
                        "AGENT": AGENT, "USER": USER, "QUERY": QUERY, "RUN": RUN,
                        "BUDGET": str(BUDGET), "ROUNDS": str(rounds),
                        "PER_ROUND": str(PER_ROUND)})
    results = json.loads(done.stdout)
    for title, group, baseline in (("memory_recall", "recall", "raw Connect client callTool"),
                                   ("compiled context", "search",
                                    "raw Connect client retrieveContext")):
        report(f"TypeScript: {title}, {rounds * PER_ROUND} calls each",
               {name: [ms / 1000 for ms in samples] for name, samples in results[group].items()},
               baseline)


def main(calls: int) -> None:
    rounds = max(1, calls // PER_ROUND)
    with running_platform(scratch_dir("sdk-bench-")) as platform:
        platform.bind_memory(ACCOUNT, AGENT)
        key = platform.key(ACCOUNT)
        with Client(api_key=key, address=platform.grpc, agent_id=AGENT, user_id=USER) as client:
            for i, fact in enumerate(FACTS):
                client.memory.store(f"fact_{i}", fact, category="project_fact")
        python_sync(platform.grpc, key, rounds)
        python_work(platform.grpc, key)
        asyncio.run(python_async(platform.grpc, key, rounds))
        typescript(platform.grpc, key, rounds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    main(parser.parse_args().calls)
