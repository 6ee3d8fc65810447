"""The Starlette application of the gateway's HTTP listener."""

from __future__ import annotations

import uuid

import asyncpg
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from libs.errors import DomainError, NotFound, Unimplemented, shorten
from libs.server import REQUEST_ID_HEADER
from services.gateway.http import calls, errors, openapi, reference, rest
from services.gateway.http.mcp import McpEndpoint
from services.gateway.http.web.pages import LibraryPages
from services.gateway.keys import ApiKeys

API_VERSION = "v1"


class RequestIds:
    """Every request has an ``x-request-id`` (the caller's, or a new one), echoed in the reply."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = MutableHeaders(scope=scope)
        rid = (headers.get(REQUEST_ID_HEADER) or uuid.uuid4().hex)[:64]
        headers[REQUEST_ID_HEADER] = rid

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = rid
            await send(message)

        await self._app(scope, receive, send_with_id)


async def _domain_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, DomainError)
    return errors.response(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 405:
        # Starlette joins a route's methods from a set: sorted, the header is the same every run
        allowed = ", ".join(sorted(
            method.strip() for method in (exc.headers or {}).get("Allow", "").split(",")
            if method.strip()))
        refused = errors.response(Unimplemented(
            f"{request.method} is not allowed on {shorten(request.url.path)}; allowed: "
            f"{allowed}", reason="METHOD_NOT_ALLOWED", metadata={"allowed": allowed}))
        refused.headers["allow"] = allowed
        return refused
    if exc.status_code == 404:
        return errors.response(NotFound(f"no route {shorten(request.url.path)}",
                                        reason="ROUTE_NOT_FOUND"))
    return JSONResponse({"code": "UNKNOWN", "reason": "HTTP_ERROR", "message": exc.detail},
                        status_code=exc.status_code)


async def _unexpected(request: Request, exc: Exception) -> Response:
    """Outside a service call (those map their own failures): INTERNAL with only the request id."""
    rid = request.headers.get(REQUEST_ID_HEADER, "-")
    return errors.response(DomainError(f"internal error (request id {rid})",
                                       metadata={"request_id": rid}))


def build(servicers: calls.Servicers, keys: ApiKeys, mcp: McpEndpoint, pages: LibraryPages,
          pool: asyncpg.Pool, *, max_body_bytes: int) -> Starlette:
    document = openapi.document(version=API_VERSION)

    async def openapi_json(request: Request) -> JSONResponse:
        return JSONResponse(document)

    app = Starlette(
        routes=[Route("/mcp", mcp, name="mcp"),
                Route("/openapi.json", openapi_json, methods=["GET"]),
                *rest.routes(servicers, keys, max_body_bytes),
                *pages.routes(), *reference.routes(pool)],
        exception_handlers={DomainError: _domain_error, HTTPException: _http_error,
                            Exception: _unexpected})
    app.add_middleware(RequestIds)
    return app
