"""Clients of the internal services: load-balanced over replicas, retried on UNAVAILABLE,
always with a deadline, their errors mapped once.

Every internal call goes through a service's typed client in this package
(``journal``, ``agent_memory``, ``thread_memory``, ``search``), each a
:class:`ServiceClient`: its channel is made by :func:`channel`, and its
:class:`ErrorMapping` interceptor turns a failed call into the platform's error
(:func:`platform_error`), so no call site maps errors.

An address setting names one server (``host:port``), several replicas
(``host:port,host:port``: IP addresses or ``localhost``), or any gRPC target
(``dns:///journal:50052``, whose name may resolve to every replica).
:func:`channel` balances calls over what the target resolves to (``round_robin``)
and retries a call that failed with UNAVAILABLE on another replica, through a
gRPC retry policy in the channel's service config. Every internal call may be
retried: reads are idempotent, and every write is idempotent by design (journal
appends by message id, agent-memory stores by key and content or request id,
settings and purges by their target). A server that answered UNAVAILABLE itself,
because one of its own dependencies is down, tells the client not to retry
(``libs.errors`` adds gRPC's retry pushback): another replica has the same
dependency, and retries at every hop would multiply.

With ``health_service`` the channel also checks each replica's health under that
name (gRPC client-side health checking) and sends calls only to replicas that
report SERVING: the journal's shard channels use it to reach the one process
that holds a shard (see ``libs.clients.journal``).

Every call made through :func:`channel` gets the caller's timeout, or the
channel's default, shortened to what remains of the call being served (so a
service never waits on a dependency longer than its own caller waits on it).
The request id of the call being served travels along as ``x-request-id``.
"""

from __future__ import annotations

import contextvars
import ipaddress
import json
import time
from collections.abc import Sequence

import grpc

from libs import errors, log
from libs.settings import Secret

DEFAULT_TIMEOUT_SECONDS = 5.0
INTERNAL_TOKEN_HEADER = "x-internal-token"
_SCHEMES = ("dns:", "ipv4:", "ipv6:", "unix:", "unix-abstract:", "vsock:")

#: gRPC's retry policy for internal calls: up to 5 attempts, 0.1 s to 1 s apart
#: (gRPC draws each wait at random below the current backoff).
RETRY_POLICY = {
    "maxAttempts": 5,
    "initialBackoff": "0.1s",
    "maxBackoff": "1s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}

#: First and longest wait before reconnecting to an address that failed (ms).
RECONNECT_BACKOFF_MS = (200, 1000)

#: Monotonic deadline of the call being served, set by the server interceptor.
call_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "call_deadline", default=None
)


def grpc_target(address: str) -> str:
    """The gRPC target of an address setting: ``host:port``, ``host:port,host:port``
    (IP addresses or localhost) or a target with a scheme. Raises ValueError."""
    address = address.strip()
    if not address:
        raise ValueError("an address is required")
    if address.startswith(_SCHEMES):
        return address
    parts = [part.strip() for part in address.split(",")]
    if len(parts) == 1:
        return address
    families = {_family(part) for part in parts}
    if len(families) > 1:
        raise ValueError(f"mixes IPv4 and IPv6 addresses: {address!r}")
    return f"{families.pop()}:" + ",".join(_literal(part) for part in parts)


def _split(part: str) -> tuple[str, str]:
    host, _, port = part.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"expected host:port, got {part!r}")
    return host.strip("[]"), port


def _family(part: str) -> str:
    host, _ = _split(part)
    if host == "localhost":
        return "ipv4"
    try:
        return f"ipv{ipaddress.ip_address(host).version}"
    except ValueError:
        raise ValueError(
            f"several addresses must be IP addresses (or localhost), got {host!r}; "
            "for names, use one DNS name that resolves to every replica (dns:///name:port)"
        ) from None


def _literal(part: str) -> str:
    host, port = _split(part)
    host = "127.0.0.1" if host == "localhost" else host
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def service_config(*, retry: bool = True, health_service: str | None = None) -> str:
    """Round robin over the resolved addresses; the retry policy; health checks by name."""
    config: dict = {"loadBalancingConfig": [{"round_robin": {}}]}
    if retry:
        config["methodConfig"] = [{"name": [{}], "retryPolicy": RETRY_POLICY}]
    if health_service is not None:
        config["healthCheckConfig"] = {"serviceName": health_service}
    return json.dumps(config)


def channel(
    target: str,
    *,
    default_timeout: float = DEFAULT_TIMEOUT_SECONDS,
    interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
    max_message_bytes: int = 16 * 1024 * 1024,
    internal_token: Secret | None = None,
    retry: bool = True,
    health_service: str | None = None,
) -> grpc.aio.Channel:
    """An insecure channel to the replicas ``target`` names (see :func:`grpc_target`),
    balanced and retried as the module says, whose calls always have a deadline (and
    carry the internal secret, when given, for services that require it)."""
    options = [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.service_config", service_config(retry=retry, health_service=health_service)),
        # gRPC's own reconnect backoff grows to 120 s: a replica back after a long outage
        # would stay unreached that long, and calls fail fast meanwhile.
        ("grpc.initial_reconnect_backoff_ms", RECONNECT_BACKOFF_MS[0]),
        ("grpc.max_reconnect_backoff_ms", RECONNECT_BACKOFF_MS[1]),
    ]
    return grpc.aio.insecure_channel(
        grpc_target(target),
        options=options,
        interceptors=[*interceptors,
                      *DeadlineInterceptor(default_timeout, internal_token).for_every_call()],
    )


