"""Builders and small helpers for the memory-library calls of agent memory."""

from __future__ import annotations

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from agentmemory.common.v1 import principal_pb2
from google.protobuf import field_mask_pb2

AGENT_ROLE, ADMIN_ROLE = principal_pb2.KEY_ROLE_AGENT, principal_pb2.KEY_ROLE_ADMIN
OPERATOR_ROLE = principal_pb2.KEY_ROLE_OPERATOR


def who(account="acme", agent="helper", user="", role=AGENT_ROLE, environment="",
        key_id="key1") -> principal_pb2.Principal:
    return principal_pb2.Principal(account_id=account, agent_id=agent, user_id=user, role=role,
                                   environment=environment, key_id=key_id)


def admin(account="acme", agent="helper", user="", **kwargs) -> principal_pb2.Principal:
    return who(account, agent, user, ADMIN_ROLE, key_id="admin-key", **kwargs)


def new(content: str, kind=pb.MEMORY_KIND_PROJECT_FACT, scope=pb.MEMORY_SCOPE_UNSPECIFIED, *,
        key: str = "", importance: float | None = None, tags=None, **fields) -> pb.NewMemory:
    memory = pb.NewMemory(content=content, kind=kind, scope=scope, key=key, tags=tags or {},
                          **fields)
    if importance is not None:
        memory.importance = importance
    return memory


async def add(stub, principal, memory: pb.NewMemory, request_id: str = "") -> pb.Entry:
    reply = await stub.AddMemory(pb.AddMemoryRequest(principal=principal, memory=memory,
                                                     request_id=request_id))
    return reply.memory


async def edit(stub, principal, memory: pb.Entry | str, expected: int | None = None,
               **values) -> pb.Entry:
    memory_id = memory if isinstance(memory, str) else memory.id
    if expected is None:
        expected = memory.version
    request = pb.EditMemoryRequest(principal=principal, memory_id=memory_id,
                                   expected_version=expected, edit=pb.MemoryEdit(**values),
                                   update_mask=field_mask_pb2.FieldMask(paths=list(values)))
    return (await stub.EditMemory(request)).memory


async def listed(stub, principal, **filters) -> list[pb.Entry]:
    found, token = [], ""
    while True:
        reply = await stub.ListMemories(pb.ListMemoriesRequest(
            principal=principal, filter=pb.MemoryFilter(**filters), page_size=200,
            page_token=token))
        found += reply.memories
        token = reply.next_page_token
        if not token:
            return found


async def audit(stub, principal, memory_id: str = "") -> list[pb.AuditRecord]:
    found, token = [], ""
    while True:
        reply = await stub.ListAudit(pb.ListAuditRequest(principal=principal,
                                                         memory_id=memory_id, page_size=200,
                                                         page_token=token))
        found += reply.records
        token = reply.next_page_token
        if not token:
            return found


async def export(stub, principal, page_size: int = 0) -> str:
    pages, token = [], ""
    while True:
        reply = await stub.ExportMemories(pb.ExportMemoriesRequest(
            principal=principal, page_size=page_size, page_token=token))
        pages.append(reply.jsonl)
        token = reply.next_page_token
        if not token:
            return "".join(pages)


def mask(*paths: str) -> field_mask_pb2.FieldMask:
    return field_mask_pb2.FieldMask(paths=list(paths))
