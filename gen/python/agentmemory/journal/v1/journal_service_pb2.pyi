from agentmemory.common.v1 import message_pb2 as _message_pb2
from agentmemory.common.v1 import principal_pb2 as _principal_pb2
from agentmemory.common.v1 import run_pb2 as _run_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FeedContent(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FEED_CONTENT_UNSPECIFIED: _ClassVar[FeedContent]
    FEED_CONTENT_MESSAGES_AND_RUNS: _ClassVar[FeedContent]
    FEED_CONTENT_RUNS: _ClassVar[FeedContent]
FEED_CONTENT_UNSPECIFIED: FeedContent
FEED_CONTENT_MESSAGES_AND_RUNS: FeedContent
FEED_CONTENT_RUNS: FeedContent

class AppendRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "messages")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ...) -> None: ...

class AppendResult(_message.Message):
    __slots__ = ("message_id", "offset", "deduplicated")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    offset: int
    deduplicated: bool
    def __init__(self, message_id: _Optional[str] = ..., offset: _Optional[int] = ..., deduplicated: _Optional[bool] = ...) -> None: ...

class AppendResponse(_message.Message):
    __slots__ = ("results", "last_offset")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    LAST_OFFSET_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[AppendResult]
    last_offset: int
    def __init__(self, results: _Optional[_Iterable[_Union[AppendResult, _Mapping]]] = ..., last_offset: _Optional[int] = ...) -> None: ...

class ReadRecentRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "limit", "include_open_run")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_OPEN_RUN_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    limit: int
    include_open_run: bool
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., limit: _Optional[int] = ..., include_open_run: _Optional[bool] = ...) -> None: ...

class ReadRecentResponse(_message.Message):
    __slots__ = ("messages", "open_run_id")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    OPEN_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    open_run_id: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., open_run_id: _Optional[str] = ...) -> None: ...

class ReadRangeRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "from_offset", "page_size", "page_token")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_OFFSET_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    from_offset: int
    page_size: int
    page_token: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., from_offset: _Optional[int] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ReadRangeResponse(_message.Message):
    __slots__ = ("messages", "next_page_token")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    next_page_token: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetToolCallRequest(_message.Message):
    __slots__ = ("principal", "tool_call_id", "thread_id", "offset", "length")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    tool_call_id: str
    thread_id: str
    offset: int
    length: int
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., tool_call_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ...) -> None: ...

class GetToolCallResponse(_message.Message):
    __slots__ = ("data", "total_size", "next_offset", "has_more", "thread_id", "message_id", "message_offset", "name", "status")
    DATA_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_OFFSET_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    total_size: int
    next_offset: int
    has_more: bool
    thread_id: str
    message_id: str
    message_offset: int
    name: str
    status: _message_pb2.ToolCallStatus
    def __init__(self, data: _Optional[bytes] = ..., total_size: _Optional[int] = ..., next_offset: _Optional[int] = ..., has_more: _Optional[bool] = ..., thread_id: _Optional[str] = ..., message_id: _Optional[str] = ..., message_offset: _Optional[int] = ..., name: _Optional[str] = ..., status: _Optional[_Union[_message_pb2.ToolCallStatus, str]] = ...) -> None: ...

class GetThreadStatsRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "after_offset")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_OFFSET_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    after_offset: int
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., after_offset: _Optional[int] = ...) -> None: ...

class GetThreadStatsResponse(_message.Message):
    __slots__ = ("message_count", "last_offset", "token_count", "messages_after", "tokens_after", "owner")
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_OFFSET_FIELD_NUMBER: _ClassVar[int]
    TOKEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_AFTER_FIELD_NUMBER: _ClassVar[int]
    TOKENS_AFTER_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    message_count: int
    last_offset: int
    token_count: int
    messages_after: int
    tokens_after: int
    owner: _principal_pb2.Principal
    def __init__(self, message_count: _Optional[int] = ..., last_offset: _Optional[int] = ..., token_count: _Optional[int] = ..., messages_after: _Optional[int] = ..., tokens_after: _Optional[int] = ..., owner: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ...) -> None: ...

class SubscribeRequest(_message.Message):
    __slots__ = ("shard", "after_sequence", "content")
    SHARD_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    shard: int
    after_sequence: int
    content: FeedContent
    def __init__(self, shard: _Optional[int] = ..., after_sequence: _Optional[int] = ..., content: _Optional[_Union[FeedContent, str]] = ...) -> None: ...

class SubscribeResponse(_message.Message):
    __slots__ = ("sequence", "shard", "principal", "thread_id", "message", "run_boundary")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    SHARD_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    RUN_BOUNDARY_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    shard: int
    principal: _principal_pb2.Principal
    thread_id: str
    message: _message_pb2.Message
    run_boundary: _run_pb2.RunBoundary
    def __init__(self, sequence: _Optional[int] = ..., shard: _Optional[int] = ..., principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., message: _Optional[_Union[_message_pb2.Message, _Mapping]] = ..., run_boundary: _Optional[_Union[_run_pb2.RunBoundary, _Mapping]] = ...) -> None: ...

class DescribeShardsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ShardInfo(_message.Message):
    __slots__ = ("shard", "durable_sequence", "writable")
    SHARD_FIELD_NUMBER: _ClassVar[int]
    DURABLE_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    WRITABLE_FIELD_NUMBER: _ClassVar[int]
    shard: int
    durable_sequence: int
    writable: bool
    def __init__(self, shard: _Optional[int] = ..., durable_sequence: _Optional[int] = ..., writable: _Optional[bool] = ...) -> None: ...

class DescribeShardsResponse(_message.Message):
    __slots__ = ("shard_count", "shards")
    SHARD_COUNT_FIELD_NUMBER: _ClassVar[int]
    SHARDS_FIELD_NUMBER: _ClassVar[int]
    shard_count: int
    shards: _containers.RepeatedCompositeFieldContainer[ShardInfo]
    def __init__(self, shard_count: _Optional[int] = ..., shards: _Optional[_Iterable[_Union[ShardInfo, _Mapping]]] = ...) -> None: ...

class PurgeThreadRequest(_message.Message):
    __slots__ = ("principal", "thread_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ...) -> None: ...

class PurgeThreadResponse(_message.Message):
    __slots__ = ("deleted_messages",)
    DELETED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    deleted_messages: int
    def __init__(self, deleted_messages: _Optional[int] = ...) -> None: ...

class StartRunRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "run_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    run_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ...) -> None: ...

class StartRunResponse(_message.Message):
    __slots__ = ("run", "deduplicated")
    RUN_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    run: _run_pb2.Run
    deduplicated: bool
    def __init__(self, run: _Optional[_Union[_run_pb2.Run, _Mapping]] = ..., deduplicated: _Optional[bool] = ...) -> None: ...

class FinishRunRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "run_id", "outcome")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    run_id: str
    outcome: _run_pb2.RunOutcome
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ..., outcome: _Optional[_Union[_run_pb2.RunOutcome, str]] = ...) -> None: ...

class FinishRunResponse(_message.Message):
    __slots__ = ("run", "deduplicated")
    RUN_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    run: _run_pb2.Run
    deduplicated: bool
    def __init__(self, run: _Optional[_Union[_run_pb2.Run, _Mapping]] = ..., deduplicated: _Optional[bool] = ...) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "run_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    run_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ...) -> None: ...

class GetRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _run_pb2.Run
    def __init__(self, run: _Optional[_Union[_run_pb2.Run, _Mapping]] = ...) -> None: ...
