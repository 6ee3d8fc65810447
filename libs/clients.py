"""Client channels whose calls always carry a deadline.

Every call made through :func:`channel` gets the caller's timeout, or the
channel's default, shortened to what remains of the call being served (so a
service never waits on a dependency longer than its own caller waits on it).
The request id of the call being served travels along as ``x-request-id``.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import AsyncIterator, Sequence

import grpc

from libs import errors, log
from libs.settings import Secret

DEFAULT_TIMEOUT_SECONDS = 5.0
INTERNAL_TOKEN_HEADER = "x-internal-token"

#: Monotonic deadline of the call being served, set by the server interceptor.
call_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "call_deadline", default=None
)


def channel(
    target: str,
    *,
    default_timeout: float = DEFAULT_TIMEOUT_SECONDS,
    interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
    max_message_bytes: int = 16 * 1024 * 1024,
    internal_token: Secret | None = None,
) -> grpc.aio.Channel:
    """An insecure channel to ``target`` whose calls always have a deadline (and carry
    the internal secret, when given, for services that require it)."""
    options = [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
    ]
    return grpc.aio.insecure_channel(
        target,
        options=options,
        interceptors=[*interceptors, DeadlineInterceptor(default_timeout, internal_token)],
    )


class DeadlineInterceptor(
    grpc.aio.UnaryUnaryClientInterceptor,
    grpc.aio.UnaryStreamClientInterceptor,
    grpc.aio.StreamUnaryClientInterceptor,
    grpc.aio.StreamStreamClientInterceptor,
):
    def __init__(self, default_timeout: float, internal_token: Secret | None = None) -> None:
        if default_timeout <= 0:
            raise ValueError("default_timeout must be positive")
        self._default = default_timeout
        self._token = internal_token.reveal() if internal_token else ""

    def _with_deadline(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        timeout = self._default if details.timeout is None else details.timeout
        deadline = call_deadline.get()
        if deadline is not None:
            timeout = max(0.0, min(timeout, deadline - time.monotonic()))
        metadata = grpc.aio.Metadata(*(details.metadata or ()))
        rid = log.request_id.get()
        if rid != "-" and "x-request-id" not in metadata:
            metadata.add("x-request-id", rid)
        if self._token:
            metadata.add(INTERNAL_TOKEN_HEADER, self._token)
        return details._replace(timeout=timeout, metadata=metadata)

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        return await continuation(self._with_deadline(client_call_details), request)

    async def intercept_unary_stream(self, continuation, client_call_details, request):
        return await continuation(self._with_deadline(client_call_details), request)

    async def intercept_stream_unary(self, continuation, client_call_details, request_iterator):
        return await continuation(self._with_deadline(client_call_details), request_iterator)

    async def intercept_stream_stream(self, continuation, client_call_details, request_iterator):
        return await continuation(self._with_deadline(client_call_details), request_iterator)


_UNREACHABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                grpc.StatusCode.CANCELLED, grpc.StatusCode.RESOURCE_EXHAUSTED}


@contextlib.asynccontextmanager
async def upstream(name: str) -> AsyncIterator[None]:
    """Calls to another service: when it cannot answer, raise UNAVAILABLE naming it
    (reason ``<NAME>_UNAVAILABLE``); its other errors are relayed with their code,
    reason and field violations."""
    try:
        yield
    except grpc.aio.AioRpcError as exc:
        if exc.code() in _UNREACHABLE:
            raise errors.Unavailable(
                f"{name} unavailable: {exc.details()}", reason=f"{name.upper()}_UNAVAILABLE"
            ) from exc
        raise errors.relayed(exc) from exc
