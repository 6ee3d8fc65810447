"""HTTP surfaces against gRPC: the whole platform as `make run` starts it, clients here.

The same call over each surface, one client at a time, surfaces interleaved in
rounds so that load drift hits all of them alike:

- ``memory_recall`` (agent memory does the real work: query embedding, index,
  PostgreSQL): gRPC CallTool, REST ``POST /v1/tools/memory_recall:call``, MCP
  ``tools/call`` as a bare JSON-RPC POST, and MCP through the official SDK client;
- the compiled context (seed 002; six search legs, the compiler, a receipt
  written): gRPC RetrieveContext, REST ``POST /v1/memory/retrieve`` (seed 002's
  field names), MCP ``search_memory`` as a bare JSON-RPC POST and through the SDK;
- the tool list (no upstream call: the surface's own cost): gRPC ListTools, REST
  ``GET /v1/tools``, MCP ``tools/list``.

Memory is bound to the benchmark's agent through the agent setting
(UpdateAgentSettings with the demo admin key), as an administrator would.

Target: HTTP adds <= 2 ms p50 over gRPC.

    python -m bench.http_bench [--calls 300]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Awaitable, Callable

import httpx
import httpx2
import uvloop
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.common.v1 import principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from agentmemory.gateway.v1 import memory_library_service_pb2_grpc as library_grpc
from agentmemory.gateway.v1 import retrieval_service_pb2 as retrieval_pb
from agentmemory.gateway.v1 import retrieval_service_pb2_grpc as retrieval_grpc
from google.protobuf import field_mask_pb2, struct_pb2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from bench import platform
from libs import clients

AGENT, USER = "bench-agent", "u1"
CALLER = pb.Caller(agent_id=AGENT, user_id=USER, surface=principal_pb2.SURFACE_MCP_GATEWAY)
CALLER_JSON = {"agentId": AGENT, "userId": USER, "surface": "SURFACE_MCP_GATEWAY"}
QUERY = {"query": "Which database does the team use?"}
SEARCH = {"query": QUERY["query"], "runId": "bench-run", "tokenBudget": 1000}
MCP_VERSION = "2025-06-18"


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


async def measure(calls: dict[str, Callable[[], Awaitable[object]]],
                  rounds: int, per_round: int) -> dict[str, list[float]]:
    latencies: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            for _ in range(per_round):
                started = time.perf_counter()
                await call()
                latencies[name].append(time.perf_counter() - started)
    return latencies


def report(title: str, latencies: dict[str, list[float]], baseline: str, *,
           column: str = "surface", over: str = "gRPC") -> None:
    base = percentile(latencies[baseline], 0.5)
    print(f"\n{title}\n| {column} | p50 | p99 | p50 over {over} |\n|---|---|---|---|")
    for name, samples in latencies.items():
        p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
        print(f"| {name} | {p50:.2f} ms | {p99:.2f} ms | {p50 - base:+.2f} ms |")


async def main(calls: int) -> None:
    with platform.running("http-bench-", metrics=True) as running:
        await run(running.addresses["gateway"],
                  f"http://127.0.0.1:{running.ports['GATEWAY_HTTP_PORT']}",
                  running.admin_key(), calls)


async def run(grpc_address: str, base_url: str, key: str, calls: int) -> None:
    authorization = {"authorization": f"Bearer {key}"}
    mcp_headers = {**authorization, "x-agent-id": AGENT, "x-user-id": USER}
    arguments = struct_pb2.Struct()
    arguments.update(QUERY)
    async with clients.channel(grpc_address, default_timeout=30) as channel, \
            httpx.AsyncClient(base_url=base_url, headers=authorization, timeout=30) as http, \
            httpx2.AsyncClient(headers=mcp_headers, timeout=30) as mcp_http, \
            Client(streamable_http_client(f"{base_url}/mcp", http_client=mcp_http)) as sdk:
        gateway = pb_grpc.GatewayServiceStub(channel)
        retrieval = retrieval_grpc.RetrievalServiceStub(channel)
        metadata = tuple(authorization.items())
        await library_grpc.MemoryLibraryServiceStub(channel).UpdateAgentSettings(
            library_pb.UpdateAgentSettingsRequest(
                caller=pb.Caller(agent_id=AGENT), settings=memory_pb.AgentSettings(
                    memory_bound=True), update_mask=field_mask_pb2.FieldMask(
                        paths=["memory_bound"])), metadata=metadata)
        for i, fact in enumerate(["The team uses PostgreSQL 16 for billing.",
                                  "Deploys happen on Tuesdays.", "The user prefers dark mode.",
                                  "The staging database is refreshed nightly."]):
            await sdk.call_tool("memory_store", {"key": f"fact_{i}", "content": fact,
                                                 "category": "project_fact"})

        async def mcp_post(method: str, params: dict) -> None:
            response = await http.post("/mcp", json={
                "jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers={
                **mcp_headers, "accept": "application/json, text/event-stream",
                "mcp-protocol-version": MCP_VERSION})
            body = response.json()
            assert response.status_code == 200 and "error" not in body, response.text
            assert not body["result"].get("isError"), response.text

        async def sdk_call(name: str, arguments: dict) -> None:
            result = await sdk.call_tool(name, arguments)
            assert not result.is_error, result.content

        async def rest_call(method: str, path: str, **kwargs) -> None:
            response = await http.request(method, path, **kwargs)
            assert response.status_code == 200, response.text

        recall = {
            "gRPC CallTool": lambda: gateway.CallTool(pb.CallToolRequest(
                caller=CALLER, tool_name="memory_recall", arguments=arguments),
                metadata=metadata),
            "REST POST /v1/tools/memory_recall:call": lambda: rest_call(
                "POST", "/v1/tools/memory_recall:call",
                json={"caller": CALLER_JSON, "arguments": QUERY}),
            "MCP tools/call (JSON-RPC POST)": lambda: mcp_post(
                "tools/call", {"name": "memory_recall", "arguments": QUERY}),
            "MCP tools/call (Python SDK client)": lambda: sdk_call("memory_recall", QUERY),
        }
        retrieve = {
            "gRPC RetrieveContext": lambda: retrieval.RetrieveContext(
                retrieval_pb.RetrieveContextRequest(
                    caller=CALLER, run_id=SEARCH["runId"], semantic_query=SEARCH["query"],
                    token_budget=SEARCH["tokenBudget"]), metadata=metadata),
            "REST POST /v1/memory/retrieve": lambda: rest_call(
                "POST", "/v1/memory/retrieve", json={
                    "applicationId": AGENT, "userId": USER, "runId": SEARCH["runId"],
                    "semanticQuery": SEARCH["query"], "tokenBudget": SEARCH["tokenBudget"]}),
            "MCP search_memory (JSON-RPC POST)": lambda: mcp_post(
                "tools/call", {"name": "search_memory", "arguments": SEARCH}),
            "MCP search_memory (Python SDK client)": lambda: sdk_call("search_memory", SEARCH),
        }
        listing = {
            "gRPC ListTools": lambda: gateway.ListTools(pb.ListToolsRequest(caller=CALLER),
                                                        metadata=metadata),
            "REST GET /v1/tools": lambda: rest_call("GET", "/v1/tools", params={
                "caller.agentId": AGENT, "caller.surface": "SURFACE_MCP_GATEWAY"}),
            "MCP tools/list (JSON-RPC POST)": lambda: mcp_post("tools/list", {}),
        }
        for group in (recall, retrieve, listing):  # warm-up
            await measure(group, 1, 20)
        rounds = max(1, calls // 20)
        report(f"memory_recall, {rounds * 20} calls each, one client", await measure(
            recall, rounds, 20), "gRPC CallTool")
        report(f"compiled context (RetrieveContext), {rounds * 20} calls each, one client",
               await measure(retrieve, rounds, 20), "gRPC RetrieveContext")
        report(f"tool list, {rounds * 20} calls each, one client", await measure(
            listing, rounds, 20), "gRPC ListTools")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    uvloop.run(main(parser.parse_args().calls))
