"""The HTTP listener lives and dies with the gateway: up once the gateway is, closed after."""

from __future__ import annotations

import socket

import httpx

from services.gateway.app import running
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
