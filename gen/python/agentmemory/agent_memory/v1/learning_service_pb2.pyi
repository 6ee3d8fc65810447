import datetime

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as _agent_memory_service_pb2
from agentmemory.common.v1 import message_pb2 as _message_pb2
from agentmemory.common.v1 import principal_pb2 as _principal_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SuggestionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUGGESTION_KIND_UNSPECIFIED: _ClassVar[SuggestionKind]
    SUGGESTION_KIND_MEMORY: _ClassVar[SuggestionKind]
    SUGGESTION_KIND_SUPERSEDE: _ClassVar[SuggestionKind]
    SUGGESTION_KIND_SKILL: _ClassVar[SuggestionKind]

class SuggestionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUGGESTION_STATUS_UNSPECIFIED: _ClassVar[SuggestionStatus]
    SUGGESTION_STATUS_PENDING: _ClassVar[SuggestionStatus]
    SUGGESTION_STATUS_ACCEPTED: _ClassVar[SuggestionStatus]
    SUGGESTION_STATUS_REJECTED: _ClassVar[SuggestionStatus]

class SkillState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SKILL_STATE_UNSPECIFIED: _ClassVar[SkillState]
    SKILL_STATE_NONE: _ClassVar[SkillState]
    SKILL_STATE_PROPOSED: _ClassVar[SkillState]
    SKILL_STATE_ACCEPTED: _ClassVar[SkillState]
    SKILL_STATE_REJECTED: _ClassVar[SkillState]

class LearningAuditAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LEARNING_AUDIT_ACTION_UNSPECIFIED: _ClassVar[LearningAuditAction]
    LEARNING_AUDIT_ACTION_SUGGEST: _ClassVar[LearningAuditAction]
    LEARNING_AUDIT_ACTION_ACCEPT: _ClassVar[LearningAuditAction]
    LEARNING_AUDIT_ACTION_REJECT: _ClassVar[LearningAuditAction]
    LEARNING_AUDIT_ACTION_RECORD_PROCEDURE: _ClassVar[LearningAuditAction]
    LEARNING_AUDIT_ACTION_DELETE_PROCEDURE: _ClassVar[LearningAuditAction]
    LEARNING_AUDIT_ACTION_PURGE_PROCEDURE: _ClassVar[LearningAuditAction]
    LEARNING_AUDIT_ACTION_EXTRACT: _ClassVar[LearningAuditAction]

class RunRating(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_RATING_UNSPECIFIED: _ClassVar[RunRating]
    RUN_RATING_THUMBS_UP: _ClassVar[RunRating]
    RUN_RATING_THUMBS_DOWN: _ClassVar[RunRating]
SUGGESTION_KIND_UNSPECIFIED: SuggestionKind
SUGGESTION_KIND_MEMORY: SuggestionKind
SUGGESTION_KIND_SUPERSEDE: SuggestionKind
SUGGESTION_KIND_SKILL: SuggestionKind
SUGGESTION_STATUS_UNSPECIFIED: SuggestionStatus
SUGGESTION_STATUS_PENDING: SuggestionStatus
SUGGESTION_STATUS_ACCEPTED: SuggestionStatus
SUGGESTION_STATUS_REJECTED: SuggestionStatus
SKILL_STATE_UNSPECIFIED: SkillState
SKILL_STATE_NONE: SkillState
SKILL_STATE_PROPOSED: SkillState
SKILL_STATE_ACCEPTED: SkillState
SKILL_STATE_REJECTED: SkillState
LEARNING_AUDIT_ACTION_UNSPECIFIED: LearningAuditAction
LEARNING_AUDIT_ACTION_SUGGEST: LearningAuditAction
LEARNING_AUDIT_ACTION_ACCEPT: LearningAuditAction
LEARNING_AUDIT_ACTION_REJECT: LearningAuditAction
LEARNING_AUDIT_ACTION_RECORD_PROCEDURE: LearningAuditAction
LEARNING_AUDIT_ACTION_DELETE_PROCEDURE: LearningAuditAction
LEARNING_AUDIT_ACTION_PURGE_PROCEDURE: LearningAuditAction
LEARNING_AUDIT_ACTION_EXTRACT: LearningAuditAction
RUN_RATING_UNSPECIFIED: RunRating
RUN_RATING_THUMBS_UP: RunRating
RUN_RATING_THUMBS_DOWN: RunRating

class Suggestion(_message.Message):
    __slots__ = ("id", "kind", "status", "key", "content", "memory_kind", "scope", "confidence", "source", "supersedes_memory_id", "superseded_content", "procedure_id", "memory_id", "agent_id", "user_id", "create_time", "decide_time", "decided_by", "stored_content")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MEMORY_KIND_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDES_MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_CONTENT_FIELD_NUMBER: _ClassVar[int]
    PROCEDURE_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DECIDE_TIME_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BY_FIELD_NUMBER: _ClassVar[int]
    STORED_CONTENT_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: SuggestionKind
    status: SuggestionStatus
    key: str
    content: str
    memory_kind: _agent_memory_service_pb2.MemoryKind
    scope: _agent_memory_service_pb2.MemoryScope
    confidence: float
    source: _agent_memory_service_pb2.Source
    supersedes_memory_id: str
    superseded_content: str
    procedure_id: str
    memory_id: str
    agent_id: str
    user_id: str
    create_time: _timestamp_pb2.Timestamp
    decide_time: _timestamp_pb2.Timestamp
    decided_by: _agent_memory_service_pb2.Author
    stored_content: str
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[_Union[SuggestionKind, str]] = ..., status: _Optional[_Union[SuggestionStatus, str]] = ..., key: _Optional[str] = ..., content: _Optional[str] = ..., memory_kind: _Optional[_Union[_agent_memory_service_pb2.MemoryKind, str]] = ..., scope: _Optional[_Union[_agent_memory_service_pb2.MemoryScope, str]] = ..., confidence: _Optional[float] = ..., source: _Optional[_Union[_agent_memory_service_pb2.Source, _Mapping]] = ..., supersedes_memory_id: _Optional[str] = ..., superseded_content: _Optional[str] = ..., procedure_id: _Optional[str] = ..., memory_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., user_id: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., decide_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., decided_by: _Optional[_Union[_agent_memory_service_pb2.Author, _Mapping]] = ..., stored_content: _Optional[str] = ...) -> None: ...

