"""Bad requests of every kind are INVALID_ARGUMENT naming the field, on a real server:
bytes that do not parse, strings that are not UTF-8, Structs nested past the parser's
limit, NUL characters, keys past the length limit, NaN and infinities, unknown enum
values."""

from __future__ import annotations

import math

import grpc
import pytest
from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from google.protobuf import struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from libs import clients, errors
from libs.server import GrpcServer, ServerSettings, ServiceBinding
from libs.tracing import Tracing, TracingSettings

SERVICE = pb.DESCRIPTOR.services_by_name["GatewayService"].full_name


class EchoGateway(pb_grpc.GatewayServiceServicer):
    """Answers every parsed request; records what the handler was given."""

    def __init__(self) -> None:
        self.seen: list = []

    async def ListTools(self, request, context):
        self.seen.append(request)
        return pb.ListToolsResponse()

    async def CallTool(self, request, context):
        self.seen.append(request)
        return pb.CallToolResponse()

    async def AppendMessages(self, request, context):
        self.seen.append(request)
        return pb.AppendMessagesResponse()


@pytest.fixture(params=["plain", "traced"])
async def gateway(request):
    servicer = EchoGateway()
    tracing = Tracing(TracingSettings(exporter="console" if request.param == "traced"
                                      else "none"), "probe")
    server = GrpcServer(ServerSettings(port=0), [ServiceBinding(
        SERVICE, lambda s: pb_grpc.add_GatewayServiceServicer_to_server(servicer, s))],
        tracing=tracing)
    port = await server.start()
    async with clients.channel(f"127.0.0.1:{port}") as channel:
        yield channel, servicer
    await server.stop()
    tracing.close()


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _nested_struct(levels: int) -> bytes:
    """A Struct {"a": {"a": ... }} ``levels`` deep, built on the wire (too deep to parse)."""
    struct = b""
    for _ in range(levels):
        value = _field(5, struct)  # Value.struct_value
        struct = _field(1, _field(1, b"a") + _field(2, value))  # Struct.fields entry
    return struct


async def _raw(channel, method: str, data: bytes) -> errors.ErrorDetails:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await channel.unary_unary(f"/{SERVICE}/{method}")(data)
    return errors.error_details(caught.value)


async def test_invalid_utf8_names_the_field(gateway):
    channel, servicer = gateway
    caller = _field(1, b"agent\xff\xfe")  # Caller.agent_id
    error = await _raw(channel, "ListTools", _field(1, caller))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.field_violations == {"caller.agent_id": "not valid UTF-8"}
    assert error.reason == "MALFORMED_REQUEST"
    message = _field(1, b"m1") + _field(3, b"caf\xc3")  # Message.id, Message.content
    request = _field(2, b"t1") + _field(3, message_pb2.Message(id="m0").SerializeToString()) + \
        _field(3, message)
    error = await _raw(channel, "AppendMessages", request)
    assert error.field_violations == {"messages[1].content": "not valid UTF-8"}
    assert servicer.seen == []


async def test_invalid_utf8_inside_a_struct_names_the_argument(gateway):
    channel, _ = gateway
    value = _field(3, b"\xc0\x80")  # Value.string_value, overlong NUL
    arguments = _field(1, _field(1, b"city") + _field(2, value))
    error = await _raw(channel, "CallTool", _field(4, arguments))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.field_violations == {"arguments.city": "not valid UTF-8"}


async def test_a_struct_nested_past_the_limit_is_invalid_argument(gateway):
    channel, servicer = gateway
    error = await _raw(channel, "CallTool", _field(4, _nested_struct(50)))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.field_violations == {"arguments": "nested deeper than 100 levels"}
    # Just under the limit parses and reaches the handler.
    reply = await channel.unary_unary(f"/{SERVICE}/CallTool")(_field(4, _nested_struct(30)))
    assert reply == b"" and len(servicer.seen) == 1


async def test_bytes_that_are_no_message_are_invalid_argument(gateway):
    channel, _ = gateway
    error = await _raw(channel, "ListTools", b"\x0a\x7f\x01")  # a length past the end
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.field_violations == {
        "request": "not a valid agentmemory.gateway.v1.ListToolsRequest message"}


