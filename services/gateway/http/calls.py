"""One gateway call made over HTTP.

REST, MCP and the library page call the gRPC servicers' own methods with the
request message:
authentication (the ``authorization`` header, checked by the servicer through
``ApiKeys``), validation and handlers are the gRPC ones, so no HTTP surface has
rules of its own. What the gRPC server interceptor does around a call (request
id, deadline) is done here, and a failure is answered as it is there
(``libs.server.answer_for``).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from libs import clients, log, request_checks
from libs.server import REQUEST_ID_HEADER, answer_for

Response = TypeVar("Response")
# What the servicer may read of the caller's headers, as gRPC metadata.
_FORWARDED = ("authorization", REQUEST_ID_HEADER)


@dataclass(frozen=True)
class Servicers:
    """The gateway's gRPC servicers, by the short name the HTTP routes use."""

    gateway: Any  # GatewayService
    library: Any  # MemoryLibraryService
    retrieval: Any  # RetrievalService
    runs: Any  # RunService
    learning: Any  # LearningService
    keys: Any  # KeyService

    def method(self, service: str, rpc: str) -> Callable[..., Awaitable[Any]]:
        return getattr(getattr(self, service), rpc)


class HttpCallContext:
    """The part of ``grpc.aio.ServicerContext`` the servicer uses, for an HTTP request."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        self._metadata = tuple((name, headers[name]) for name in _FORWARDED if name in headers)

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def time_remaining(self) -> float | None:
        return None  # HTTP carries no deadline: outgoing calls keep their own timeouts


def request_id(headers: Mapping[str, str]) -> str:
    return (headers.get(REQUEST_ID_HEADER) or uuid.uuid4().hex)[:64]


async def invoke(method: Callable[..., Awaitable[Response]], request,
                 headers: Mapping[str, str]) -> Response:
    """``method(request, context)``; a failure is always a DomainError (INTERNAL
    with only a request id when unexpected, as over gRPC)."""
    rid = request_id(headers)
    log.request_id.set(rid)
    clients.call_deadline.set(None)
    name = getattr(method, "__name__", "call")
    try:
        request_checks.check(request)  # the checks gRPC requests get in libs/server.py
        return await method(request, HttpCallContext(headers))
    except Exception as exc:
        answer = answer_for(exc, f"HTTP {name}", rid)
        if answer is exc:
            raise
        raise answer from exc
