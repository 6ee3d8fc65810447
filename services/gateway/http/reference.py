"""The listener's front door: ``/`` says what is here, ``/docs`` is a browsable API
reference of ``/openapi.json`` (Swagger UI, its assets served from the swagger-ui-py
package: nothing is fetched from a CDN), ``/healthz`` is for load balancers."""

from __future__ import annotations

from importlib import resources

import asyncpg
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from libs import postgres
from libs.identity import ID_PATTERN

ASSETS = "/docs/assets"
HEALTH_TIMEOUT_SECONDS = 2.0
# The page's one script is the package's bundle plus this inline start (CSP below).
_REFERENCE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agentmemory API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{ASSETS}/swagger-ui.css"></head>
<body><div id="reference"></div>
<script src="{ASSETS}/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({{url: "/openapi.json", dom_id: "#reference", deepLinking: true,
  persistAuthorization: false, tryItOutEnabled: false}});</script>
</body></html>"""
_FRONT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agentmemory gateway</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 42rem; margin: 2rem auto;
  padding: 0 1rem; line-height: 1.5">
<h1>agentmemory gateway</h1>
<p>The memory platform for LLM agents. gRPC is on the gateway's gRPC port (server
reflection: <code>grpcurl -plaintext HOST:50051 list</code>); this listener serves:</p>
<ul>
<li><a href="/docs">API reference</a> (REST, from <a href="/openapi.json">/openapi.json</a>)</li>
<li><code>/mcp</code>: the MCP server (streamable HTTP)</li>
<li>The memory library of an account: <code>/a/&lt;account&gt;/memory</code>
<form action="/a" method="get" style="display:inline">
<input name="account" aria-label="Account" placeholder="account" required>
<button type="submit">Open</button></form></li>
<li><a href="/healthz">/healthz</a>: health, for load balancers</li>
</ul></body></html>"""
_SECURITY = {"x-content-type-options": "nosniff", "referrer-policy": "no-referrer",
             "x-frame-options": "DENY"}


def routes(pool: asyncpg.Pool) -> list[BaseRoute]:
    async def front(request: Request) -> Response:
        return HTMLResponse(_FRONT, headers=_SECURITY)

    async def library(request: Request) -> Response:
        account = request.query_params.get("account", "").strip()
        if not ID_PATTERN.fullmatch(account):
            return RedirectResponse("/", status_code=303)
        return RedirectResponse(f"/a/{account}/memory", status_code=303)

    async def reference(request: Request) -> Response:
        return HTMLResponse(_REFERENCE, headers=_SECURITY)

    async def health(request: Request) -> Response:
        """Serving while PostgreSQL answers (without it no credential can be checked)."""
        try:
            async with postgres.unavailable_when_down():
                await pool.fetchval("SELECT 1", timeout=HEALTH_TIMEOUT_SECONDS)
        except Exception as exc:  # down, or anything else: not serving, and why
            return JSONResponse({"status": "NOT_SERVING",
                                 "reason": getattr(exc, "reason", type(exc).__name__)},
                                status_code=503)
        return JSONResponse({"status": "SERVING"})

    assets = StaticFiles(directory=str(resources.files("swagger_ui") / "static"))
    return [Route("/", front, methods=["GET"]),
            Route("/a", library, methods=["GET"]),
            Route("/docs", reference, methods=["GET"]),
            Mount(ASSETS, assets, name="reference-assets"),
            Route("/healthz", health, methods=["GET"])]
