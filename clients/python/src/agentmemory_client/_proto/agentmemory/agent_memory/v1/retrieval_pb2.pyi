import datetime

from agentmemory_client._proto.agentmemory.agent_memory.v1 import agent_memory_service_pb2 as _agent_memory_service_pb2
from agentmemory_client._proto.agentmemory.common.v1 import principal_pb2 as _principal_pb2
from agentmemory_client._proto.agentmemory.common.v1 import run_pb2 as _run_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RetrievalMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RETRIEVAL_MODE_UNSPECIFIED: _ClassVar[RetrievalMode]
    RETRIEVAL_MODE_DETERMINISTIC: _ClassVar[RetrievalMode]
    RETRIEVAL_MODE_ASSISTED: _ClassVar[RetrievalMode]

class AsOfAxis(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AS_OF_AXIS_UNSPECIFIED: _ClassVar[AsOfAxis]
    AS_OF_AXIS_RECORDED: _ClassVar[AsOfAxis]
    AS_OF_AXIS_VALID: _ClassVar[AsOfAxis]
RETRIEVAL_MODE_UNSPECIFIED: RetrievalMode
RETRIEVAL_MODE_DETERMINISTIC: RetrievalMode
RETRIEVAL_MODE_ASSISTED: RetrievalMode
AS_OF_AXIS_UNSPECIFIED: AsOfAxis
AS_OF_AXIS_RECORDED: AsOfAxis
AS_OF_AXIS_VALID: AsOfAxis

class RetrievalOverrides(_message.Message):
    __slots__ = ("rrf_k", "leg_weights", "factor_weights", "utility_weight", "value_aware", "scoring_version")
    class LegWeightsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class FactorWeightsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    LEG_WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    FACTOR_WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    UTILITY_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    VALUE_AWARE_FIELD_NUMBER: _ClassVar[int]
    SCORING_VERSION_FIELD_NUMBER: _ClassVar[int]
    rrf_k: int
    leg_weights: _containers.ScalarMap[str, float]
    factor_weights: _containers.ScalarMap[str, float]
    utility_weight: float
    value_aware: bool
    scoring_version: str
    def __init__(self, rrf_k: _Optional[int] = ..., leg_weights: _Optional[_Mapping[str, float]] = ..., factor_weights: _Optional[_Mapping[str, float]] = ..., utility_weight: _Optional[float] = ..., value_aware: _Optional[bool] = ..., scoring_version: _Optional[str] = ...) -> None: ...

class RetrieveContextRequest(_message.Message):
    __slots__ = ("principal", "run_id", "semantic_query", "agent_id", "user_id", "top_n", "tags", "min_score", "token_budget", "mode", "rerank", "include_superseded", "as_of", "as_of_axis", "temporal_after", "temporal_before", "temporal_anchor", "raw", "explain", "overrides", "thread_id", "thread_summary")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
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
    THREAD_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    run_id: str
    semantic_query: str
    agent_id: str
    user_id: str
    top_n: int
    tags: _containers.ScalarMap[str, str]
    min_score: float
    token_budget: int
    mode: RetrievalMode
    rerank: bool
    include_superseded: bool
    as_of: _timestamp_pb2.Timestamp
    as_of_axis: AsOfAxis
    temporal_after: _timestamp_pb2.Timestamp
    temporal_before: _timestamp_pb2.Timestamp
    temporal_anchor: _timestamp_pb2.Timestamp
    raw: bool
    explain: bool
    overrides: RetrievalOverrides
    thread_id: str
    thread_summary: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., run_id: _Optional[str] = ..., semantic_query: _Optional[str] = ..., agent_id: _Optional[str] = ..., user_id: _Optional[str] = ..., top_n: _Optional[int] = ..., tags: _Optional[_Mapping[str, str]] = ..., min_score: _Optional[float] = ..., token_budget: _Optional[int] = ..., mode: _Optional[_Union[RetrievalMode, str]] = ..., rerank: _Optional[bool] = ..., include_superseded: _Optional[bool] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., as_of_axis: _Optional[_Union[AsOfAxis, str]] = ..., temporal_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., temporal_before: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., temporal_anchor: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., raw: _Optional[bool] = ..., explain: _Optional[bool] = ..., overrides: _Optional[_Union[RetrievalOverrides, _Mapping]] = ..., thread_id: _Optional[str] = ..., thread_summary: _Optional[str] = ...) -> None: ...

