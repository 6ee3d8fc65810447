import datetime

from agentmemory_client._proto.agentmemory.agent_memory.v1 import retrieval_pb2 as _retrieval_pb2
from agentmemory_client._proto.agentmemory.common.v1 import run_pb2 as _run_pb2
from agentmemory_client._proto.agentmemory.gateway.v1 import gateway_service_pb2 as _gateway_service_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RetrieveContextRequest(_message.Message):
    __slots__ = ("caller", "run_id", "semantic_query", "agent_id", "user_id", "top_n", "tags", "min_score", "token_budget", "mode", "rerank", "include_superseded", "as_of", "as_of_axis", "temporal_after", "temporal_before", "temporal_anchor", "raw", "explain", "overrides", "thread_id", "expand_sessions", "expand_session_count", "expand_session_window")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CALLER_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_QUERY_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    TOP_N_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    AS_OF_AXIS_FIELD_NUMBER: _ClassVar[int]
    TEMPORAL_AFTER_FIELD_NUMBER: _ClassVar[int]
    TEMPORAL_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TEMPORAL_ANCHOR_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    EXPAND_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    EXPAND_SESSION_COUNT_FIELD_NUMBER: _ClassVar[int]
    EXPAND_SESSION_WINDOW_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    run_id: str
    semantic_query: str
    agent_id: str
    user_id: str
    top_n: int
    tags: _containers.ScalarMap[str, str]
    min_score: float
    token_budget: int
    mode: _retrieval_pb2.RetrievalMode
    rerank: bool
    include_superseded: bool
    as_of: _timestamp_pb2.Timestamp
    as_of_axis: _retrieval_pb2.AsOfAxis
    temporal_after: _timestamp_pb2.Timestamp
    temporal_before: _timestamp_pb2.Timestamp
    temporal_anchor: _timestamp_pb2.Timestamp
    raw: bool
    explain: bool
    overrides: _retrieval_pb2.RetrievalOverrides
    thread_id: str
    expand_sessions: bool
    expand_session_count: int
    expand_session_window: int
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., run_id: _Optional[str] = ..., semantic_query: _Optional[str] = ..., agent_id: _Optional[str] = ..., user_id: _Optional[str] = ..., top_n: _Optional[int] = ..., tags: _Optional[_Mapping[str, str]] = ..., min_score: _Optional[float] = ..., token_budget: _Optional[int] = ..., mode: _Optional[_Union[_retrieval_pb2.RetrievalMode, str]] = ..., rerank: _Optional[bool] = ..., include_superseded: _Optional[bool] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., as_of_axis: _Optional[_Union[_retrieval_pb2.AsOfAxis, str]] = ..., temporal_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., temporal_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., temporal_anchor: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., raw: _Optional[bool] = ..., explain: _Optional[bool] = ..., overrides: _Optional[_Union[_retrieval_pb2.RetrievalOverrides, _Mapping]] = ..., thread_id: _Optional[str] = ..., expand_sessions: _Optional[bool] = ..., expand_session_count: _Optional[int] = ..., expand_session_window: _Optional[int] = ...) -> None: ...

class SessionExpansion(_message.Message):
    __slots__ = ("memory_id", "thread_id", "first_offset", "last_offset", "messages", "tokens")
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    FIRST_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LAST_OFFSET_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    memory_id: str
    thread_id: str
    first_offset: int
    last_offset: int
    messages: _containers.RepeatedCompositeFieldContainer[_gateway_service_pb2.ContextMessage]
    tokens: int
    def __init__(self, memory_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., first_offset: _Optional[int] = ..., last_offset: _Optional[int] = ..., messages: _Optional[_Iterable[_Union[_gateway_service_pb2.ContextMessage, _Mapping]]] = ..., tokens: _Optional[int] = ...) -> None: ...

