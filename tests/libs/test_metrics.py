"""Prometheus metrics: every call counted by method and code, service gauges read on the
service's loop, the endpoint closed with the server."""

from __future__ import annotations

import asyncio
import re
import socket
import urllib.error
import urllib.request

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from libs import clients, errors
from libs.server import GrpcServer, ServerSettings, ServiceBinding
from testkit.ports import free_port

SERVICE = "test.v1.MeteredService"


def _binding() -> ServiceBinding:
    async def ok(request: bytes, context) -> bytes:
        return b"ok"

    async def refuse(request: bytes, context) -> bytes:
        raise errors.InvalidArgument("name", "required")

    async def crash(request: bytes, context) -> bytes:
        raise RuntimeError("boom")

    async def abort(request: bytes, context) -> bytes:
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not now")

    handlers = {name: grpc.unary_unary_rpc_method_handler(fn) for name, fn in {
        "Ok": ok, "Refuse": refuse, "Crash": crash, "Abort": abort}.items()}
    return ServiceBinding(SERVICE, lambda server: server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE, handlers),)))


async def scrape(port: int) -> str:
    def get() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            return reply.read().decode()
    return await asyncio.to_thread(get)


def sample(text: str, name: str, **labels: str) -> float:
    """The value of the series ``name`` whose labels include ``labels`` (0 if absent)."""
    for line in text.splitlines():
        match = re.fullmatch(rf"{name}(\{{.*\}})? (\S+)", line)
        if match and all(f'{k}="{v}"' in (match.group(1) or "") for k, v in labels.items()):
            return float(match.group(2))
    return 0.0


async def test_calls_are_counted_by_method_and_code_and_timed():
    port = free_port()
    server = GrpcServer(ServerSettings(port=0, metrics_port=port), [_binding()])
    address = f"127.0.0.1:{await server.start()}"
    try:
        assert server.metrics.port == port
        async with clients.channel(address) as channel:
            for _ in range(3):
                await channel.unary_unary(f"/{SERVICE}/Ok")(b"")
            for method in ("Refuse", "Crash", "Abort"):
                with pytest.raises(grpc.aio.AioRpcError):
                    await channel.unary_unary(f"/{SERVICE}/{method}")(b"")
            await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        text = await scrape(port)
        requests = "rpc_server_requests_total"
        assert sample(text, requests, rpc_service=SERVICE, rpc_method="Ok", grpc_code="OK") == 3
        assert sample(text, requests, rpc_method="Refuse", grpc_code="INVALID_ARGUMENT") == 1
        assert sample(text, requests, rpc_method="Crash", grpc_code="INTERNAL") == 1
        assert sample(text, requests, rpc_method="Abort", grpc_code="FAILED_PRECONDITION") == 1
        assert sample(text, requests, rpc_service="grpc.health.v1.Health", rpc_method="Check",
                      grpc_code="OK") == 1
        assert sample(text, "rpc_server_duration_seconds_count", rpc_method="Ok",
                      grpc_code="OK") == 3
        assert sample(text, "rpc_server_duration_seconds_bucket", rpc_method="Ok",
                      grpc_code="OK", le="+Inf") == 3
        assert f'service_name="{SERVICE}"' in text  # target_info names the service
    finally:
        await server.stop()
    with pytest.raises(urllib.error.URLError):  # the endpoint closed with the server
        await scrape(port)


async def test_service_gauges_and_histograms_are_read_on_the_loop():
    port = free_port()
    server = GrpcServer(ServerSettings(port=0, metrics_port=port), [_binding()])
    queue: list[int] = [1, 2]
    loop_threads: list[bool] = []

    def depth() -> int:
        loop_threads.append(asyncio.get_running_loop() is not None)
        return len(queue)

    async def outbox() -> int:
        await asyncio.sleep(0)
        return 7

    server.metrics.gauge("demo.queue.depth", depth, unit="{job}", description="Jobs queued.")
    server.metrics.gauge("demo.outbox.size", outbox, description="Rows waiting.")
    record = server.metrics.histogram("demo.batch.size", description="Appends per batch.",
                                      buckets=(1, 10, 100))
    await server.start()
    try:
        record(3)
        record(30)
        text = await scrape(port)
        assert sample(text, "demo_queue_depth") == 2 and loop_threads == [True]
        assert sample(text, "demo_outbox_size") == 7
        assert sample(text, "demo_batch_size_bucket", le="10") == 1
        assert sample(text, "demo_batch_size_count") == 2
        queue.append(3)
        assert sample(await scrape(port), "demo_queue_depth") == 3
    finally:
        await server.stop()


async def test_a_taken_metrics_port_does_not_stop_the_service():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = GrpcServer(ServerSettings(port=0, metrics_port=port), [_binding()])
        address = f"127.0.0.1:{await server.start()}"
        try:
            assert server.metrics.port == 0
            async with clients.channel(address) as channel:
                assert await channel.unary_unary(f"/{SERVICE}/Ok")(b"") == b"ok"
        finally:
            await server.stop()


async def test_metrics_port_zero_serves_no_endpoint():
    server = GrpcServer(ServerSettings(port=0), [_binding()])
    await server.start()
    try:
        assert server.metrics.port == 0
    finally:
        await server.stop()
