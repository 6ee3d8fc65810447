"""Client channels over several replicas: balancing, retries, health-based routing, the secret."""

from __future__ import annotations

import asyncio
import contextlib

import grpc
import pytest

from libs import clients
from libs.clients import ServiceClient
from libs.errors import DomainError, InvalidArgument, Unavailable, error_details
from libs.server import GrpcServer, ServerSettings, ServiceBinding
from libs.settings import Secret

CALL = "/test.Replica/Call"
STREAM = "/test.Replica/Stream"
SLOW = "/test.Replica/Slow"


class Replica:
    """A real GrpcServer answering with its name, or with the error it is told to raise."""

    def __init__(self, name: str, token: str = "") -> None:
        self.name = name
        self.calls = 0
        self.error: Exception | None = None
        handler = grpc.method_handlers_generic_handler("test.Replica", {
            "Call": grpc.unary_unary_rpc_method_handler(self._call),
            "Stream": grpc.unary_stream_rpc_method_handler(self._stream),
            "Slow": grpc.unary_unary_rpc_method_handler(self._slow),
        })
        self.server = GrpcServer(ServerSettings(port=0, shutdown_grace_seconds=0),
                                 [ServiceBinding("test.Replica",
                                                 lambda s: s.add_generic_rpc_handlers((handler,)))],
                                 internal_token=Secret(token))

    async def _call(self, request: bytes, context) -> bytes:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return self.name.encode()

    async def _slow(self, request: bytes, context) -> bytes:
        await asyncio.sleep(5)
        return self.name.encode()

    async def _stream(self, request: bytes, context):
        yield self.name.encode()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.port}"


@pytest.fixture
async def replicas():
    started = [Replica("a"), Replica("b")]
    for replica in started:
        await replica.server.start()
    yield started
    for replica in started:
        with contextlib.suppress(Exception):
            await replica.server.stop()


async def _call(channel: grpc.aio.Channel) -> str:
    return (await channel.unary_unary(CALL)(b"", timeout=5)).decode()


def test_an_address_setting_may_name_several_replicas():
    assert clients.grpc_target("10.0.0.1:5") == "10.0.0.1:5"
    assert clients.grpc_target("127.0.0.1:5, localhost:6") == "ipv4:127.0.0.1:5,127.0.0.1:6"
    assert clients.grpc_target("[::1]:5,[::2]:6") == "ipv6:[::1]:5,[::2]:6"
    assert clients.grpc_target("dns:///journal:50052") == "dns:///journal:50052"
    for bad in ("a:1,b:2", "127.0.0.1:5,[::1]:6", "127.0.0.1:5,127.0.0.2", ""):
        with pytest.raises(ValueError):
            clients.grpc_target(bad)


async def test_calls_are_balanced_over_replicas_and_skip_one_that_stopped(replicas):
    a, b = replicas
    async with clients.channel(f"{a.address},{b.address}") as channel:
        # Round robin picks among the replicas connected: the first calls may all go to
        # the one that connected first. With both connected, they alternate.
        answered: set[str] = set()
        for _ in range(200):
            answered.add(await _call(channel))
            if answered == {"a", "b"}:
                break
        assert answered == {"a", "b"}
        await a.server.stop()
        assert [await _call(channel) for _ in range(10)] == ["b"] * 10


async def test_a_replica_that_is_the_wrong_one_is_retried_elsewhere_but_a_dependency_outage_is_not(
        replicas):
    a, b = replicas
    async with clients.channel(f"{a.address},{b.address}") as channel:
        a.error = Unavailable("standby", reason="NOT_HERE", elsewhere=True)
        assert [await _call(channel) for _ in range(6)] == ["b"] * 6
        b.error = a.error = Unavailable("my database is down", reason="DATABASE_UNAVAILABLE")
        a.calls = b.calls = 0
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _call(channel)
        assert error_details(caught.value).reason == "DATABASE_UNAVAILABLE"
        assert a.calls + b.calls == 1  # the server's pushback stopped the retry policy


async def test_health_checks_send_calls_only_to_the_replica_serving_a_name(replicas):
    a, b = replicas
    await a.server.set_component_health("writer-of-x", False)
    await b.server.set_component_health("writer-of-x", True)
    async with clients.channel(f"{a.address},{b.address}", health_service="writer-of-x") as channel:
        assert [await _call(channel) for _ in range(6)] == ["b"] * 6
        await b.server.set_component_health("writer-of-x", False)
        await a.server.set_component_health("writer-of-x", True)
        for _ in range(50):  # the health watch delivers the change
            if await _call(channel) == "a":
                break
        assert [await _call(channel) for _ in range(6)] == ["a"] * 6


async def test_streaming_calls_carry_the_internal_secret():
    replica = Replica("a", token="s3cret")
    await replica.server.start()
    try:
        async with clients.channel(replica.address, internal_token=Secret("s3cret")) as channel:
            assert [m async for m in channel.unary_stream(STREAM)(b"")] == [b"a"]
            assert await _call(channel) == "a"
    finally:
        await replica.server.stop()


class _Awaiting(grpc.aio.UnaryUnaryClientInterceptor):
    """An inner interceptor that awaits the call (as the gateway's ForgetOnWrite does), so
    an error comes out of the continuation."""

    async def intercept_unary_unary(self, continuation, client_call_details, request):
        return await (await continuation(client_call_details, request))


async def test_a_service_client_maps_a_unary_call_s_errors_and_leaves_streams_to_their_readers(
        replicas):
    """One interceptor maps every unary call (no call site maps errors):
    the service's own error relayed, a deadline or an outage UNAVAILABLE naming the service
    (the gRPC error kept as the cause); a stream's error stays gRPC's."""
    a, _ = replicas
    client = ServiceClient("replica", a.address, timeout=0.5, interceptors=[_Awaiting()])
    try:
        a.error = InvalidArgument("name", "required")
        with pytest.raises(DomainError) as refused:
            await _call(client.channel)
        assert (refused.value.code, refused.value.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT, "INVALID_FIELD")
        assert refused.value.field_violations() == [("name", "required")]

        a.error = None
        with pytest.raises(Unavailable) as late:
            await client.channel.unary_unary(SLOW)(b"")
        assert late.value.reason == "REPLICA_UNAVAILABLE"
        assert late.value.__cause__.code() == grpc.StatusCode.DEADLINE_EXCEEDED

        await a.server.stop()
        with pytest.raises(Unavailable) as down:
            await _call(client.channel)
        assert down.value.reason == "REPLICA_UNAVAILABLE"
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            [m async for m in client.channel.unary_stream(STREAM)(b"")]
        assert ended.value.code() in (grpc.StatusCode.UNAVAILABLE,  # retried until the deadline
                                      grpc.StatusCode.DEADLINE_EXCEEDED)
    finally:
        await client.close()
