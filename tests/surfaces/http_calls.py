"""The same request over REST and over gRPC, answers and errors as JSON, to compare."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from httpx import AsyncClient

from services.gateway.http.vocabulary import json_path
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


def in_rest_words(error: dict, aliases: dict[str, str] | None = None) -> dict:
    """A gRPC error body with its fields named as REST names them (JSON names; a route's
    aliases: JSON path -> alias)."""
    def name(path: str) -> str:
        return (aliases or {}).get(json_path(path), json_path(path))
    named = {v["field"] for v in error.get("fieldViolations", ())}
    message = error.get("message", "")
    head, colon, rest = message.partition(":")
    return {**error, "message": name(head) + colon + rest if head in named else message,
            "metadata": {k: name(v) if k == "field" else v
                         for k, v in error.get("metadata", {}).items()},
            "fieldViolations": [{**v, "field": name(v["field"])}
                                for v in error.get("fieldViolations", ())]}
