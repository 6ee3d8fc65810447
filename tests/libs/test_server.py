"""The shared server bootstrap: errors, request ids, deadlines, health, tracing."""

from __future__ import annotations

import asyncio
import logging
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from libs import clients, errors
from libs.log import configure_logging
from libs.server import GrpcServer, ServerSettings, ServiceBinding
from libs.tracing import Tracing, TracingSettings

SERVICE = "test.v1.ProbeService"
logger = logging.getLogger("tests.probe")
#: Four bytes each in UTF-8, twelve once percent-encoded in grpc-message.
WIDE = "\U0001f600" * 5000


class _Everything(errors.DomainError):
    """An error with far more to say than a status can carry."""

    code = grpc.StatusCode.INVALID_ARGUMENT

    def field_violations(self) -> list[tuple[str, str]]:
        return [(f"items[{index}].{WIDE}", WIDE) for index in range(50)]


def _probe_binding(downstream: list[str]) -> ServiceBinding:
    async def fail_domain(request: bytes, context) -> bytes:
        raise errors.ResourceExhausted("too many widgets", reason="CAPACITY_EXCEEDED",
                                       metadata={"limit": "3"})

    async def fail_field(request: bytes, context) -> bytes:
        raise errors.InvalidArgument("widget.name", "required")

    async def crash(request: bytes, context) -> bytes:
        raise RuntimeError("secret internal detail")

    async def fail_huge(request: bytes, context) -> bytes:
        raise _Everything(f"bad items: {WIDE}", reason="TOO_MUCH",
                          metadata={f"k{index}": WIDE for index in range(50)})

    async def sleep(request: bytes, context) -> bytes:
        await asyncio.sleep(float(request.decode() or "5"))
        return b"slept"

    async def log_line(request: bytes, context) -> bytes:
        logger.warning("handling %s", request.decode())
        return b"ok"

    async def relay(request: bytes, context) -> bytes:
        # Calls another service with a generous default timeout: the caller's
        # shorter deadline must win.
        async with clients.channel(downstream[0], default_timeout=30) as channel:
            call = channel.unary_unary(f"/{SERVICE}/Sleep")
            return await call(b"10")

    handlers = {
        name: grpc.unary_unary_rpc_method_handler(fn)
        for name, fn in {"FailDomain": fail_domain, "FailField": fail_field, "Crash": crash,
                         "FailHuge": fail_huge, "Sleep": sleep, "Log": log_line,
                         "Relay": relay}.items()
    }
    return ServiceBinding(
        SERVICE,
        lambda server: server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(SERVICE, handlers),)
        ),
    )


@pytest.fixture
async def probe():
    downstream: list[str] = []
    server = GrpcServer(ServerSettings(port=0, shutdown_grace_seconds=1), [_probe_binding(downstream)])
    port = await server.start()
    address = f"127.0.0.1:{port}"
    downstream.append(address)
    yield address, server
    await server.stop()


def _call(channel, method: str):
    return channel.unary_unary(f"/{SERVICE}/{method}")


async def test_a_relayed_capacity_refusal_stays_resource_exhausted(probe):
    """Only gRPC's own RESOURCE_EXHAUSTED (here a reply over the channel's size limit)
    means the service cannot answer; a capacity limit it reports is relayed as it is."""
    address, _ = probe
    mapped = [clients.ErrorMapping("probe")]
    async with clients.channel(address, interceptors=mapped) as channel:
        with pytest.raises(errors.DomainError) as refused:
            await _call(channel, "FailDomain")(b"")
        assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refused.value.reason == "CAPACITY_EXCEEDED"
    async with clients.channel(address, max_message_bytes=2, interceptors=mapped) as small:
        with pytest.raises(errors.Unavailable) as unreachable:
            await _call(small, "Log")(b"a request")
        assert unreachable.value.reason == "PROBE_UNAVAILABLE"


