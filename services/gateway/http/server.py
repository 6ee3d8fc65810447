"""uvicorn serving the HTTP app on the gateway's own event loop.

uvicorn's ``serve()`` would take over SIGINT/SIGTERM; the gateway owns its
signals (``libs.server.wait_for_stop_signal``) and stops this server itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import asyncpg
import uvicorn
from starlette.types import ASGIApp

from services.gateway.http import app
from services.gateway.http.calls import Servicers
from services.gateway.http.mcp import McpEndpoint
from services.gateway.http.web.pages import LibraryPages
from services.gateway.http.web.sessions import Sessions
from services.gateway.keys import ApiKeys
from services.gateway.settings import GatewayHttpSettings

_STARTUP_POLL_SECONDS = 0.01
_TICKS_PER_SECOND = 10  # uvicorn's on_tick refreshes its Date header every tenth tick


class _Server(uvicorn.Server):
    """uvicorn without its signal handlers, and without its tick ten times a second (to
    notice ``should_exit``): this one ticks once a second, when its Date header is due
    anyway, and :meth:`stop` ends it at once."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._stopping = asyncio.Event()

    def capture_signals(self):
        return contextlib.nullcontext()

    def stop(self) -> None:
        self.should_exit = True
        self._stopping.set()

    async def main_loop(self) -> None:
        ticks = 0
        while not await self.on_tick(ticks):
            ticks += _TICKS_PER_SECOND  # what uvicorn would count: the Date header is refreshed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), 1.0)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=2048)


@contextlib.asynccontextmanager
async def serving(app: ASGIApp, sock: socket.socket, *, grace_seconds: float) -> AsyncIterator[None]:
    """Serve on a bound socket while inside. On exit: stop accepting, let in-flight
    requests finish within the grace period."""
    server = _Server(uvicorn.Config(app, lifespan="off", log_config=None, access_log=False,
                                    # typed int, but uvicorn hands it to asyncio.wait_for
                                    timeout_graceful_shutdown=grace_seconds))  # type: ignore[arg-type]
    task = asyncio.create_task(server.serve(sockets=[sock]), name="http-server")
    try:
        while not server.started:
            if task.done():
                task.result()  # raises what stopped it
                raise RuntimeError("the HTTP server stopped during start-up")
            await asyncio.sleep(_STARTUP_POLL_SECONDS)
        yield
    finally:
        server.stop()
        await task


@contextlib.asynccontextmanager
async def listening(servicers: Servicers, keys: ApiKeys, pool: asyncpg.Pool,
                    settings: GatewayHttpSettings, *, host: str, grace_seconds: float,
                    max_body_bytes: int) -> AsyncIterator[int]:
    """The gateway's HTTP listener (MCP, REST, OpenAPI, the memory library page) while
    inside; yields its port."""
    mcp = McpEndpoint(servicers.gateway, keys, max_body_bytes=max_body_bytes)
    sessions = Sessions(pool, settings.session_secret,
                        max_age_seconds=settings.session_max_age_seconds)
    pages = LibraryPages(servicers, keys, sessions, max_body_bytes=max_body_bytes)
    application = app.build(servicers, keys, mcp, pages, pool, max_body_bytes=max_body_bytes)
    with _bind(host, settings.port) as sock:  # first: a taken port fails the start plainly
        async with mcp.sessions.run(), serving(application, sock, grace_seconds=grace_seconds):
            yield sock.getsockname()[1]
