"""Property: nothing a client sends makes any RPC of any service answer INTERNAL or
UNKNOWN, or fail with a status the platform did not make (gRPC's own "Stream
removed" when an error's trailers pass 8 KiB), or answer an error message longer
than the bound on what errors show; and every service is still SERVING afterwards.

The RPCs are discovered from the generated descriptors (every service under
``agentmemory.*``), so an RPC added later is fuzzed without touching this file.
Requests go to the real services, started as processes the way ``make run``
starts them; gateway calls carry a valid API key most of the time so they get
past authentication, and requests naming a memory name a seeded one half the time.
Each RPC gets ``FUZZ_EXAMPLES`` requests of mixed hostile values (default 40), then,
for each of its fields and each extreme value that field can take, two plausible
requests with that one value (strategies.extreme_cases).
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from collections import Counter

import agentmemory
import grpc
import pytest
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from agentmemory.gateway.v1 import memory_library_service_pb2_grpc as library_grpc
from google.protobuf import field_mask_pb2, struct_pb2
from google.protobuf.descriptor import MethodDescriptor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from libs import errors
from libs.healthcheck import is_serving
from services.gateway import tools
from tests.fuzz.strategies import (
    Known,
    extreme_cases,
    extreme_request_bytes,
    request_bytes,
    tool_arguments,
)

ACCOUNT = "fuzz"  # the account the strategies favour (GOOD_IDS)

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
#: Per field and extreme value (the first example Hypothesis draws is the simplest).
EXTREME_EXAMPLES = 2
FORBIDDEN = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
#: The one failure the platform does not answer itself: the client's own timeout.
UNMAPPED = {grpc.StatusCode.DEADLINE_EXCEEDED}
TIMEOUT_SECONDS = 15.0
STREAM_SECONDS = 2.0


def _methods() -> list[MethodDescriptor]:
    found = []
    for module in pkgutil.walk_packages(agentmemory.__path__, "agentmemory."):
        if module.name.endswith("_pb2"):
            for service in importlib.import_module(module.name).DESCRIPTOR.services_by_name \
                    .values():
                found += list(service.methods)
    # Deleting RPCs last: the data the others work on lives until then.
    return sorted(found, key=lambda m: (m.name.startswith(("Purge", "Delete")), m.full_name))


METHODS = _methods()
#: (service, status code name) -> requests, and (method, code, reason) -> requests;
#: printed at the end.
SEEN: Counter = Counter()
REASONS: Counter = Counter()


def _service(method: MethodDescriptor) -> str:
    return method.containing_service.full_name.split(".")[1]  # agentmemory.<service>.v1.X


@pytest.fixture(scope="module")
def channels(platform):
    opened = {name: grpc.insecure_channel(address, options=[
        ("grpc.max_receive_message_length", 64 * 1024 * 1024)])
        for name, address in platform.addresses.items()}
    yield opened
    for channel in opened.values():
        channel.close()


@pytest.fixture(scope="module")
def known(platform, channels) -> Known:
    # An account of its own: fuzzed settings calls must not change what other tests see.
    platform.bind_memory(ACCOUNT, "concierge")
    return _seed(channels["gateway"], platform.key(ACCOUNT))


def _seed(channel: grpc.Channel, key: str) -> Known:
    """Data under the ids the strategies favour, so that plausible requests find
    threads, messages, tool calls and entries to work on; and a memory every agent of
    the account sees, at version 2, whose id requests are given."""
    gateway = pb_grpc.GatewayServiceStub(channel)
    auth = (("authorization", f"Bearer {key}"),)
    caller = pb.Caller(agent_id="concierge", user_id="ana", surface=principal_pb2.SURFACE_AGENT)
    gateway.AppendMessages(pb.AppendMessagesRequest(caller=caller, thread_id="t1", messages=[
        message_pb2.Message(id="m1", role=message_pb2.ROLE_USER, content="my name is Ana"),
        message_pb2.Message(id="m2", role=message_pb2.ROLE_ASSISTANT, content="Checking",
                            tool_calls=[message_pb2.ToolCall(id="call-1", name="weather",
                                                             arguments='{"city": "Lisbon"}')]),
        message_pb2.Message(id="m3", role=message_pb2.ROLE_TOOL, tool_call_id="call-1",
                            content="Sunny")]), metadata=auth, timeout=30)
    arguments = struct_pb2.Struct()
    arguments.update({"key": "name", "content": "The user is Ana Lopes.",
                      "category": "user_profile", "importance": 0.9})
    gateway.CallTool(pb.CallToolRequest(caller=caller, thread_id="t1", tool_name="memory_store",
                                        arguments=arguments), metadata=auth, timeout=30)
    library = library_grpc.MemoryLibraryServiceStub(channel)
    added = library.AddMemory(library_pb.AddMemoryRequest(caller=caller, memory=memory_pb.NewMemory(
        kind=memory_pb.MEMORY_KIND_DECISION, scope=memory_pb.MEMORY_SCOPE_ACCOUNT,
        key="deploys", content="We deploy on Tuesdays.")), metadata=auth, timeout=30).memory
    library.EditMemory(library_pb.EditMemoryRequest(
        caller=caller, memory_id=added.id, expected_version=1,
        edit=memory_pb.MemoryEdit(content="We deploy on Thursdays."),
        update_mask=field_mask_pb2.FieldMask(paths=["content"])), metadata=auth, timeout=30)
    return (("caller.agent_id", "concierge"), ("caller.user_id", "ana"),
            ("principal.account_id", ACCOUNT), ("principal.agent_id", "concierge"),
            ("principal.user_id", "ana"), ("principal.role", principal_pb2.KEY_ROLE_ADMIN),
            ("thread_id", "t1"), ("memory_id", added.id), ("superseded_by", added.id))


def _call(channel: grpc.Channel, method: MethodDescriptor, data: bytes,
          metadata) -> tuple[grpc.StatusCode, str]:
    """The code and reason of the answer; AssertionError for one the platform must
    never give."""
    path = f"/{method.containing_service.full_name}/{method.name}"
    try:
        if method.server_streaming:
            replies = channel.unary_stream(path)(data, timeout=STREAM_SECONDS, metadata=metadata)
            for count, _ in enumerate(replies):
                if count >= 5:
                    replies.cancel()
                    break
        else:
            channel.unary_unary(path)(data, timeout=TIMEOUT_SECONDS, metadata=metadata)
    except grpc.RpcError as error:
        code, details = error.code(), errors.error_details(error)
        if code in FORBIDDEN or (code not in UNMAPPED and not details.reason):
            raise AssertionError(f"{path} -> {code.name}: {details.message[:300]}") from None
        if len(details.message.encode()) > errors.MAX_MESSAGE_BYTES:
            raise AssertionError(f"{path} -> a message of {len(details.message)} characters") \
                from None
        return code, details.reason
    return grpc.StatusCode.OK, ""


def _tool_calls() -> st.SearchStrategy:
    """CallTool requests from the seeded caller, in its thread or none, with arguments
    drawn from each tool's published schema: calls that reach the tools themselves."""
    caller = pb.Caller(agent_id="concierge", user_id="ana", surface=principal_pb2.SURFACE_AGENT)

    def request(tool: tools.Tool, thread: str, request_id: str, arguments: dict) -> bytes:
        data = struct_pb2.Struct()
        data.update(arguments)
        return pb.CallToolRequest(caller=caller, thread_id=thread, tool_name=tool.name,
                                  request_id=request_id, arguments=data).SerializeToString()

    return st.sampled_from(tools.TOOLS).flatmap(lambda tool: st.builds(
        request, st.just(tool), st.sampled_from(["t1", ""]),
        st.sampled_from(["", "rid-1", "rid-2"]), tool_arguments(tool.parameters)))


