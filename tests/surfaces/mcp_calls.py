"""An MCP client of the gateway's /mcp, the official SDK's, with the caller's headers."""

from __future__ import annotations

from contextlib import asynccontextmanager

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def mcp_client(platform, key: str | None, agent: str | None = "concierge",
                     user: str | None = None):
    """``agent`` None (or ""): no X-Agent-Id (a credential bound to one agent needs none)."""
    headers = {"authorization": f"Bearer {key}"} if key else {}
    headers |= {"x-agent-id": agent} if agent else {}
    headers |= {"x-user-id": user} if user else {}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http, Client(
            streamable_http_client(f"{platform.http}/mcp", http_client=http)) as client:
        yield client