class ProcedureStep(_message.Message):
    __slots__ = ("tool_name", "arguments", "status", "result")
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    tool_name: str
    arguments: str
    status: _message_pb2.ToolCallStatus
    result: str
    def __init__(self, tool_name: _Optional[str] = ..., arguments: _Optional[str] = ..., status: _Optional[_Union[_message_pb2.ToolCallStatus, str]] = ..., result: _Optional[str] = ...) -> None: ...

class Procedure(_message.Message):
    __slots__ = ("id", "agent_id", "user_id", "scope", "task", "steps", "thread_id", "run_id", "turn_offset", "successes", "thumbs_up", "thumbs_down", "recallable", "skill_state", "create_time", "delete_time", "purge_after")
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TURN_OFFSET_FIELD_NUMBER: _ClassVar[int]
    SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    THUMBS_UP_FIELD_NUMBER: _ClassVar[int]
    THUMBS_DOWN_FIELD_NUMBER: _ClassVar[int]
    RECALLABLE_FIELD_NUMBER: _ClassVar[int]
    SKILL_STATE_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DELETE_TIME_FIELD_NUMBER: _ClassVar[int]
    PURGE_AFTER_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_id: str
    user_id: str
    scope: _agent_memory_service_pb2.MemoryScope
    task: str
    steps: _containers.RepeatedCompositeFieldContainer[ProcedureStep]
    thread_id: str
    run_id: str
    turn_offset: int
    successes: int
    thumbs_up: int
    thumbs_down: int
    recallable: bool
    skill_state: SkillState
    create_time: _timestamp_pb2.Timestamp
    delete_time: _timestamp_pb2.Timestamp
    purge_after: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., user_id: _Optional[str] = ..., scope: _Optional[_Union[_agent_memory_service_pb2.MemoryScope, str]] = ..., task: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[ProcedureStep, _Mapping]]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ..., turn_offset: _Optional[int] = ..., successes: _Optional[int] = ..., thumbs_up: _Optional[int] = ..., thumbs_down: _Optional[int] = ..., recallable: _Optional[bool] = ..., skill_state: _Optional[_Union[SkillState, str]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., delete_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., purge_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class LearningAuditRecord(_message.Message):
    __slots__ = ("id", "action", "subject_id", "actor", "time", "before", "after")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    id: int
    action: LearningAuditAction
    subject_id: str
    actor: _agent_memory_service_pb2.Author
    time: _timestamp_pb2.Timestamp
    before: _struct_pb2.Struct
    after: _struct_pb2.Struct
    def __init__(self, id: _Optional[int] = ..., action: _Optional[_Union[LearningAuditAction, str]] = ..., subject_id: _Optional[str] = ..., actor: _Optional[_Union[_agent_memory_service_pb2.Author, _Mapping]] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., before: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., after: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ListSuggestionsRequest(_message.Message):
    __slots__ = ("principal", "status", "page_size", "page_token")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    status: SuggestionStatus
    page_size: int
    page_token: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., status: _Optional[_Union[SuggestionStatus, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSuggestionsResponse(_message.Message):
    __slots__ = ("suggestions", "next_page_token")
    SUGGESTIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    suggestions: _containers.RepeatedCompositeFieldContainer[Suggestion]
    next_page_token: str
    def __init__(self, suggestions: _Optional[_Iterable[_Union[Suggestion, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class AcceptSuggestionRequest(_message.Message):
    __slots__ = ("principal", "suggestion_id", "content")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    suggestion_id: str
    content: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., suggestion_id: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class AcceptSuggestionResponse(_message.Message):
    __slots__ = ("suggestion", "memory", "procedure")
    SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    PROCEDURE_FIELD_NUMBER: _ClassVar[int]
    suggestion: Suggestion
    memory: _agent_memory_service_pb2.Entry
    procedure: Procedure
    def __init__(self, suggestion: _Optional[_Union[Suggestion, _Mapping]] = ..., memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ..., procedure: _Optional[_Union[Procedure, _Mapping]] = ...) -> None: ...

class RejectSuggestionRequest(_message.Message):
    __slots__ = ("principal", "suggestion_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    suggestion_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., suggestion_id: _Optional[str] = ...) -> None: ...

class RejectSuggestionResponse(_message.Message):
    __slots__ = ("suggestion",)
    SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    suggestion: Suggestion
    def __init__(self, suggestion: _Optional[_Union[Suggestion, _Mapping]] = ...) -> None: ...

class ListProceduresRequest(_message.Message):
    __slots__ = ("principal", "page_size", "page_token", "include_deleted")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DELETED_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    page_size: int
    page_token: str
    include_deleted: bool
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., include_deleted: _Optional[bool] = ...) -> None: ...

class ListProceduresResponse(_message.Message):
    __slots__ = ("procedures", "next_page_token")
    PROCEDURES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    procedures: _containers.RepeatedCompositeFieldContainer[Procedure]
    next_page_token: str
    def __init__(self, procedures: _Optional[_Iterable[_Union[Procedure, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteProcedureRequest(_message.Message):
    __slots__ = ("principal", "procedure_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    PROCEDURE_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    procedure_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., procedure_id: _Optional[str] = ...) -> None: ...

class DeleteProcedureResponse(_message.Message):
    __slots__ = ("procedure",)
    PROCEDURE_FIELD_NUMBER: _ClassVar[int]
    procedure: Procedure
    def __init__(self, procedure: _Optional[_Union[Procedure, _Mapping]] = ...) -> None: ...

class ListLearningAuditRequest(_message.Message):
    __slots__ = ("principal", "page_size", "page_token")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    page_size: int
    page_token: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListLearningAuditResponse(_message.Message):
    __slots__ = ("records", "next_page_token")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[LearningAuditRecord]
    next_page_token: str
    def __init__(self, records: _Optional[_Iterable[_Union[LearningAuditRecord, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class HoldRunCredentialsRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "run_id", "credentials")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    run_id: str
    credentials: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ..., credentials: _Optional[_Iterable[str]] = ...) -> None: ...

class HoldRunCredentialsResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RecallProceduresRequest(_message.Message):
    __slots__ = ("principal", "task", "limit", "thread_id", "run_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    task: str
    limit: int
    thread_id: str
    run_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., task: _Optional[str] = ..., limit: _Optional[int] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ...) -> None: ...

class RecalledProcedure(_message.Message):
    __slots__ = ("procedure", "similarity")
    PROCEDURE_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    procedure: Procedure
    similarity: float
    def __init__(self, procedure: _Optional[_Union[Procedure, _Mapping]] = ..., similarity: _Optional[float] = ...) -> None: ...

class RecallProceduresResponse(_message.Message):
    __slots__ = ("procedures", "rendered", "partial")
    PROCEDURES_FIELD_NUMBER: _ClassVar[int]
    RENDERED_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    procedures: _containers.RepeatedCompositeFieldContainer[RecalledProcedure]
    rendered: str
    partial: bool
    def __init__(self, procedures: _Optional[_Iterable[_Union[RecalledProcedure, _Mapping]]] = ..., rendered: _Optional[str] = ..., partial: _Optional[bool] = ...) -> None: ...

class RecordRunFeedbackRequest(_message.Message):
    __slots__ = ("principal", "thread_id", "run_id", "rating")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    thread_id: str
    run_id: str
    rating: RunRating
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ..., rating: _Optional[_Union[RunRating, str]] = ...) -> None: ...

class RecordRunFeedbackResponse(_message.Message):
    __slots__ = ("procedure_ids",)
    PROCEDURE_IDS_FIELD_NUMBER: _ClassVar[int]
    procedure_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, procedure_ids: _Optional[_Iterable[str]] = ...) -> None: ...