class RetrieveContextResponse(_message.Message):
    __slots__ = ("receipt_id", "blocks", "user_profile", "platform_entries", "tenant_floors", "tenant_entries", "procedures", "workspace_entries", "relevant_episodes", "session_summary", "session_entries", "superseded_hidden_count", "compilation", "diagnostics", "rendered", "results", "expansions")
    RECEIPT_ID_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    USER_PROFILE_FIELD_NUMBER: _ClassVar[int]
    PLATFORM_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    TENANT_FLOORS_FIELD_NUMBER: _ClassVar[int]
    TENANT_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    PROCEDURES_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    RELEVANT_EPISODES_FIELD_NUMBER: _ClassVar[int]
    SESSION_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ENTRIES_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_HIDDEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    COMPILATION_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSTICS_FIELD_NUMBER: _ClassVar[int]
    RENDERED_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    EXPANSIONS_FIELD_NUMBER: _ClassVar[int]
    receipt_id: str
    blocks: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.ContextMemory]
    user_profile: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.ContextMemory]
    platform_entries: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.ContextMemory]
    tenant_floors: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.ContextMemory]
    tenant_entries: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.ContextMemory]
    procedures: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.ContextProcedure]
    workspace_entries: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.ContextMemory]
    relevant_episodes: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.ContextEpisode]
    session_summary: _retrieval_pb2.SessionSummary
    session_entries: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.ContextMemory]
    superseded_hidden_count: int
    compilation: _retrieval_pb2.Compilation
    diagnostics: _retrieval_pb2.RetrievalDiagnostics
    rendered: str
    results: _containers.RepeatedCompositeFieldContainer[_retrieval_pb2.ContextMemory]
    expansions: _containers.RepeatedCompositeFieldContainer[SessionExpansion]
    def __init__(self, receipt_id: _Optional[str] = ..., blocks: _Optional[_Iterable[_Union[_retrieval_pb2.ContextMemory, _Mapping]]] = ..., user_profile: _Optional[_Iterable[_Union[_retrieval_pb2.ContextMemory, _Mapping]]] = ..., platform_entries: _Optional[_Iterable[_Union[_retrieval_pb2.ContextMemory, _Mapping]]] = ..., tenant_floors: _Optional[_Iterable[_Union[_retrieval_pb2.ContextMemory, _Mapping]]] = ..., tenant_entries: _Optional[_Iterable[_Union[_retrieval_pb2.ContextMemory, _Mapping]]] = ..., procedures: _Optional[_Iterable[_Union[_retrieval_pb2.ContextProcedure, _Mapping]]] = ..., workspace_entries: _Optional[_Iterable[_Union[_retrieval_pb2.ContextMemory, _Mapping]]] = ..., relevant_episodes: _Optional[_Iterable[_Union[_retrieval_pb2.ContextEpisode, _Mapping]]] = ..., session_summary: _Optional[_Union[_retrieval_pb2.SessionSummary, _Mapping]] = ..., session_entries: _Optional[_Iterable[_Union[_retrieval_pb2.ContextMemory, _Mapping]]] = ..., superseded_hidden_count: _Optional[int] = ..., compilation: _Optional[_Union[_retrieval_pb2.Compilation, _Mapping]] = ..., diagnostics: _Optional[_Union[_retrieval_pb2.RetrievalDiagnostics, _Mapping]] = ..., rendered: _Optional[str] = ..., results: _Optional[_Iterable[_Union[_retrieval_pb2.ContextMemory, _Mapping]]] = ..., expansions: _Optional[_Iterable[_Union[SessionExpansion, _Mapping]]] = ...) -> None: ...

class RecordFeedbackRequest(_message.Message):
    __slots__ = ("caller", "receipt_id", "request_id", "helpful", "memory_ids")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    HELPFUL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    receipt_id: str
    request_id: str
    helpful: bool
    memory_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., receipt_id: _Optional[str] = ..., request_id: _Optional[str] = ..., helpful: _Optional[bool] = ..., memory_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class RecordFeedbackResponse(_message.Message):
    __slots__ = ("credited_memory_ids", "replayed")
    CREDITED_MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    credited_memory_ids: _containers.RepeatedScalarFieldContainer[str]
    replayed: bool
    def __init__(self, credited_memory_ids: _Optional[_Iterable[str]] = ..., replayed: _Optional[bool] = ...) -> None: ...

class RecordOutcomeRequest(_message.Message):
    __slots__ = ("caller", "receipt_id", "request_id", "outcome")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    receipt_id: str
    request_id: str
    outcome: _run_pb2.RunOutcome
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., receipt_id: _Optional[str] = ..., request_id: _Optional[str] = ..., outcome: _Optional[_Union[_run_pb2.RunOutcome, str]] = ...) -> None: ...

class RecordOutcomeResponse(_message.Message):
    __slots__ = ("credited_memory_ids", "replayed")
    CREDITED_MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    credited_memory_ids: _containers.RepeatedScalarFieldContainer[str]
    replayed: bool
    def __init__(self, credited_memory_ids: _Optional[_Iterable[str]] = ..., replayed: _Optional[bool] = ...) -> None: ...

class GetReceiptRequest(_message.Message):
    __slots__ = ("caller", "receipt_id")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_ID_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    receipt_id: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., receipt_id: _Optional[str] = ...) -> None: ...

class GetReceiptResponse(_message.Message):
    __slots__ = ("receipt",)
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    receipt: _retrieval_pb2.Receipt
    def __init__(self, receipt: _Optional[_Union[_retrieval_pb2.Receipt, _Mapping]] = ...) -> None: ...
