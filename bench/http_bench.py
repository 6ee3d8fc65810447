"""HTTP surfaces against gRPC: the whole platform as `make run` starts it, clients here.

The same call over each surface, one client at a time, surfaces interleaved in
rounds so that load drift hits all of them alike:

- ``memory_recall`` (agent memory does the real work: query embedding, index,
  PostgreSQL): gRPC CallTool, REST ``POST /v1/tools/memory_recall:call``, MCP
  ``tools/call`` as a bare JSON-RPC POST, and MCP through the official SDK client;
- the tool list (no upstream call: the surface's own cost): gRPC ListTools, REST
  ``GET /v1/tools``, MCP ``tools/list``.

Target: HTTP adds <= 2 ms p50 over gRPC.

    python -m bench.http_bench [--calls 300]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import httpx2
import uvloop
from agentmemory.common.v1 import principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from google.protobuf import struct_pb2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from libs import clients
from tests.support.ports import free_port
from tools import launch

AGENT, USER = "bench-agent", "u1"
CALLER = pb.Caller(agent_id=AGENT, user_id=USER, surface=principal_pb2.SURFACE_MCP_GATEWAY,
                   capabilities=[principal_pb2.CAPABILITY_MEMORY])
CALLER_JSON = {"agentId": AGENT, "userId": USER, "surface": "SURFACE_MCP_GATEWAY",
               "capabilities": ["CAPABILITY_MEMORY"]}
QUERY = {"query": "Which database does the team use?"}
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


def report(title: str, latencies: dict[str, list[float]], baseline: str) -> None:
    base = percentile(latencies[baseline], 0.5)
    print(f"\n{title}\n| surface | p50 | p99 | p50 over gRPC |\n|---|---|---|---|")
    for name, samples in latencies.items():
        p50, p99 = percentile(samples, 0.5), percentile(samples, 0.99)
        print(f"| {name} | {p50:.2f} ms | {p99:.2f} ms | {p50 - base:+.2f} ms |")


async def main(calls: int) -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="http-bench-"))
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
        await run(components[-1].address, f"http://127.0.0.1:{ports['GATEWAY_HTTP_PORT']}",
                  key, calls)
    finally:
        for component in reversed(started):
            component.stop()


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
        metadata = tuple(authorization.items())
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
            assert response.status_code == 200 and "error" not in response.json(), response.text

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
            "MCP tools/call (Python SDK client)": lambda: sdk.call_tool("memory_recall", QUERY),
        }
        listing = {
            "gRPC ListTools": lambda: gateway.ListTools(pb.ListToolsRequest(caller=CALLER),
                                                        metadata=metadata),
            "REST GET /v1/tools": lambda: rest_call("GET", "/v1/tools", params={
                "caller.agentId": AGENT, "caller.surface": "SURFACE_MCP_GATEWAY",
                "caller.capabilities": "CAPABILITY_MEMORY"}),
            "MCP tools/list (JSON-RPC POST)": lambda: mcp_post("tools/list", {}),
        }
        for group in (recall, listing):  # warm-up
            await measure(group, 1, 20)
        rounds = max(1, calls // 20)
        report(f"memory_recall, {rounds * 20} calls each, one client", await measure(
            recall, rounds, 20), "gRPC CallTool")
        report(f"tool list, {rounds * 20} calls each, one client", await measure(
            listing, rounds, 20), "gRPC ListTools")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    uvloop.run(main(parser.parse_args().calls))
