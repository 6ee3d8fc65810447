from agentmemory.common.v1 import message_pb2 as _message_pb2
from agentmemory.common.v1 import principal_pb2 as _principal_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RelevantMemoriesStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RELEVANT_MEMORIES_STATUS_UNSPECIFIED: _ClassVar[RelevantMemoriesStatus]
    RELEVANT_MEMORIES_STATUS_OFF: _ClassVar[RelevantMemoriesStatus]
    RELEVANT_MEMORIES_STATUS_DELIVERED: _ClassVar[RelevantMemoriesStatus]
    RELEVANT_MEMORIES_STATUS_NONE: _ClassVar[RelevantMemoriesStatus]
    RELEVANT_MEMORIES_STATUS_TIMED_OUT: _ClassVar[RelevantMemoriesStatus]
    RELEVANT_MEMORIES_STATUS_QUOTA_EXCEEDED: _ClassVar[RelevantMemoriesStatus]
    RELEVANT_MEMORIES_STATUS_FAILED: _ClassVar[RelevantMemoriesStatus]
RELEVANT_MEMORIES_STATUS_UNSPECIFIED: RelevantMemoriesStatus
RELEVANT_MEMORIES_STATUS_OFF: RelevantMemoriesStatus
RELEVANT_MEMORIES_STATUS_DELIVERED: RelevantMemoriesStatus
RELEVANT_MEMORIES_STATUS_NONE: RelevantMemoriesStatus
RELEVANT_MEMORIES_STATUS_TIMED_OUT: RelevantMemoriesStatus
RELEVANT_MEMORIES_STATUS_QUOTA_EXCEEDED: RelevantMemoriesStatus
RELEVANT_MEMORIES_STATUS_FAILED: RelevantMemoriesStatus

class Caller(_message.Message):
    __slots__ = ("agent_id", "user_id", "environment", "surface", "capabilities")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    SURFACE_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    user_id: str
    environment: str
    surface: _principal_pb2.Surface
    capabilities: _containers.RepeatedScalarFieldContainer[_principal_pb2.Capability]
    def __init__(self, agent_id: _Optional[str] = ..., user_id: _Optional[str] = ..., environment: _Optional[str] = ..., surface: _Optional[_Union[_principal_pb2.Surface, str]] = ..., capabilities: _Optional[_Iterable[_Union[_principal_pb2.Capability, str]]] = ...) -> None: ...

class AppendMessagesRequest(_message.Message):
    __slots__ = ("caller", "thread_id", "messages", "thread_metadata")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    THREAD_METADATA_FIELD_NUMBER: _ClassVar[int]
    caller: Caller
    thread_id: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    thread_metadata: _struct_pb2.Struct
    def __init__(self, caller: _Optional[_Union[Caller, _Mapping]] = ..., thread_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., thread_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class AppendMessagesResponse(_message.Message):
    __slots__ = ("offsets",)
    OFFSETS_FIELD_NUMBER: _ClassVar[int]
    offsets: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, offsets: _Optional[_Iterable[int]] = ...) -> None: ...

class ContextMessage(_message.Message):
    __slots__ = ("role", "content", "tool_calls", "tool_call_id")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    role: _message_pb2.Role
    content: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[_message_pb2.ToolCall]
    tool_call_id: str
    def __init__(self, role: _Optional[_Union[_message_pb2.Role, str]] = ..., content: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[_message_pb2.ToolCall, _Mapping]]] = ..., tool_call_id: _Optional[str] = ...) -> None: ...

class ToolDefinition(_message.Message):
    __slots__ = ("name", "description", "parameters")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    parameters: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., parameters: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class BuildContextRequest(_message.Message):
    __slots__ = ("caller", "thread_id", "thread_metadata", "delegated", "task", "run_id")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_METADATA_FIELD_NUMBER: _ClassVar[int]
    DELEGATED_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    caller: Caller
    thread_id: str
    thread_metadata: _struct_pb2.Struct
    delegated: bool
    task: str
    run_id: str
    def __init__(self, caller: _Optional[_Union[Caller, _Mapping]] = ..., thread_id: _Optional[str] = ..., thread_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., delegated: _Optional[bool] = ..., task: _Optional[str] = ..., run_id: _Optional[str] = ...) -> None: ...

class BuildContextResponse(_message.Message):
    __slots__ = ("messages", "tools", "relevant_memories_status", "relevant_memories_receipt_id")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    RELEVANT_MEMORIES_STATUS_FIELD_NUMBER: _ClassVar[int]
    RELEVANT_MEMORIES_RECEIPT_ID_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[ContextMessage]
    tools: _containers.RepeatedCompositeFieldContainer[ToolDefinition]
    relevant_memories_status: RelevantMemoriesStatus
    relevant_memories_receipt_id: str
    def __init__(self, messages: _Optional[_Iterable[_Union[ContextMessage, _Mapping]]] = ..., tools: _Optional[_Iterable[_Union[ToolDefinition, _Mapping]]] = ..., relevant_memories_status: _Optional[_Union[RelevantMemoriesStatus, str]] = ..., relevant_memories_receipt_id: _Optional[str] = ...) -> None: ...

class ListToolsRequest(_message.Message):
    __slots__ = ("caller",)
    CALLER_FIELD_NUMBER: _ClassVar[int]
    caller: Caller
    def __init__(self, caller: _Optional[_Union[Caller, _Mapping]] = ...) -> None: ...

class ListToolsResponse(_message.Message):
    __slots__ = ("tools", "notice")
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedCompositeFieldContainer[ToolDefinition]
    notice: str
    def __init__(self, tools: _Optional[_Iterable[_Union[ToolDefinition, _Mapping]]] = ..., notice: _Optional[str] = ...) -> None: ...

class CallToolRequest(_message.Message):
    __slots__ = ("caller", "thread_id", "tool_name", "arguments", "request_id")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    caller: Caller
    thread_id: str
    tool_name: str
    arguments: _struct_pb2.Struct
    request_id: str
    def __init__(self, caller: _Optional[_Union[Caller, _Mapping]] = ..., thread_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., arguments: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class CallToolResponse(_message.Message):
    __slots__ = ("result", "is_error")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    result: _struct_pb2.Struct
    is_error: bool
    def __init__(self, result: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., is_error: _Optional[bool] = ...) -> None: ...

class UpdateThreadRequest(_message.Message):
    __slots__ = ("caller", "thread_id", "metadata")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    caller: Caller
    thread_id: str
    metadata: _struct_pb2.Struct
    def __init__(self, caller: _Optional[_Union[Caller, _Mapping]] = ..., thread_id: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class UpdateThreadResponse(_message.Message):
    __slots__ = ("metadata",)
    METADATA_FIELD_NUMBER: _ClassVar[int]
    metadata: _struct_pb2.Struct
    def __init__(self, metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class DeleteThreadRequest(_message.Message):
    __slots__ = ("caller", "thread_id")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    caller: Caller
    thread_id: str
    def __init__(self, caller: _Optional[_Union[Caller, _Mapping]] = ..., thread_id: _Optional[str] = ...) -> None: ...

class DeleteThreadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PurgeThreadRequest(_message.Message):
    __slots__ = ("caller", "thread_id")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    caller: Caller
    thread_id: str
    def __init__(self, caller: _Optional[_Union[Caller, _Mapping]] = ..., thread_id: _Optional[str] = ...) -> None: ...

class PurgeThreadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