class LegContribution(_message.Message):
    __slots__ = ("leg", "rank", "raw_score", "rrf_contribution")
    LEG_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    RAW_SCORE_FIELD_NUMBER: _ClassVar[int]
    RRF_CONTRIBUTION_FIELD_NUMBER: _ClassVar[int]
    leg: str
    rank: int
    raw_score: float
    rrf_contribution: float
    def __init__(self, leg: _Optional[str] = ..., rank: _Optional[int] = ..., raw_score: _Optional[float] = ..., rrf_contribution: _Optional[float] = ...) -> None: ...

class ScoreFactor(_message.Message):
    __slots__ = ("name", "value", "weight", "contribution")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    CONTRIBUTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: float
    weight: float
    contribution: float
    def __init__(self, name: _Optional[str] = ..., value: _Optional[float] = ..., weight: _Optional[float] = ..., contribution: _Optional[float] = ...) -> None: ...

class RerankerStatus(_message.Message):
    __slots__ = ("status", "score")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    status: str
    score: float
    def __init__(self, status: _Optional[str] = ..., score: _Optional[float] = ...) -> None: ...

class TrustBreakdown(_message.Message):
    __slots__ = ("composite", "confidence", "evidence", "freshness", "utility", "contradiction_risk", "source_authority")
    COMPOSITE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    FRESHNESS_FIELD_NUMBER: _ClassVar[int]
    UTILITY_FIELD_NUMBER: _ClassVar[int]
    CONTRADICTION_RISK_FIELD_NUMBER: _ClassVar[int]
    SOURCE_AUTHORITY_FIELD_NUMBER: _ClassVar[int]
    composite: float
    confidence: float
    evidence: float
    freshness: float
    utility: float
    contradiction_risk: float
    source_authority: float
    def __init__(self, composite: _Optional[float] = ..., confidence: _Optional[float] = ..., evidence: _Optional[float] = ..., freshness: _Optional[float] = ..., utility: _Optional[float] = ..., contradiction_risk: _Optional[float] = ..., source_authority: _Optional[float] = ...) -> None: ...

class RecallExplanation(_message.Message):
    __slots__ = ("legs", "rrf_score", "factors", "floor_applied", "reranker", "final_score", "trust")
    LEGS_FIELD_NUMBER: _ClassVar[int]
    RRF_SCORE_FIELD_NUMBER: _ClassVar[int]
    FACTORS_FIELD_NUMBER: _ClassVar[int]
    FLOOR_APPLIED_FIELD_NUMBER: _ClassVar[int]
    RERANKER_FIELD_NUMBER: _ClassVar[int]
    FINAL_SCORE_FIELD_NUMBER: _ClassVar[int]
    TRUST_FIELD_NUMBER: _ClassVar[int]
    legs: _containers.RepeatedCompositeFieldContainer[LegContribution]
    rrf_score: float
    factors: _containers.RepeatedCompositeFieldContainer[ScoreFactor]
    floor_applied: float
    reranker: RerankerStatus
    final_score: float
    trust: TrustBreakdown
    def __init__(self, legs: _Optional[_Iterable[_Union[LegContribution, _Mapping]]] = ..., rrf_score: _Optional[float] = ..., factors: _Optional[_Iterable[_Union[ScoreFactor, _Mapping]]] = ..., floor_applied: _Optional[float] = ..., reranker: _Optional[_Union[RerankerStatus, _Mapping]] = ..., final_score: _Optional[float] = ..., trust: _Optional[_Union[TrustBreakdown, _Mapping]] = ...) -> None: ...

class ContextMemory(_message.Message):
    __slots__ = ("memory", "trust", "tokens", "score", "superseded", "tool_data", "explanation")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    TRUST_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    TOOL_DATA_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    memory: _agent_memory_service_pb2.Entry
    trust: TrustBreakdown
    tokens: int
    score: float
    superseded: bool
    tool_data: bool
    explanation: RecallExplanation
    def __init__(self, memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ..., trust: _Optional[_Union[TrustBreakdown, _Mapping]] = ..., tokens: _Optional[int] = ..., score: _Optional[float] = ..., superseded: _Optional[bool] = ..., tool_data: _Optional[bool] = ..., explanation: _Optional[_Union[RecallExplanation, _Mapping]] = ...) -> None: ...

class ContextProcedure(_message.Message):
    __slots__ = ("id", "task", "steps", "tokens")
    ID_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    id: str
    task: str
    steps: str
    tokens: int
    def __init__(self, id: _Optional[str] = ..., task: _Optional[str] = ..., steps: _Optional[str] = ..., tokens: _Optional[int] = ...) -> None: ...