def check_address(value: str, name: str) -> None:
    """For settings: raise ValueError naming the variable when ``value`` is no address."""
    try:
        grpc_target(value)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


class DeadlineInterceptor:
    """Adds the deadline, the request id and the internal secret to a call's details.

    grpc.aio files an interceptor under the first call kind it implements only, so
    one interceptor implementing all four would touch unary-unary calls alone (a
    change-feed subscription then went out without the secret): :func:`for_every_call`
    makes one per kind."""

    def __init__(self, default_timeout: float, internal_token: Secret | None = None) -> None:
        if default_timeout <= 0:
            raise ValueError("default_timeout must be positive")
        self._default = default_timeout
        self._token = internal_token.reveal() if internal_token else ""

    def for_every_call(self) -> list:
        return [_UnaryUnary(self), _UnaryStream(self), _StreamUnary(self), _StreamStream(self)]

    def with_deadline(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        timeout = self._default if details.timeout is None else details.timeout
        deadline = call_deadline.get()
        if deadline is not None:
            timeout = max(0.0, min(timeout, deadline - time.monotonic()))
        metadata = grpc.aio.Metadata(*(details.metadata or ()))
        rid = log.request_id.get()
        if rid != "-" and not metadata.get_all("x-request-id"):
            metadata.add("x-request-id", rid)
        if self._token:
            metadata.add(INTERNAL_TOKEN_HEADER, self._token)
        return grpc.aio.ClientCallDetails(details.method, timeout, metadata,
                                          details.credentials, details.wait_for_ready)


class _UnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, details: DeadlineInterceptor) -> None:
        self._details = details

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        return await continuation(self._details.with_deadline(client_call_details), request)


class _UnaryStream(grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, details: DeadlineInterceptor) -> None:
        self._details = details

    async def intercept_unary_stream(self, continuation, client_call_details, request):
        return await continuation(self._details.with_deadline(client_call_details), request)


class _StreamUnary(grpc.aio.StreamUnaryClientInterceptor):
    def __init__(self, details: DeadlineInterceptor) -> None:
        self._details = details

    async def intercept_stream_unary(self, continuation, client_call_details, request_iterator):
        return await continuation(self._details.with_deadline(client_call_details),
                                  request_iterator)


class _StreamStream(grpc.aio.StreamStreamClientInterceptor):
    def __init__(self, details: DeadlineInterceptor) -> None:
        self._details = details

    async def intercept_stream_stream(self, continuation, client_call_details, request_iterator):
        return await continuation(self._details.with_deadline(client_call_details),
                                  request_iterator)


_UNREACHABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                grpc.StatusCode.CANCELLED}


def _unreachable(exc: grpc.aio.AioRpcError) -> bool:
    """A RESOURCE_EXHAUSTED with our reason is the service's answer (a capacity limit),
    relayed as it is; without one it came from gRPC itself (message size, streams)."""
    if exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
        return not errors.error_details(exc).reason
    return exc.code() in _UNREACHABLE


def platform_error(name: str, exc: grpc.aio.AioRpcError) -> errors.DomainError:
    """What a failed call to service ``name`` is to its caller: UNAVAILABLE naming the
    service (reason ``<NAME>_UNAVAILABLE``) when it could not answer, else its own error
    with its code, reason and field violations. The gRPC error stays the cause (a
    caller that tells a deadline from an outage reads it there)."""
    if _unreachable(exc):
        return errors.Unavailable(f"{name} unavailable: {exc.details()}",
                                  reason=f"{name.upper()}_UNAVAILABLE")
    return errors.relayed(exc)


class ErrorMapping(grpc.aio.UnaryUnaryClientInterceptor):
    """Raises :func:`platform_error` for a failed unary call, so no call site maps errors.

    Streams are left as gRPC ends them: their readers (change feeds, the pinned-facts
    watch) take a deadline for the end of a subscription, not for an outage."""

    def __init__(self, name: str) -> None:
        self._name = name

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        try:  # an inner interceptor that awaits the call raises from the continuation
            call = await continuation(client_call_details, request)
            return await call
        except grpc.aio.AioRpcError as exc:
            raise platform_error(self._name, exc) from exc


class ServiceClient:
    """The base of each service's typed client: its channel (balanced, retried, with
    deadlines, see :func:`channel`) and the mapping of its errors (:class:`ErrorMapping`)."""

    def __init__(self, name: str, target: str, *, timeout: float = DEFAULT_TIMEOUT_SECONDS,
                 internal_token: Secret | None = None, interceptors: Sequence = (),
                 health_service: str | None = None) -> None:
        self.name = name
        self._target = target
        self._timeout = timeout
        self._internal_token = internal_token
        self._interceptors = [ErrorMapping(name), *interceptors]
        self.channel = self.open(health_service)

    def open(self, health_service: str | None = None) -> grpc.aio.Channel:
        """Another channel to the same target with the same options (the journal's
        client keeps one per shard, each checking its own health name)."""
        return channel(self._target, default_timeout=self._timeout,
                       internal_token=self._internal_token, interceptors=self._interceptors,
                       health_service=health_service)

    async def close(self) -> None:
        await self.channel.close()