async def test_domain_errors_become_rich_statuses(probe):
    address, _ = probe
    async with clients.channel(address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _call(channel, "FailDomain")(b"")
        details = errors.error_details(caught.value)
        assert details.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert (details.reason, details.metadata) == ("CAPACITY_EXCEEDED", {"limit": "3"})

        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _call(channel, "FailField")(b"")
        details = errors.error_details(caught.value)
        assert details.code == grpc.StatusCode.INVALID_ARGUMENT
        assert details.field_violations == {"widget.name": "required"}


async def test_an_error_of_any_size_reaches_the_client_as_itself(probe):
    """gRPC drops a status whose trailers pass 8 KiB (RESOURCE_EXHAUSTED "Stream
    removed"): whatever a handler puts in an error, what is sent is bounded."""
    address, _ = probe
    async with clients.channel(address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _call(channel, "FailHuge")(b"")
        details = errors.error_details(caught.value)
        assert (details.code, details.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "TOO_MUCH")
        assert details.message.startswith("bad items: \U0001f600") and \
            details.message.endswith("...")
        assert len(details.message.encode()) <= errors.MAX_MESSAGE_BYTES
        assert next(iter(details.field_violations)).startswith("items[0].\U0001f600")
        assert details.metadata and len(details.metadata) < 50
    async with clients.channel(address, interceptors=[clients.ErrorMapping("probe")]) as mapped:
        with pytest.raises(errors.DomainError) as relayed:  # and so is what a relay sends on
            await _call(mapped, "FailHuge")(b"")
        assert (relayed.value.code, relayed.value.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT, "TOO_MUCH")


async def test_unexpected_failure_is_internal_without_details(probe):
    address, _ = probe
    async with clients.channel(address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _call(channel, "Crash")(b"", metadata=(("x-request-id", "req-crash"),))
    details = errors.error_details(caught.value)
    assert details.code == grpc.StatusCode.INTERNAL
    assert "secret internal detail" not in details.message
    assert "req-crash" in details.message and details.metadata["request_id"] == "req-crash"


async def test_log_lines_carry_the_request_id(probe, capsys):
    address, _ = probe
    configure_logging("INFO")
    try:
        async with clients.channel(address) as channel:
            await _call(channel, "Log")(b"order-7", metadata=(("x-request-id", "req-42"),))
    finally:
        logging.getLogger().handlers.clear()
    assert "[req-42] handling order-7" in capsys.readouterr().err


async def test_client_calls_always_have_a_deadline(probe):
    address, _ = probe
    async with clients.channel(address, default_timeout=0.3) as channel:
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _call(channel, "Sleep")(b"5")
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started < 2


async def test_outgoing_calls_inherit_the_callers_deadline(probe):
    address, _ = probe
    async with clients.channel(address, default_timeout=30) as channel:
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _call(channel, "Relay")(b"", timeout=0.5)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started < 3  # not the relay's own 30 s, nor the sleeper's 10 s


async def test_health_turns_not_serving_on_request_and_on_stop(probe):
    address, server = probe
    async with clients.channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ("", SERVICE):
            reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        await server.set_serving(False)
        reply = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE))
        assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING


async def test_tracing_exports_a_span_per_call(capsys):
    tracing = Tracing(TracingSettings(exporter="console"), "probe")
    server = GrpcServer(ServerSettings(port=0), [_probe_binding([])], tracing=tracing)
    port = await server.start()
    try:
        interceptors = tracing.client_interceptors()
        async with clients.channel(f"127.0.0.1:{port}", interceptors=interceptors) as channel:
            await _call(channel, "Log")(b"traced")
    finally:
        await server.stop()
        tracing.close()
    out = capsys.readouterr().out
    assert f"/{SERVICE}/Log" in out and '"service.name": "agentmemory-probe"' in out


def test_tracing_is_off_by_default():
    tracing = Tracing(TracingSettings(), "probe")
    assert not tracing.enabled
    assert tracing.server_interceptors() == [] and tracing.client_interceptors() == []


async def test_internal_secret_is_required_when_configured():
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from libs.settings import Secret

    server = GrpcServer(ServerSettings(port=0), [_probe_binding([])],
                        internal_token=Secret("s3cret"))
    port = await server.start()
    address = f"127.0.0.1:{port}"
    try:
        async with clients.channel(address) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await _call(channel, "Log")(b"no secret")
            details = errors.error_details(caught.value)
            assert details.code == grpc.StatusCode.UNAUTHENTICATED
            assert details.reason == "INTERNAL_CALLER_REQUIRED"
            health = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest())  # probes need no secret
            assert health.status == health_pb2.HealthCheckResponse.SERVING
        async with clients.channel(address, internal_token=Secret("wrong")) as channel:
            with pytest.raises(grpc.aio.AioRpcError):
                await _call(channel, "Log")(b"wrong secret")
        async with clients.channel(address, internal_token=Secret("s3cret")) as channel:
            assert await _call(channel, "Log")(b"with the secret") == b"ok"
    finally:
        await server.stop()


async def test_trace_context_crosses_service_calls(capsys):
    import json as jsonlib
    import re

    tracing = Tracing(TracingSettings(exporter="console"), "probe")
    downstream: list[str] = []

    async def relay(request: bytes, context) -> bytes:
        async with clients.channel(downstream[0],
                                   interceptors=tracing.client_interceptors()) as channel:
            return await channel.unary_unary(f"/{SERVICE}/Log")(b"inner")

    inner = GrpcServer(ServerSettings(port=0), [_probe_binding([])], tracing=tracing)
    outer_binding = ServiceBinding("test.v1.RelayService", lambda server: server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(
            "test.v1.RelayService", {"Relay": grpc.unary_unary_rpc_method_handler(relay)}),)))
    outer = GrpcServer(ServerSettings(port=0), [outer_binding], tracing=tracing)
    downstream.append(f"127.0.0.1:{await inner.start()}")
    outer_port = await outer.start()
    try:
        async with clients.channel(f"127.0.0.1:{outer_port}") as channel:
            assert await channel.unary_unary("/test.v1.RelayService/Relay")(b"") == b"ok"
    finally:
        await outer.stop()
        await inner.stop()
        tracing.close()
    spans = [jsonlib.loads(block) for block in re.findall(r"^\{.*?^\}", capsys.readouterr().out,
                                                         re.M | re.S)]
    by_name = {span["name"]: span for span in spans}
    server_side = by_name[f"/{SERVICE}/Log"]
    relay_side = by_name["/test.v1.RelayService/Relay"]
    assert server_side["context"]["trace_id"] == relay_side["context"]["trace_id"]


async def test_a_port_in_use_is_refused_not_shared():
    """Two servers on one port would split its connections between them."""
    first = GrpcServer(ServerSettings(port=0), [_probe_binding([])])
    port = await first.start()
    second = GrpcServer(ServerSettings(port=port), [_probe_binding([])])
    try:
        with pytest.raises(RuntimeError, match="Failed to bind"):
            await second.start()
    finally:
        await second.stop()
        await first.stop()