#: Per-RPC requests besides the generic ones, where the generic ones rarely get far.
PLAUSIBLE = {"agentmemory.gateway.v1.GatewayService.CallTool": _tool_calls}


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.full_name.removeprefix("agentmemory."))
def test_no_request_reaches_internal_or_unknown(platform, channels, known, method):
    service = _service(method)
    key = platform.key(ACCOUNT)
    auth = st.sampled_from([(("authorization", f"Bearer {key}"),)] * 8 + [
        (), (("authorization", "Bearer am_bad_key"),)])

    def fuzz(requests: st.SearchStrategy, examples: int) -> None:
        @settings(max_examples=examples, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(data=requests, metadata=auth)
        def property(data: bytes, metadata) -> None:
            code, reason = _call(channels[service], method, data,
                                 metadata if service == "gateway" else ())
            SEEN[(service, code.name)] += 1
            REASONS[(method.name, code.name, reason)] += 1

        property()

    hostile = request_bytes(method.input_type, known)
    if method.full_name in PLAUSIBLE:
        hostile = st.one_of(hostile, PLAUSIBLE[method.full_name]())
    fuzz(hostile, EXAMPLES)
    # In the same test: an RPC's requests all run before the deleting RPCs'.
    for path, value in extreme_cases(method.input_type):
        fuzz(extreme_request_bytes(method.input_type, known, path, value), EXTREME_EXAMPLES)


def test_every_service_is_still_serving(platform):
    per_service = Counter()
    for (service, _), count in SEEN.items():
        per_service[service] += count
    print("\nfuzz requests per service:", dict(sorted(per_service.items())))
    for service in sorted(per_service):
        codes = {code: n for (s, code), n in sorted(SEEN.items()) if s == service}
        print(f"  {service}: {codes}")
    print("most frequent answers (method, code, reason):",
          [f"{m} {c} {r}: {n}" for (m, c, r), n in REASONS.most_common(80)])
    # Every service has RPCs among the fuzz cases (not SEEN, which is empty when this
    # test runs alone: with -k, --lf or in another order).
    assert {_service(m) for m in METHODS} == set(platform.addresses)
    for name, address in platform.addresses.items():
        assert is_serving(address, timeout=5.0), f"{name} is not SERVING after the fuzz"
