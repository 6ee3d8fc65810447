"""The same request over REST and over gRPC, answers and errors as JSON, to compare."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from httpx import AsyncClient

from tests.surfaces import grpc_calls


def auth(key: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"} if key else {}


async def rest(platform, key: str | None, method: str, path: str, body=None,
               params=None) -> tuple[int, Any]:
    async with AsyncClient(base_url=platform.http, timeout=30) as http:
        response = await http.request(method, path, headers=auth(key), json=body, params=params)
    return response.status_code, response.json()


async def grpc(platform, key: str | None, rpc: str, fields: dict) -> dict[str, Any]:
    request_type = grpc_calls.REQUESTS[rpc]
    return await grpc_calls.invoke(platform.grpc, key, rpc,
                                   json_format.ParseDict(fields, request_type()))
