"""PostgreSQL down: every gateway surface answers UNAVAILABLE (HTTP 503) with a reason,
never INTERNAL, and works again once it is back."""

from __future__ import annotations

import asyncio
import re

import grpc
import httpx
from agentmemory.common.v1 import principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc

from libs import clients
from libs.errors import error_details
from services.gateway.app import running
from services.gateway.keys import KeySpec
from services.gateway.settings import GatewayConfig
from testkit.ports import free_port
from tools.backends.postgres import EmbeddedPostgres

MCP_LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
MCP_HEADERS = {"accept": "application/json, text/event-stream", "x-agent-id": "helper"}


async def _grpc_code(port: int, key: str) -> tuple[grpc.StatusCode, str]:
    async with clients.channel(f"127.0.0.1:{port}", default_timeout=10) as channel:
        try:
            await pb_grpc.GatewayServiceStub(channel).ListTools(
                pb.ListToolsRequest(caller=pb.Caller(agent_id="helper",
                                                     surface=principal_pb2.SURFACE_AGENT)),
                metadata=(("authorization", f"Bearer {key}"),))
        except grpc.aio.AioRpcError as exc:
            details = error_details(exc)
            return details.code, details.reason
    return grpc.StatusCode.OK, ""


async def test_postgresql_down_is_unavailable_on_every_surface(tmp_path):
    server = EmbeddedPostgres(tmp_path / "pg", free_port()).start()
    config = GatewayConfig.from_env({
        "GATEWAY_PORT": "0", "GATEWAY_HTTP_PORT": "0", "GATEWAY_POSTGRES_DSN": server.dsn,
        "GATEWAY_SHUTDOWN_GRACE_SECONDS": "1", "GATEWAY_KEY_CACHE_SECONDS": "0.01"})
    try:
        async with running(config) as gateway:
            key = (await gateway.keys.create("acme", "app", KeySpec("agent"))).key
            server.stop()
            code, reason = await _grpc_code(gateway.server.port, key)
            assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "POSTGRES_UNAVAILABLE")
            auth = {"authorization": f"Bearer {key}"}
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{gateway.http_port}",
                                         timeout=10) as http:
                rest = await http.get("/v1/tools", headers=auth,
                                      params={"caller.agentId": "helper"})
                mcp = await http.post("/mcp", headers=auth | MCP_HEADERS, json=MCP_LIST)
                form = await http.get("/a/acme/memory/sign-in")
                token = re.search(r'name="token" value="([^"]+)"', form.text).group(1)
                page = await http.post("/a/acme/memory/sign-in", data={
                    "token": token, "api_key": key, "agent_id": "helper"},
                    headers={"origin": f"http://127.0.0.1:{gateway.http_port}"})
            assert (rest.status_code, rest.json()["reason"]) == (503, "POSTGRES_UNAVAILABLE")
            assert (mcp.status_code, mcp.json()["reason"]) == (503, "POSTGRES_UNAVAILABLE")
            assert page.status_code == 503 and "PostgreSQL unreachable" in page.text
            server.start()
            for _ in range(50):  # the pool reconnects; agent memory is not running here
                code, reason = await _grpc_code(gateway.server.port, key)
                if reason != "POSTGRES_UNAVAILABLE":
                    break
                await asyncio.sleep(0.2)
            assert (code, reason) == (grpc.StatusCode.UNAVAILABLE, "AGENT_MEMORY_UNAVAILABLE")
    finally:
        server.stop()
