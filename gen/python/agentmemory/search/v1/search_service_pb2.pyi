import datetime

from agentmemory.common.v1 import message_pb2 as _message_pb2
from agentmemory.common.v1 import principal_pb2 as _principal_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SearchMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEARCH_MODE_UNSPECIFIED: _ClassVar[SearchMode]
    SEARCH_MODE_KEYWORD: _ClassVar[SearchMode]
    SEARCH_MODE_HYBRID: _ClassVar[SearchMode]

class Scope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCOPE_UNSPECIFIED: _ClassVar[Scope]
    SCOPE_CURRENT_THREAD: _ClassVar[Scope]
    SCOPE_ALL_THREADS: _ClassVar[Scope]
SEARCH_MODE_UNSPECIFIED: SearchMode
SEARCH_MODE_KEYWORD: SearchMode
SEARCH_MODE_HYBRID: SearchMode
SCOPE_UNSPECIFIED: Scope
SCOPE_CURRENT_THREAD: Scope
SCOPE_ALL_THREADS: Scope

class SearchMessagesRequest(_message.Message):
    __slots__ = ("principal", "surface", "query", "scope", "thread_id", "limit", "summarize", "mode", "rerank")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SURFACE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    surface: _principal_pb2.Surface
    query: str
    scope: Scope
    thread_id: str
    limit: int
    summarize: bool
    mode: SearchMode
    rerank: bool
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., surface: _Optional[_Union[_principal_pb2.Surface, str]] = ..., query: _Optional[str] = ..., scope: _Optional[_Union[Scope, str]] = ..., thread_id: _Optional[str] = ..., limit: _Optional[int] = ..., summarize: _Optional[bool] = ..., mode: _Optional[_Union[SearchMode, str]] = ..., rerank: _Optional[bool] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ("thread_id", "message_id", "offset", "role", "snippet", "created_at", "score")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    message_id: str
    offset: int
    role: _message_pb2.Role
    snippet: str
    created_at: _timestamp_pb2.Timestamp
    score: float
    def __init__(self, thread_id: _Optional[str] = ..., message_id: _Optional[str] = ..., offset: _Optional[int] = ..., role: _Optional[_Union[_message_pb2.Role, str]] = ..., snippet: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., score: _Optional[float] = ...) -> None: ...

class ThreadMatchSummary(_message.Message):
    __slots__ = ("thread_id", "summary", "generator")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    GENERATOR_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    summary: str
    generator: str
    def __init__(self, thread_id: _Optional[str] = ..., summary: _Optional[str] = ..., generator: _Optional[str] = ...) -> None: ...

class SearchMessagesResponse(_message.Message):
    __slots__ = ("hits", "summaries", "fallback", "reranked")
    HITS_FIELD_NUMBER: _ClassVar[int]
    SUMMARIES_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    RERANKED_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    summaries: _containers.RepeatedCompositeFieldContainer[ThreadMatchSummary]
    fallback: bool
    reranked: bool
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ..., summaries: _Optional[_Iterable[_Union[ThreadMatchSummary, _Mapping]]] = ..., fallback: _Optional[bool] = ..., reranked: _Optional[bool] = ...) -> None: ...

class ViewToolCallRequest(_message.Message):
    __slots__ = ("principal", "surface", "tool_call_id", "thread_id", "offset", "length")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SURFACE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    surface: _principal_pb2.Surface
    tool_call_id: str
    thread_id: str
    offset: int
    length: int
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., surface: _Optional[_Union[_principal_pb2.Surface, str]] = ..., tool_call_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ...) -> None: ...

class ViewToolCallResponse(_message.Message):
    __slots__ = ("data", "total_size", "next_offset", "has_more")
    DATA_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    NEXT_OFFSET_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    total_size: int
    next_offset: int
    has_more: bool
    def __init__(self, data: _Optional[bytes] = ..., total_size: _Optional[int] = ..., next_offset: _Optional[int] = ..., has_more: _Optional[bool] = ...) -> None: ...

class DescribeProjectionRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ShardProjection(_message.Message):
    __slots__ = ("shard", "projected_sequence", "journal_sequence", "lag", "embedded_sequence", "embedding_lag")
    SHARD_FIELD_NUMBER: _ClassVar[int]
    PROJECTED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    JOURNAL_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    LAG_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_LAG_FIELD_NUMBER: _ClassVar[int]
    shard: int
    projected_sequence: int
    journal_sequence: int
    lag: int
    embedded_sequence: int
    embedding_lag: int
    def __init__(self, shard: _Optional[int] = ..., projected_sequence: _Optional[int] = ..., journal_sequence: _Optional[int] = ..., lag: _Optional[int] = ..., embedded_sequence: _Optional[int] = ..., embedding_lag: _Optional[int] = ...) -> None: ...

class DescribeProjectionResponse(_message.Message):
    __slots__ = ("shards", "lag", "engine", "projected_messages", "embedder", "embedding_lag", "embedded_messages")
    SHARDS_FIELD_NUMBER: _ClassVar[int]
    LAG_FIELD_NUMBER: _ClassVar[int]
    ENGINE_FIELD_NUMBER: _ClassVar[int]
    PROJECTED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    EMBEDDER_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_LAG_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    shards: _containers.RepeatedCompositeFieldContainer[ShardProjection]
    lag: int
    engine: str
    projected_messages: int
    embedder: str
    embedding_lag: int
    embedded_messages: int
    def __init__(self, shards: _Optional[_Iterable[_Union[ShardProjection, _Mapping]]] = ..., lag: _Optional[int] = ..., engine: _Optional[str] = ..., projected_messages: _Optional[int] = ..., embedder: _Optional[str] = ..., embedding_lag: _Optional[int] = ..., embedded_messages: _Optional[int] = ...) -> None: ...

class PurgeThreadRequest(_message.Message):
    __slots__ = ("principal", "thread_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ...) -> None: ...

class PurgeThreadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
