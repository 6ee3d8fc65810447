"""The gateway's RetrievalService messages mirror agent memory's field for field (the
relay copies them by their wire form), except the fields each side reserves."""

from __future__ import annotations

import pytest
from agentmemory.agent_memory.v1 import retrieval_pb2 as memory_pb
from agentmemory.gateway.v1 import retrieval_service_pb2 as pb
from google.protobuf import descriptor_pb2

from services.gateway.retrieval import METHODS


def _shape(message) -> descriptor_pb2.DescriptorProto:
    found = descriptor_pb2.DescriptorProto()
    message.DESCRIPTOR.CopyToProto(found)
    return found


def _fields(message, skip=()) -> dict[int, tuple]:
    """Number -> (name, type, label, type name, proto3 optional), as on the wire (a map's
    entry type is named after its message, so only its own name is compared)."""
    def type_name(name: str) -> str:
        return name.rsplit(".", 1)[-1] if name.endswith("Entry") else name

    return {f.number: (f.name, f.type, f.label, type_name(f.type_name), f.proto3_optional)
            for f in _shape(message).field if f.number not in skip}


def _reserved(message) -> set[int]:
    return {n for r in _shape(message).reserved_range for n in range(r.start, r.end)}


@pytest.mark.parametrize("method", METHODS)
def test_requests_mirror_agent_memory_with_caller_for_principal(method):
    gateway, memory = getattr(pb, f"{method}Request"), getattr(memory_pb, f"{method}Request")
    assert _fields(gateway)[1][0] == "caller" and _fields(memory)[1][0] == "principal"
    assert _fields(gateway, {1, *_reserved(memory)}) == _fields(memory, {1, *_reserved(gateway)})


@pytest.mark.parametrize("method", METHODS)
def test_responses_mirror_agent_memory(method):
    gateway, memory = getattr(pb, f"{method}Response"), getattr(memory_pb, f"{method}Response")
    assert _fields(gateway, _reserved(memory)) == _fields(memory)


def test_each_side_reserves_the_others_own_fields():
    assert _reserved(pb.RetrieveContextRequest) == {22}  # thread_summary: the gateway's to set
    assert _reserved(memory_pb.RetrieveContextRequest) == {23, 24, 25}  # session expansion
    assert _reserved(memory_pb.RetrieveContextResponse) == {30}  # expansions
    assert {f.number for f in _shape(pb.RetrieveContextRequest).field} >= {23, 24, 25}
