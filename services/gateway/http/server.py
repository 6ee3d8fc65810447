"""uvicorn serving the HTTP app on the gateway's own event loop.

uvicorn's ``serve()`` would take over SIGINT/SIGTERM; the gateway owns its
signals (``libs.server.wait_for_stop_signal``) and stops this server itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import uvicorn
from starlette.types import ASGIApp

from services.gateway.http import app
from services.gateway.http.mcp import McpEndpoint
from services.gateway.keys import ApiKeys

_STARTUP_POLL_SECONDS = 0.01


class _Server(uvicorn.Server):
    def capture_signals(self):
        return contextlib.nullcontext()


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=2048)


@contextlib.asynccontextmanager
async def serving(app: ASGIApp, sock: socket.socket, *, grace_seconds: float) -> AsyncIterator[None]:
    """Serve on a bound socket while inside. On exit: stop accepting, let in-flight
    requests finish within the grace period."""
    server = _Server(uvicorn.Config(app, lifespan="off", log_config=None, access_log=False,
                                    timeout_graceful_shutdown=grace_seconds))
    task = asyncio.create_task(server.serve(sockets=[sock]), name="http-server")
    try:
        while not server.started:
            if task.done():
                task.result()  # raises what stopped it
                raise RuntimeError("the HTTP server stopped during start-up")
            await asyncio.sleep(_STARTUP_POLL_SECONDS)
        yield
    finally:
        server.should_exit = True
        await task


@contextlib.asynccontextmanager
async def listening(servicer, keys: ApiKeys, *, host: str, port: int, grace_seconds: float,
                    max_body_bytes: int) -> AsyncIterator[int]:
    """The gateway's HTTP listener (MCP, REST, OpenAPI) while inside; yields its port."""
    mcp = McpEndpoint(servicer, keys, max_body_bytes=max_body_bytes)
    application = app.build(servicer, mcp, max_body_bytes=max_body_bytes)
    with _bind(host, port) as sock:  # first: a taken port fails the start plainly
        async with mcp.sessions.run(), serving(application, sock, grace_seconds=grace_seconds):
            yield sock.getsockname()[1]