class ContextEpisode(_message.Message):
    __slots__ = ("id", "thread_id", "run_id", "outcome", "task", "summary", "finish_time", "tokens")
    ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    FINISH_TIME_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    id: str
    thread_id: str
    run_id: str
    outcome: _run_pb2.RunOutcome
    task: str
    summary: str
    finish_time: _timestamp_pb2.Timestamp
    tokens: int
    def __init__(self, id: _Optional[str] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ..., outcome: _Optional[_Union[_run_pb2.RunOutcome, str]] = ..., task: _Optional[str] = ..., summary: _Optional[str] = ..., finish_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., tokens: _Optional[int] = ...) -> None: ...

class SessionSummary(_message.Message):
    __slots__ = ("text", "source", "tokens")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    text: str
    source: str
    tokens: int
    def __init__(self, text: _Optional[str] = ..., source: _Optional[str] = ..., tokens: _Optional[int] = ...) -> None: ...

class SectionUsage(_message.Message):
    __slots__ = ("section", "included", "dropped", "tokens")
    SECTION_FIELD_NUMBER: _ClassVar[int]
    INCLUDED_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    section: str
    included: int
    dropped: int
    tokens: int
    def __init__(self, section: _Optional[str] = ..., included: _Optional[int] = ..., dropped: _Optional[int] = ..., tokens: _Optional[int] = ...) -> None: ...

class Compilation(_message.Message):
    __slots__ = ("token_budget", "tokens_used", "sections", "reserved_tokens")
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    SECTIONS_FIELD_NUMBER: _ClassVar[int]
    RESERVED_TOKENS_FIELD_NUMBER: _ClassVar[int]
    token_budget: int
    tokens_used: int
    sections: _containers.RepeatedCompositeFieldContainer[SectionUsage]
    reserved_tokens: int
    def __init__(self, token_budget: _Optional[int] = ..., tokens_used: _Optional[int] = ..., sections: _Optional[_Iterable[_Union[SectionUsage, _Mapping]]] = ..., reserved_tokens: _Optional[int] = ...) -> None: ...

class LegDiagnostics(_message.Message):
    __slots__ = ("leg", "candidates", "elapsed_ms", "weight")
    LEG_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_MS_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    leg: str
    candidates: int
    elapsed_ms: float
    weight: float
    def __init__(self, leg: _Optional[str] = ..., candidates: _Optional[int] = ..., elapsed_ms: _Optional[float] = ..., weight: _Optional[float] = ...) -> None: ...

class RetrievalDiagnostics(_message.Message):
    __slots__ = ("route", "legs", "fused", "filtered", "threshold", "adaptive_threshold", "rrf_k", "leg_weights", "factor_weights", "utility_weight", "value_aware", "scoring_version", "reranker", "query_parsing", "stage_timings_ms")
    class LegWeightsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class FactorWeightsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class StageTimingsMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    ROUTE_FIELD_NUMBER: _ClassVar[int]
    LEGS_FIELD_NUMBER: _ClassVar[int]
    FUSED_FIELD_NUMBER: _ClassVar[int]
    FILTERED_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    ADAPTIVE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    RRF_K_FIELD_NUMBER: _ClassVar[int]
    LEG_WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    FACTOR_WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    UTILITY_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    VALUE_AWARE_FIELD_NUMBER: _ClassVar[int]
    SCORING_VERSION_FIELD_NUMBER: _ClassVar[int]
    RERANKER_FIELD_NUMBER: _ClassVar[int]
    QUERY_PARSING_FIELD_NUMBER: _ClassVar[int]
    STAGE_TIMINGS_MS_FIELD_NUMBER: _ClassVar[int]
    route: str
    legs: _containers.RepeatedCompositeFieldContainer[LegDiagnostics]
    fused: int
    filtered: int
    threshold: float
    adaptive_threshold: bool
    rrf_k: int
    leg_weights: _containers.ScalarMap[str, float]
    factor_weights: _containers.ScalarMap[str, float]
    utility_weight: float
    value_aware: bool
    scoring_version: str
    reranker: str
    query_parsing: str
    stage_timings_ms: _containers.ScalarMap[str, float]
    def __init__(self, route: _Optional[str] = ..., legs: _Optional[_Iterable[_Union[LegDiagnostics, _Mapping]]] = ..., fused: _Optional[int] = ..., filtered: _Optional[int] = ..., threshold: _Optional[float] = ..., adaptive_threshold: _Optional[bool] = ..., rrf_k: _Optional[int] = ..., leg_weights: _Optional[_Mapping[str, float]] = ..., factor_weights: _Optional[_Mapping[str, float]] = ..., utility_weight: _Optional[float] = ..., value_aware: _Optional[bool] = ..., scoring_version: _Optional[str] = ..., reranker: _Optional[str] = ..., query_parsing: _Optional[str] = ..., stage_timings_ms: _Optional[_Mapping[str, float]] = ...) -> None: ...

