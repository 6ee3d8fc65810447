import datetime

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as _agent_memory_service_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as _gateway_service_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListMemoriesRequest(_message.Message):
    __slots__ = ("caller", "filter", "page_size", "page_token")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    filter: _agent_memory_service_pb2.MemoryFilter
    page_size: int
    page_token: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., filter: _Optional[_Union[_agent_memory_service_pb2.MemoryFilter, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMemoriesResponse(_message.Message):
    __slots__ = ("memories", "next_page_token")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[_agent_memory_service_pb2.Entry]
    next_page_token: str
    def __init__(self, memories: _Optional[_Iterable[_Union[_agent_memory_service_pb2.Entry, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetMemoryRequest(_message.Message):
    __slots__ = ("caller", "memory_id", "as_of")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    memory_id: str
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., memory_id: _Optional[str] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetMemoryResponse(_message.Message):
    __slots__ = ("memory", "versions")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    memory: _agent_memory_service_pb2.Entry
    versions: _containers.RepeatedCompositeFieldContainer[_agent_memory_service_pb2.MemoryVersion]
    def __init__(self, memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ..., versions: _Optional[_Iterable[_Union[_agent_memory_service_pb2.MemoryVersion, _Mapping]]] = ...) -> None: ...

class AddMemoryRequest(_message.Message):
    __slots__ = ("caller", "memory", "request_id")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    memory: _agent_memory_service_pb2.NewMemory
    request_id: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., memory: _Optional[_Union[_agent_memory_service_pb2.NewMemory, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class AddMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: _agent_memory_service_pb2.Entry
    def __init__(self, memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ...) -> None: ...

class EditMemoryRequest(_message.Message):
    __slots__ = ("caller", "memory_id", "expected_version", "edit", "update_mask")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    EDIT_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    memory_id: str
    expected_version: int
    edit: _agent_memory_service_pb2.MemoryEdit
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., memory_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., edit: _Optional[_Union[_agent_memory_service_pb2.MemoryEdit, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class EditMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: _agent_memory_service_pb2.Entry
    def __init__(self, memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ...) -> None: ...

class DeleteMemoryRequest(_message.Message):
    __slots__ = ("caller", "memory_id", "expected_version")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    memory_id: str
    expected_version: int
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., memory_id: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class DeleteMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: _agent_memory_service_pb2.Entry
    def __init__(self, memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ...) -> None: ...

class RestoreMemoryRequest(_message.Message):
    __slots__ = ("caller", "memory_id", "expected_version")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    memory_id: str
    expected_version: int
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., memory_id: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class RestoreMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: _agent_memory_service_pb2.Entry
    def __init__(self, memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ...) -> None: ...

class RollbackMemoryRequest(_message.Message):
    __slots__ = ("caller", "memory_id", "version", "expected_version")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    memory_id: str
    version: int
    expected_version: int
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., memory_id: _Optional[str] = ..., version: _Optional[int] = ..., expected_version: _Optional[int] = ...) -> None: ...

class RollbackMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: _agent_memory_service_pb2.Entry
    def __init__(self, memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ...) -> None: ...

class SupersedeMemoryRequest(_message.Message):
    __slots__ = ("caller", "memory_id", "superseded_by", "expected_version")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    memory_id: str
    superseded_by: str
    expected_version: int
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., memory_id: _Optional[str] = ..., superseded_by: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class SupersedeMemoryResponse(_message.Message):
    __slots__ = ("memory", "replacement")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    REPLACEMENT_FIELD_NUMBER: _ClassVar[int]
    memory: _agent_memory_service_pb2.Entry
    replacement: _agent_memory_service_pb2.Entry
    def __init__(self, memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ..., replacement: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ...) -> None: ...

class ListAuditRequest(_message.Message):
    __slots__ = ("caller", "memory_id", "page_size", "page_token")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    memory_id: str
    page_size: int
    page_token: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., memory_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAuditResponse(_message.Message):
    __slots__ = ("records", "next_page_token")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[_agent_memory_service_pb2.AuditRecord]
    next_page_token: str
    def __init__(self, records: _Optional[_Iterable[_Union[_agent_memory_service_pb2.AuditRecord, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ExportMemoriesRequest(_message.Message):
    __slots__ = ("caller", "page_size", "page_token")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    page_size: int
    page_token: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ExportMemoriesResponse(_message.Message):
    __slots__ = ("jsonl", "count", "next_page_token")
    JSONL_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    jsonl: str
    count: int
    next_page_token: str
    def __init__(self, jsonl: _Optional[str] = ..., count: _Optional[int] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ImportMemoriesRequest(_message.Message):
    __slots__ = ("caller", "jsonl")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    JSONL_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    jsonl: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., jsonl: _Optional[str] = ...) -> None: ...

class ImportMemoriesResponse(_message.Message):
    __slots__ = ("created", "unchanged", "conflicts")
    CREATED_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    CONFLICTS_FIELD_NUMBER: _ClassVar[int]
    created: int
    unchanged: int
    conflicts: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, created: _Optional[int] = ..., unchanged: _Optional[int] = ..., conflicts: _Optional[_Iterable[str]] = ...) -> None: ...

class ExplainMemoryRequest(_message.Message):
    __slots__ = ("caller", "memory_id")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    memory_id: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., memory_id: _Optional[str] = ...) -> None: ...

class ExplainMemoryResponse(_message.Message):
    __slots__ = ("memory", "versions", "audit", "supersedes")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    AUDIT_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDES_FIELD_NUMBER: _ClassVar[int]
    memory: _agent_memory_service_pb2.Entry
    versions: _containers.RepeatedCompositeFieldContainer[_agent_memory_service_pb2.MemoryVersion]
    audit: _containers.RepeatedCompositeFieldContainer[_agent_memory_service_pb2.AuditRecord]
    supersedes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ..., versions: _Optional[_Iterable[_Union[_agent_memory_service_pb2.MemoryVersion, _Mapping]]] = ..., audit: _Optional[_Iterable[_Union[_agent_memory_service_pb2.AuditRecord, _Mapping]]] = ..., supersedes: _Optional[_Iterable[str]] = ...) -> None: ...

class SummarizeMemoriesRequest(_message.Message):
    __slots__ = ("caller", "agent_ids")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., agent_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class SummarizeMemoriesResponse(_message.Message):
    __slots__ = ("counts",)
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    counts: _containers.RepeatedCompositeFieldContainer[_agent_memory_service_pb2.MemoryCount]
    def __init__(self, counts: _Optional[_Iterable[_Union[_agent_memory_service_pb2.MemoryCount, _Mapping]]] = ...) -> None: ...

class GetAccountSettingsRequest(_message.Message):
    __slots__ = ("caller",)
    CALLER_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ...) -> None: ...

class GetAccountSettingsResponse(_message.Message):
    __slots__ = ("settings", "usage")
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    settings: _agent_memory_service_pb2.AccountSettings
    usage: _agent_memory_service_pb2.AccountUsage
    def __init__(self, settings: _Optional[_Union[_agent_memory_service_pb2.AccountSettings, _Mapping]] = ..., usage: _Optional[_Union[_agent_memory_service_pb2.AccountUsage, _Mapping]] = ...) -> None: ...

class UpdateAccountSettingsRequest(_message.Message):
    __slots__ = ("caller", "settings", "update_mask")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    settings: _agent_memory_service_pb2.AccountSettings
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., settings: _Optional[_Union[_agent_memory_service_pb2.AccountSettings, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateAccountSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: _agent_memory_service_pb2.AccountSettings
    def __init__(self, settings: _Optional[_Union[_agent_memory_service_pb2.AccountSettings, _Mapping]] = ...) -> None: ...

class GetAgentSettingsRequest(_message.Message):
    __slots__ = ("caller",)
    CALLER_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ...) -> None: ...

class GetAgentSettingsResponse(_message.Message):
    __slots__ = ("settings", "account_memory_enabled")
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_MEMORY_ENABLED_FIELD_NUMBER: _ClassVar[int]
    settings: _agent_memory_service_pb2.AgentSettings
    account_memory_enabled: bool
    def __init__(self, settings: _Optional[_Union[_agent_memory_service_pb2.AgentSettings, _Mapping]] = ..., account_memory_enabled: _Optional[bool] = ...) -> None: ...

class UpdateAgentSettingsRequest(_message.Message):
    __slots__ = ("caller", "settings", "update_mask")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    settings: _agent_memory_service_pb2.AgentSettings
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., settings: _Optional[_Union[_agent_memory_service_pb2.AgentSettings, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateAgentSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: _agent_memory_service_pb2.AgentSettings
    def __init__(self, settings: _Optional[_Union[_agent_memory_service_pb2.AgentSettings, _Mapping]] = ...) -> None: ...
