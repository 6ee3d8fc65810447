"""The grpc.aio server every service runs in.

:class:`GrpcServer` adds, around the service's own servicers: the standard
health service, server reflection (so ``grpcurl list`` needs no proto files),
OpenTelemetry tracing when enabled, Prometheus metrics (:mod:`libs.metrics`),
and an interceptor that gives each call a request id, records its deadline for
outgoing calls, checks the internal secret, parses the request itself
(:mod:`libs.request_checks`: a malformed request is INVALID_ARGUMENT naming
the field, never UNKNOWN from grpc's deserializer), counts the call, and turns
domain errors into rich gRPC statuses. :meth:`GrpcServer.stop` shuts down
gracefully: health NOT_SERVING, drain in-flight calls, stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import inspect
import logging
import signal
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from libs import clients, errors, log, outages, proto_docs, request_checks
from libs.metrics import Metrics
from libs.settings import Secret, setting
from libs.tracing import Tracing

logger = logging.getLogger(__name__)

REQUEST_ID_HEADER = "x-request-id"


@dataclass(frozen=True)
class ServerSettings:
    """Listening address and shutdown behaviour; each service sets its port."""

    host: str = setting("HOST", "127.0.0.1", "Interface to listen on (0.0.0.0 in containers).")
    port: int = setting("PORT", 0, "Port to listen on (0 picks a free one).")
    shutdown_grace_seconds: float = setting(
        "SHUTDOWN_GRACE_SECONDS", 10.0, "How long in-flight calls may finish after SIGTERM."
    )
    max_message_bytes: int = setting(
        "MAX_MESSAGE_BYTES", 16 * 1024 * 1024, "Largest gRPC message accepted or sent."
    )
    metrics_port: int = setting(
        "METRICS_PORT", 0, "Port of the Prometheus /metrics endpoint (on HOST); 0 disables it."
    )


@dataclass(frozen=True)
class InternalAuthSettings:
    token: Secret = setting(
        "INTERNAL_AUTH_TOKEN", Secret(""),
        "Shared secret internal services require from their callers (the gateway and each "
        "other); empty: no check, for the embedded single-machine default.")


@dataclass(frozen=True)
class ServiceBinding:
    """One gRPC service: its full name and how to add its servicer to a server."""

    name: str
    register: Callable[[grpc.aio.Server], None]


class GrpcServer:
    """A started server owns its port until :meth:`stop`."""

    def __init__(
        self,
        settings: ServerSettings,
        bindings: Sequence[ServiceBinding],
        *,
        tracing: Tracing | None = None,
        internal_token: Secret | None = None,
    ) -> None:
        self._settings = settings
        self._names = [b.name for b in bindings]
        self.metrics = Metrics(self._names[0] if self._names else "grpc")
        interceptors = [*(tracing.server_interceptors() if tracing else []),
                        CallInterceptor(internal_token, self.metrics)]
        options = [
            ("grpc.max_receive_message_length", settings.max_message_bytes),
            ("grpc.max_send_message_length", settings.max_message_bytes),
            # gRPC turns SO_REUSEPORT on by default: a second process given the same port
            # (a stale one, a mistyped setting) would start and silently take half the
            # connections, answering UNIMPLEMENTED for another service's methods. Off, it
            # fails to start.
            ("grpc.so_reuseport", 0),
        ]
        self._server = grpc.aio.server(interceptors=interceptors, options=options)
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, self._server)
        for binding in bindings:
            binding.register(self._server)
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
            proto_docs.DocumentedReflection(
                [*self._names, health.SERVICE_NAME, reflection.SERVICE_NAME]), self._server)
        self.port = 0

    async def start(self) -> int:
        address = f"{self._settings.host}:{self._settings.port}"
        self.port = self._server.add_insecure_port(address)
        await self._server.start()
        self.metrics.serve(self._settings.host, self._settings.metrics_port)
        await self.set_serving(True)
        return self.port

    async def set_serving(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ("", *self._names):
            await self._health.set(name, status)

    async def set_component_health(self, name: str, serving: bool) -> None:
        """Report a part of the service (e.g. a projection's lag) under its own name."""
        await self._health.set(name, health_pb2.HealthCheckResponse.SERVING if serving
                               else health_pb2.HealthCheckResponse.NOT_SERVING)

    async def stop(self) -> None:
        """NOT_SERVING first (load balancers drain), then finish in-flight calls."""
        await self._health.enter_graceful_shutdown()
        await self._server.stop(self._settings.shutdown_grace_seconds)
        await self.metrics.close()


async def wait_for_stop_signal() -> None:
    """Return on the first SIGTERM or SIGINT."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
        logger.info("stop signal received: shutting down")
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)


# Health checks and reflection answer anyone: orchestrators and grpcurl carry no secret.
_OPEN_METHODS = ("/grpc.health.v1.Health/", "/grpc.reflection.")


class CallInterceptor(grpc.aio.ServerInterceptor):
    """Request id, deadline propagation, the internal secret, request parsing and
    checks, metrics, and error mapping.

    The handler is given an identity deserializer: the wrapper receives the raw
    bytes and parses them itself, after the secret is checked, so a request that
    does not parse is answered INVALID_ARGUMENT like any other bad input."""

    def __init__(self, internal_token: Secret | None = None,
                 metrics: Metrics | None = None) -> None:
        self._token = internal_token.reveal() if internal_token else ""
        self._metrics = metrics

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method
        call = _Call(method, "" if method.startswith(_OPEN_METHODS) else self._token,
                     handler.request_deserializer, self._metrics)
        if handler.unary_unary is not None:
            return handler._replace(request_deserializer=None,
                                    unary_unary=_unary(handler.unary_unary, call))
        if handler.unary_stream is not None:
            return handler._replace(request_deserializer=None,
                                    unary_stream=_streaming(handler.unary_stream, call))
        return handler


@dataclass(frozen=True)
class _Call:
    """What the wrappers of one method need."""

    method: str
    token: str
    parse: Callable[[bytes], object] | None
    metrics: Metrics | None

    def begin(self, context: grpc.aio.ServicerContext) -> str:
        """The call's request id, once its deadline is noted and its caller checked."""
        # Text headers only: a "-bin" header's value is bytes, and none of ours is one.
        metadata = {key: value for key, value in context.invocation_metadata() or ()
                    if isinstance(value, str)}
        rid = metadata.get(REQUEST_ID_HEADER) or uuid.uuid4().hex
        log.request_id.set(rid[:64])
        remaining = context.time_remaining()
        clients.call_deadline.set(None if remaining is None else time.monotonic() + remaining)
        if self.token and not hmac.compare_digest(
                metadata.get(clients.INTERNAL_TOKEN_HEADER, ""), self.token):
            raise errors.Unauthenticated("internal services accept calls from the platform only",
                                         reason="INTERNAL_CALLER_REQUIRED")
        return rid

    def request(self, data: bytes):
        return data if self.parse is None else request_checks.parse(self.parse, data)

    def end(self, code: grpc.StatusCode, started: float) -> None:
        if self.metrics is not None:
            self.metrics.record_call(self.method, code, time.perf_counter() - started)


def answer_for(exc: Exception, method: str, rid: str) -> errors.DomainError:
    """What a caller is told of an exception its call raised, on every surface: a domain
    error as it is, a dependency down UNAVAILABLE (``libs.outages``), anything else
    INTERNAL with the request id only (logged here with its traceback)."""
    exc = outages.as_unavailable(exc) or exc
    if isinstance(exc, errors.DomainError):
        logger.info("%s -> %s %s: %s", method, exc.code.name, exc.reason,
                    errors.clip(exc.message, errors.MAX_MESSAGE_BYTES))
        return exc
    logger.exception("%s failed unexpectedly", method)
    return errors.internal_error(rid)


def _aborted_code(context: grpc.aio.ServicerContext) -> grpc.StatusCode:
    code = context.code()
    return code if isinstance(code, grpc.StatusCode) else grpc.StatusCode.UNKNOWN


@contextlib.asynccontextmanager
async def _answering(call: _Call, context: grpc.aio.ServicerContext) -> AsyncIterator[None]:
    """Around one call of either kind: begun, its failure answered as a status, counted."""
    rid, started, code = "-", time.perf_counter(), grpc.StatusCode.OK
    try:
        rid = call.begin(context)
        yield
    except grpc.aio.AbortError:
        code = _aborted_code(context)
        raise
    except (asyncio.CancelledError, GeneratorExit):
        code = grpc.StatusCode.CANCELLED
        raise
    except Exception as exc:
        status = errors.to_grpc_status(answer_for(exc, call.method, rid))
        code = status.code
        await context.abort_with_status(status)
    finally:
        call.end(code, started)


def _unary(behavior, call: _Call):
    async def wrapped(request, context):
        async with _answering(call, context):
            return await behavior(call.request(request), context)

    return wrapped


def _streaming(behavior, call: _Call):
    if not inspect.isasyncgenfunction(behavior):
        # A coroutine that answers through context.write(), as the health service's
        # Watch does (gRPC's client-side health checks call it).
        return _unary(behavior, call)

    async def wrapped(request, context) -> AsyncIterator:
        async with _answering(call, context):
            async for response in behavior(call.request(request), context):
                yield response

    return wrapped