class RetrieveContextResponse(_message.Message):
    __slots__ = ("receipt_id", "blocks", "user_profile", "platform_entries", "tenant_floors", "tenant_entries", "procedures", "workspace_entries", "relevant_episodes", "session_summary", "session_entries", "superseded_hidden_count", "compilation", "diagnostics", "rendered", "results")
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
    receipt_id: str
    blocks: _containers.RepeatedCompositeFieldContainer[ContextMemory]
    user_profile: _containers.RepeatedCompositeFieldContainer[ContextMemory]
    platform_entries: _containers.RepeatedCompositeFieldContainer[ContextMemory]
    tenant_floors: _containers.RepeatedCompositeFieldContainer[ContextMemory]
    tenant_entries: _containers.RepeatedCompositeFieldContainer[ContextMemory]
    procedures: _containers.RepeatedCompositeFieldContainer[ContextProcedure]
    workspace_entries: _containers.RepeatedCompositeFieldContainer[ContextMemory]
    relevant_episodes: _containers.RepeatedCompositeFieldContainer[ContextEpisode]
    session_summary: SessionSummary
    session_entries: _containers.RepeatedCompositeFieldContainer[ContextMemory]
    superseded_hidden_count: int
    compilation: Compilation
    diagnostics: RetrievalDiagnostics
    rendered: str
    results: _containers.RepeatedCompositeFieldContainer[ContextMemory]
    def __init__(self, receipt_id: _Optional[str] = ..., blocks: _Optional[_Iterable[_Union[ContextMemory, _Mapping]]] = ..., user_profile: _Optional[_Iterable[_Union[ContextMemory, _Mapping]]] = ..., platform_entries: _Optional[_Iterable[_Union[ContextMemory, _Mapping]]] = ..., tenant_floors: _Optional[_Iterable[_Union[ContextMemory, _Mapping]]] = ..., tenant_entries: _Optional[_Iterable[_Union[ContextMemory, _Mapping]]] = ..., procedures: _Optional[_Iterable[_Union[ContextProcedure, _Mapping]]] = ..., workspace_entries: _Optional[_Iterable[_Union[ContextMemory, _Mapping]]] = ..., relevant_episodes: _Optional[_Iterable[_Union[ContextEpisode, _Mapping]]] = ..., session_summary: _Optional[_Union[SessionSummary, _Mapping]] = ..., session_entries: _Optional[_Iterable[_Union[ContextMemory, _Mapping]]] = ..., superseded_hidden_count: _Optional[int] = ..., compilation: _Optional[_Union[Compilation, _Mapping]] = ..., diagnostics: _Optional[_Union[RetrievalDiagnostics, _Mapping]] = ..., rendered: _Optional[str] = ..., results: _Optional[_Iterable[_Union[ContextMemory, _Mapping]]] = ...) -> None: ...

class RecordFeedbackRequest(_message.Message):
    __slots__ = ("principal", "receipt_id", "request_id", "helpful", "memory_ids")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    HELPFUL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    receipt_id: str
    request_id: str
    helpful: bool
    memory_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., receipt_id: _Optional[str] = ..., request_id: _Optional[str] = ..., helpful: _Optional[bool] = ..., memory_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class RecordFeedbackResponse(_message.Message):
    __slots__ = ("credited_memory_ids", "replayed")
    CREDITED_MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    credited_memory_ids: _containers.RepeatedScalarFieldContainer[str]
    replayed: bool
    def __init__(self, credited_memory_ids: _Optional[_Iterable[str]] = ..., replayed: _Optional[bool] = ...) -> None: ...

class RecordOutcomeRequest(_message.Message):
    __slots__ = ("principal", "receipt_id", "request_id", "outcome")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    receipt_id: str
    request_id: str
    outcome: _run_pb2.RunOutcome
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., receipt_id: _Optional[str] = ..., request_id: _Optional[str] = ..., outcome: _Optional[_Union[_run_pb2.RunOutcome, str]] = ...) -> None: ...

