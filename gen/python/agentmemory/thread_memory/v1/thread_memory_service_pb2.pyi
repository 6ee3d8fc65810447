import datetime

from agentmemory.common.v1 import message_pb2 as _message_pb2
from agentmemory.common.v1 import principal_pb2 as _principal_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Summary(_message.Message):
    __slots__ = ("version", "timestamp", "last_message_offset", "last_message_id", "content", "token_count", "message_count", "generator")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    LAST_MESSAGE_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LAST_MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    GENERATOR_FIELD_NUMBER: _ClassVar[int]
    version: int
    timestamp: _timestamp_pb2.Timestamp
    last_message_offset: int
    last_message_id: str
    content: str
    token_count: int
    message_count: int
    generator: str
    def __init__(self, version: _Optional[int] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_message_offset: _Optional[int] = ..., last_message_id: _Optional[str] = ..., content: _Optional[str] = ..., token_count: _Optional[int] = ..., message_count: _Optional[int] = ..., generator: _Optional[str] = ...) -> None: ...

class GetThreadContextRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "max_working_memory_messages", "thread_metadata", "include_open_run")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MAX_WORKING_MEMORY_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    THREAD_METADATA_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_OPEN_RUN_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    max_working_memory_messages: int
    thread_metadata: _struct_pb2.Struct
    include_open_run: bool
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., max_working_memory_messages: _Optional[int] = ..., thread_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., include_open_run: _Optional[bool] = ...) -> None: ...

class GetThreadContextResponse(_message.Message):
    __slots__ = ("messages", "summary", "open_run_id")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    OPEN_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    summary: Summary
    open_run_id: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., summary: _Optional[_Union[Summary, _Mapping]] = ..., open_run_id: _Optional[str] = ...) -> None: ...

class GetSummaryRequest(_message.Message):
    __slots__ = ("principal", "thread_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ...) -> None: ...

class GetSummaryResponse(_message.Message):
    __slots__ = ("summary",)
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    summary: Summary
    def __init__(self, summary: _Optional[_Union[Summary, _Mapping]] = ...) -> None: ...

class SummarizeRequest(_message.Message):
    __slots__ = ("principal", "thread_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ...) -> None: ...

class SummarizeResponse(_message.Message):
    __slots__ = ("summary", "flushed_facts", "summarized")
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    FLUSHED_FACTS_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZED_FIELD_NUMBER: _ClassVar[int]
    summary: Summary
    flushed_facts: int
    summarized: bool
    def __init__(self, summary: _Optional[_Union[Summary, _Mapping]] = ..., flushed_facts: _Optional[int] = ..., summarized: _Optional[bool] = ...) -> None: ...

class PurgeThreadRequest(_message.Message):
    __slots__ = ("principal", "thread_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ...) -> None: ...

class PurgeThreadResponse(_message.Message):
    __slots__ = ("summary_deleted", "redis_keys_deleted")
    SUMMARY_DELETED_FIELD_NUMBER: _ClassVar[int]
    REDIS_KEYS_DELETED_FIELD_NUMBER: _ClassVar[int]
    summary_deleted: bool
    redis_keys_deleted: int
    def __init__(self, summary_deleted: _Optional[bool] = ..., redis_keys_deleted: _Optional[int] = ...) -> None: ...
