"""The gateway's library messages mirror agent memory's field for field, so a request
relays by its wire form (services/gateway/library.py)."""

from __future__ import annotations

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb

from services.gateway.library import METHODS


def _fields(descriptor, skip: str) -> list[tuple]:
    return sorted((f.name, f.number, f.type, f.is_repeated, f.message_type and f.message_type.full_name,
                   f.enum_type and f.enum_type.full_name)
                  for f in descriptor.fields if f.name != skip)


def test_every_library_call_mirrors_agent_memory():
    internal = memory_pb.DESCRIPTOR.services_by_name["AgentMemoryService"].methods_by_name
    assert len(METHODS) == 17
    for method in METHODS:
        assert method in internal, method
        gateway_request = getattr(library_pb, f"{method}Request").DESCRIPTOR
        memory_request = getattr(memory_pb, f"{method}Request").DESCRIPTOR
        assert gateway_request.fields_by_name["caller"].number == 1
        assert memory_request.fields_by_name["principal"].number == 1
        assert _fields(gateway_request, "caller") == _fields(memory_request, "principal"), method
        assert _fields(getattr(library_pb, f"{method}Response").DESCRIPTOR, "") == \
            _fields(getattr(memory_pb, f"{method}Response").DESCRIPTOR, ""), method