class RecordOutcomeResponse(_message.Message):
    __slots__ = ("credited_memory_ids", "replayed")
    CREDITED_MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    credited_memory_ids: _containers.RepeatedScalarFieldContainer[str]
    replayed: bool
    def __init__(self, credited_memory_ids: _Optional[_Iterable[str]] = ..., replayed: _Optional[bool] = ...) -> None: ...

class GetReceiptRequest(_message.Message):
    __slots__ = ("principal", "receipt_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    RECEIPT_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    receipt_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., receipt_id: _Optional[str] = ...) -> None: ...

class ReceiptItem(_message.Message):
    __slots__ = ("memory_id", "version", "section", "tokens")
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    memory_id: str
    version: int
    section: str
    tokens: int
    def __init__(self, memory_id: _Optional[str] = ..., version: _Optional[int] = ..., section: _Optional[str] = ..., tokens: _Optional[int] = ...) -> None: ...

class Receipt(_message.Message):
    __slots__ = ("id", "run_id", "thread_id", "semantic_query", "mode", "token_budget", "tokens_used", "sections", "create_time", "items")
    ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_QUERY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    SECTIONS_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    id: str
    run_id: str
    thread_id: str
    semantic_query: str
    mode: RetrievalMode
    token_budget: int
    tokens_used: int
    sections: _containers.RepeatedCompositeFieldContainer[SectionUsage]
    create_time: _timestamp_pb2.Timestamp
    items: _containers.RepeatedCompositeFieldContainer[ReceiptItem]
    def __init__(self, id: _Optional[str] = ..., run_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., semantic_query: _Optional[str] = ..., mode: _Optional[_Union[RetrievalMode, str]] = ..., token_budget: _Optional[int] = ..., tokens_used: _Optional[int] = ..., sections: _Optional[_Iterable[_Union[SectionUsage, _Mapping]]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., items: _Optional[_Iterable[_Union[ReceiptItem, _Mapping]]] = ...) -> None: ...

class GetReceiptResponse(_message.Message):
    __slots__ = ("receipt",)
    RECEIPT_FIELD_NUMBER: _ClassVar[int]
    receipt: Receipt
    def __init__(self, receipt: _Optional[_Union[Receipt, _Mapping]] = ...) -> None: ...

class RecordEpisodeRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "run_id", "outcome", "task", "summary", "finish_time")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    FINISH_TIME_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    run_id: str
    outcome: _run_pb2.RunOutcome
    task: str
    summary: str
    finish_time: _timestamp_pb2.Timestamp
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ..., outcome: _Optional[_Union[_run_pb2.RunOutcome, str]] = ..., task: _Optional[str] = ..., summary: _Optional[str] = ..., finish_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RecordEpisodeResponse(_message.Message):
    __slots__ = ("episode", "sentences")
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    SENTENCES_FIELD_NUMBER: _ClassVar[int]
    episode: ContextEpisode
    sentences: int
    def __init__(self, episode: _Optional[_Union[ContextEpisode, _Mapping]] = ..., sentences: _Optional[int] = ...) -> None: ...

class RetrieveRelevantMemoriesRequest(_message.Message):
    __slots__ = ("principal", "semantic_query", "token_budget", "run_id", "thread_id", "exclude_memory_ids")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_QUERY_FIELD_NUMBER: _ClassVar[int]
    TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    semantic_query: str
    token_budget: int
    run_id: str
    thread_id: str
    exclude_memory_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., semantic_query: _Optional[str] = ..., token_budget: _Optional[int] = ..., run_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., exclude_memory_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class RetrieveRelevantMemoriesResponse(_message.Message):
    __slots__ = ("receipt_id", "memories", "superseded_hidden_count", "compilation", "rendered")
    RECEIPT_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_HIDDEN_COUNT_FIELD_NUMBER: _ClassVar[int]
    COMPILATION_FIELD_NUMBER: _ClassVar[int]
    RENDERED_FIELD_NUMBER: _ClassVar[int]
    receipt_id: str
    memories: _containers.RepeatedCompositeFieldContainer[ContextMemory]
    superseded_hidden_count: int
    compilation: Compilation
    rendered: str
    def __init__(self, receipt_id: _Optional[str] = ..., memories: _Optional[_Iterable[_Union[ContextMemory, _Mapping]]] = ..., superseded_hidden_count: _Optional[int] = ..., compilation: _Optional[_Union[Compilation, _Mapping]] = ..., rendered: _Optional[str] = ...) -> None: ...