@pytest.mark.parametrize("request_message, field", [
    (pb.AppendMessagesRequest(thread_id="t\x001"), "thread_id"),
    (pb.AppendMessagesRequest(messages=[message_pb2.Message(id="a"), message_pb2.Message(
        id="b", content="x\x00y")]), "messages[1].content"),
    (pb.AppendMessagesRequest(messages=[message_pb2.Message(
        id="a", tool_calls=[message_pb2.ToolCall(id="c", arguments="{\"a\": \"\x00\"}")])]),
     "messages[0].tool_calls[0].arguments"),
    (pb.CallToolRequest(request_id="r\x00"), "request_id"),
    (pb.CallToolRequest(arguments=struct_pb2.Struct(fields={
        "query": struct_pb2.Value(string_value="a\x00")})), "arguments.query"),
    (pb.CallToolRequest(arguments=struct_pb2.Struct(fields={
        "tags": struct_pb2.Value(list_value=struct_pb2.ListValue(values=[
            struct_pb2.Value(string_value="ok"), struct_pb2.Value(string_value="\x00")]))})),
     "arguments.tags[1]"),
    (pb.CallToolRequest(arguments=struct_pb2.Struct(fields={
        "a b": struct_pb2.Value(string_value="\x00")})), 'arguments["a b"]'),
])
async def test_nul_characters_are_refused_naming_the_field(gateway, request_message, field):
    channel, servicer = gateway
    method = type(request_message).__name__.removesuffix("Request")
    error = await _raw(channel, method, request_message.SerializeToString())
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.field_violations == {field: "must not contain NUL (U+0000)"}
    assert servicer.seen == []


async def test_a_nul_in_a_struct_key_is_refused(gateway):
    channel, _ = gateway
    request = pb.CallToolRequest(arguments=struct_pb2.Struct(fields={
        "k\x00": struct_pb2.Value(string_value="v")}))
    error = await _raw(channel, "CallTool", request.SerializeToString())
    assert error.field_violations == {"arguments": "keys must not contain NUL (U+0000)"}


def _struct(values: dict) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(values)
    return struct


@pytest.mark.parametrize("request_message, field", [
    (pb.CallToolRequest(arguments=_struct({"k" * 5000: "v"})), "arguments"),
    (pb.AppendMessagesRequest(messages=[message_pb2.Message(
        id="m1", metadata=_struct({"config": {"\u00e9" * 257: 1}}))]),
     "messages[0].metadata.config"),
])
async def test_a_key_past_the_limit_is_refused_naming_its_map(gateway, request_message, field):
    """Keys are names; a path naming a 5,000-character key would echo it whole."""
    channel, servicer = gateway
    method = type(request_message).__name__.removesuffix("Request")
    error = await _raw(channel, method, request_message.SerializeToString())
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    (named, problem), = error.field_violations.items()
    assert (named, problem.endswith("keys are at most 256")) == (field, True)
    assert servicer.seen == []
    longest = pb.CallToolRequest(arguments=_struct({"k" * 256: "v"}))
    await pb_grpc.GatewayServiceStub(channel).CallTool(longest)
    assert servicer.seen == [longest]


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
async def test_non_finite_numbers_are_refused_naming_the_argument(gateway, number):
    channel, _ = gateway
    request = pb.CallToolRequest(arguments=struct_pb2.Struct(fields={
        "importance": struct_pb2.Value(number_value=number)}))
    error = await _raw(channel, "CallTool", request.SerializeToString())
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.field_violations == {
        "arguments.importance": "must be a finite number (not NaN or infinity)"}


async def test_unknown_enum_values_are_refused(gateway):
    channel, _ = gateway
    request = pb.ListToolsRequest(caller=pb.Caller(
        surface=principal_pb2.SURFACE_AGENT, capabilities=[principal_pb2.CAPABILITY_MEMORY, 42]))
    error = await _raw(channel, "ListTools", request.SerializeToString())
    assert error.field_violations == {"caller.capabilities[1]": "unknown Capability value 42"}
    request = pb.ListToolsRequest(caller=pb.Caller(surface=7))
    error = await _raw(channel, "ListTools", request.SerializeToString())
    assert error.field_violations == {"caller.surface": "unknown Surface value 7"}


@pytest.mark.parametrize("seconds, nanos", [(0, -1), (0, 10**9), (-62135596801, 0),
                                            (253402300800, 0)])
async def test_timestamps_out_of_range_are_refused_naming_the_field(gateway, seconds, nanos):
    channel, servicer = gateway
    message = message_pb2.Message(id="m1", role=message_pb2.ROLE_USER, content="hi")
    message.created_at.seconds, message.created_at.nanos = seconds, nanos
    error = await _raw(channel, "AppendMessages",
                       pb.AppendMessagesRequest(messages=[message]).SerializeToString())
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert list(error.field_violations) == ["messages[0].created_at"]
    assert servicer.seen == []


async def test_good_requests_reach_the_handler_parsed(gateway):
    channel, servicer = gateway
    stub = pb_grpc.GatewayServiceStub(channel)
    arguments = struct_pb2.Struct()
    arguments.update({"query": "caf\u00e9", "limit": 5, "tags": ["a", None, True]})
    await stub.CallTool(pb.CallToolRequest(tool_name="memory_recall", arguments=arguments))
    assert servicer.seen == [pb.CallToolRequest(tool_name="memory_recall", arguments=arguments)]


async def test_health_checks_are_parsed_and_checked_too(gateway):
    channel, _ = gateway
    health = health_pb2_grpc.HealthStub(channel)
    reply = await health.Check(health_pb2.HealthCheckRequest(service=SERVICE))
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await health.Check(health_pb2.HealthCheckRequest(service="x\x00"))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
