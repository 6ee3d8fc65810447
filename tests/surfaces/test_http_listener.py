"""The HTTP listener lives and dies with the gateway: up once the gateway is, closed after."""

from __future__ import annotations

import asyncio
import socket
import time
from email.utils import parsedate_to_datetime

import httpx
import uvicorn

from services.gateway.app import running
from services.gateway.http.server import serving
from services.gateway.settings import GatewayConfig


def _refuses_connections(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


async def test_the_http_listener_starts_and_stops_with_the_gateway(postgres):
    config = GatewayConfig.from_env({
        "GATEWAY_PORT": "0", "GATEWAY_HTTP_PORT": "0", "GATEWAY_POSTGRES_DSN": postgres.dsn,
        "GATEWAY_SHUTDOWN_GRACE_SECONDS": "1"})
    async with running(config) as gateway:
        port = gateway.http_port
        assert port and port != gateway.server.port
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            document = await http.get("/openapi.json")
            refused = await http.get("/v1/tools")
        assert document.status_code == 200 and document.json()["openapi"] == "3.1.0"
        assert (refused.status_code, refused.json()["reason"]) == (401, "API_KEY_MISSING")
    assert _refuses_connections(port)


async def test_a_taken_http_port_stops_the_gateway_start(postgres):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        config = GatewayConfig.from_env({
            "GATEWAY_PORT": "0", "GATEWAY_HTTP_PORT": str(taken.getsockname()[1]),
            "GATEWAY_POSTGRES_DSN": postgres.dsn})
        try:
            async with running(config):
                raise AssertionError("the gateway started without its HTTP port")
        except OSError:
            pass


async def _ok(scope, receive, send) -> None:
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def test_an_idle_listener_ticks_once_a_second_keeps_its_date_and_stops_at_once(monkeypatch):
    ticks = []
    on_tick = uvicorn.Server.on_tick

    async def counted(self, counter):
        ticks.append(time.monotonic())
        return await on_tick(self, counter)

    monkeypatch.setattr(uvicorn.Server, "on_tick", counted)
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]
        async with serving(_ok, sock, grace_seconds=1):
            await asyncio.sleep(3)
            async with httpx.AsyncClient() as http:
                reply = await http.get(f"http://127.0.0.1:{port}/")
            leaving = time.monotonic()
        stopped_in = time.monotonic() - leaving
    idle = [t for t in ticks if t < leaving]
    assert 2 <= len(idle) <= 5, idle  # uvicorn alone ticks ten times a second
    served_date = parsedate_to_datetime(reply.headers["date"]).timestamp()
    assert reply.status_code == 200 and abs(served_date - time.time()) <= 2.0
    assert stopped_in < 0.5  # stop() ends the tick's wait at once
