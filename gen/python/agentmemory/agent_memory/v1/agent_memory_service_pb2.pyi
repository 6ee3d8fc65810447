import datetime

from agentmemory.common.v1 import principal_pb2 as _principal_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Category(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CATEGORY_UNSPECIFIED: _ClassVar[Category]
    CATEGORY_USER_PROFILE: _ClassVar[Category]
    CATEGORY_PROJECT_FACT: _ClassVar[Category]
    CATEGORY_OBSERVATION: _ClassVar[Category]

class Visibility(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VISIBILITY_UNSPECIFIED: _ClassVar[Visibility]
    VISIBILITY_PRIVATE: _ClassVar[Visibility]
    VISIBILITY_SHARED: _ClassVar[Visibility]

class SourceKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SOURCE_KIND_UNSPECIFIED: _ClassVar[SourceKind]
    SOURCE_KIND_AGENT_TOOL: _ClassVar[SourceKind]
    SOURCE_KIND_PRE_COMPACTION_FLUSH: _ClassVar[SourceKind]
    SOURCE_KIND_USER: _ClassVar[SourceKind]
    SOURCE_KIND_ADMIN: _ClassVar[SourceKind]
    SOURCE_KIND_EXTRACTION: _ClassVar[SourceKind]
    SOURCE_KIND_TOOL_RESULT: _ClassVar[SourceKind]

class MemoryScope(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_SCOPE_UNSPECIFIED: _ClassVar[MemoryScope]
    MEMORY_SCOPE_ACCOUNT: _ClassVar[MemoryScope]
    MEMORY_SCOPE_AGENT: _ClassVar[MemoryScope]
    MEMORY_SCOPE_USER: _ClassVar[MemoryScope]
    MEMORY_SCOPE_PRIVATE: _ClassVar[MemoryScope]
    MEMORY_SCOPE_PLATFORM: _ClassVar[MemoryScope]

class MemoryKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_KIND_UNSPECIFIED: _ClassVar[MemoryKind]
    MEMORY_KIND_USER_PROFILE: _ClassVar[MemoryKind]
    MEMORY_KIND_PROJECT_FACT: _ClassVar[MemoryKind]
    MEMORY_KIND_OBSERVATION: _ClassVar[MemoryKind]
    MEMORY_KIND_DECISION: _ClassVar[MemoryKind]
    MEMORY_KIND_CORRECTION: _ClassVar[MemoryKind]
    MEMORY_KIND_PREFERENCE: _ClassVar[MemoryKind]
    MEMORY_KIND_INSTRUCTION: _ClassVar[MemoryKind]
    MEMORY_KIND_ARTIFACT_REF: _ClassVar[MemoryKind]
    MEMORY_KIND_PLATFORM_RULE: _ClassVar[MemoryKind]
    MEMORY_KIND_TENANT_RULE: _ClassVar[MemoryKind]
    MEMORY_KIND_TENANT_FLOOR: _ClassVar[MemoryKind]
    MEMORY_KIND_BLOCK: _ClassVar[MemoryKind]

class AuditAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AUDIT_ACTION_UNSPECIFIED: _ClassVar[AuditAction]
    AUDIT_ACTION_CREATE: _ClassVar[AuditAction]
    AUDIT_ACTION_UPDATE: _ClassVar[AuditAction]
    AUDIT_ACTION_SUPERSEDE: _ClassVar[AuditAction]
    AUDIT_ACTION_DELETE: _ClassVar[AuditAction]
    AUDIT_ACTION_RESTORE: _ClassVar[AuditAction]
    AUDIT_ACTION_ROLLBACK: _ClassVar[AuditAction]
    AUDIT_ACTION_PURGE: _ClassVar[AuditAction]
    AUDIT_ACTION_IMPORT: _ClassVar[AuditAction]
    AUDIT_ACTION_EXPIRE: _ClassVar[AuditAction]
    AUDIT_ACTION_ACCOUNT_SETTINGS: _ClassVar[AuditAction]
    AUDIT_ACTION_AGENT_SETTINGS: _ClassVar[AuditAction]

class ExtractionMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXTRACTION_MODE_UNSPECIFIED: _ClassVar[ExtractionMode]
    EXTRACTION_MODE_IMMEDIATE: _ClassVar[ExtractionMode]
    EXTRACTION_MODE_SUGGESTIONS: _ClassVar[ExtractionMode]
    EXTRACTION_MODE_OFF: _ClassVar[ExtractionMode]
CATEGORY_UNSPECIFIED: Category
CATEGORY_USER_PROFILE: Category
CATEGORY_PROJECT_FACT: Category
CATEGORY_OBSERVATION: Category
VISIBILITY_UNSPECIFIED: Visibility
VISIBILITY_PRIVATE: Visibility
VISIBILITY_SHARED: Visibility
SOURCE_KIND_UNSPECIFIED: SourceKind
SOURCE_KIND_AGENT_TOOL: SourceKind
SOURCE_KIND_PRE_COMPACTION_FLUSH: SourceKind
SOURCE_KIND_USER: SourceKind
SOURCE_KIND_ADMIN: SourceKind
SOURCE_KIND_EXTRACTION: SourceKind
SOURCE_KIND_TOOL_RESULT: SourceKind
MEMORY_SCOPE_UNSPECIFIED: MemoryScope
MEMORY_SCOPE_ACCOUNT: MemoryScope
MEMORY_SCOPE_AGENT: MemoryScope
MEMORY_SCOPE_USER: MemoryScope
MEMORY_SCOPE_PRIVATE: MemoryScope
MEMORY_SCOPE_PLATFORM: MemoryScope
MEMORY_KIND_UNSPECIFIED: MemoryKind
MEMORY_KIND_USER_PROFILE: MemoryKind
MEMORY_KIND_PROJECT_FACT: MemoryKind
MEMORY_KIND_OBSERVATION: MemoryKind
MEMORY_KIND_DECISION: MemoryKind
MEMORY_KIND_CORRECTION: MemoryKind
MEMORY_KIND_PREFERENCE: MemoryKind
MEMORY_KIND_INSTRUCTION: MemoryKind
MEMORY_KIND_ARTIFACT_REF: MemoryKind
MEMORY_KIND_PLATFORM_RULE: MemoryKind
MEMORY_KIND_TENANT_RULE: MemoryKind
MEMORY_KIND_TENANT_FLOOR: MemoryKind
MEMORY_KIND_BLOCK: MemoryKind
AUDIT_ACTION_UNSPECIFIED: AuditAction
AUDIT_ACTION_CREATE: AuditAction
AUDIT_ACTION_UPDATE: AuditAction
AUDIT_ACTION_SUPERSEDE: AuditAction
AUDIT_ACTION_DELETE: AuditAction
AUDIT_ACTION_RESTORE: AuditAction
AUDIT_ACTION_ROLLBACK: AuditAction
AUDIT_ACTION_PURGE: AuditAction
AUDIT_ACTION_IMPORT: AuditAction
AUDIT_ACTION_EXPIRE: AuditAction
AUDIT_ACTION_ACCOUNT_SETTINGS: AuditAction
AUDIT_ACTION_AGENT_SETTINGS: AuditAction
EXTRACTION_MODE_UNSPECIFIED: ExtractionMode
EXTRACTION_MODE_IMMEDIATE: ExtractionMode
EXTRACTION_MODE_SUGGESTIONS: ExtractionMode
EXTRACTION_MODE_OFF: ExtractionMode

class AgentSettings(_message.Message):
    __slots__ = ("memory_bound", "extraction_mode", "procedures_enabled", "update_time", "relevant_memories_enabled", "relevant_memories_token_budget")
    MEMORY_BOUND_FIELD_NUMBER: _ClassVar[int]
    EXTRACTION_MODE_FIELD_NUMBER: _ClassVar[int]
    PROCEDURES_ENABLED_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    RELEVANT_MEMORIES_ENABLED_FIELD_NUMBER: _ClassVar[int]
    RELEVANT_MEMORIES_TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    memory_bound: bool
    extraction_mode: ExtractionMode
    procedures_enabled: bool
    update_time: _timestamp_pb2.Timestamp
    relevant_memories_enabled: bool
    relevant_memories_token_budget: int
    def __init__(self, memory_bound: _Optional[bool] = ..., extraction_mode: _Optional[_Union[ExtractionMode, str]] = ..., procedures_enabled: _Optional[bool] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., relevant_memories_enabled: _Optional[bool] = ..., relevant_memories_token_budget: _Optional[int] = ...) -> None: ...

class AccountSettings(_message.Message):
    __slots__ = ("memory_enabled", "retention_days", "default_token_budget", "update_time", "environments", "quotas")
    MEMORY_ENABLED_FIELD_NUMBER: _ClassVar[int]
    RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_TOKEN_BUDGET_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENTS_FIELD_NUMBER: _ClassVar[int]
    QUOTAS_FIELD_NUMBER: _ClassVar[int]
    memory_enabled: bool
    retention_days: int
    default_token_budget: int
    update_time: _timestamp_pb2.Timestamp
    environments: _containers.RepeatedScalarFieldContainer[str]
    quotas: AccountQuotas
    def __init__(self, memory_enabled: _Optional[bool] = ..., retention_days: _Optional[int] = ..., default_token_budget: _Optional[int] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., environments: _Optional[_Iterable[str]] = ..., quotas: _Optional[_Union[AccountQuotas, _Mapping]] = ...) -> None: ...

class AccountQuotas(_message.Message):
    __slots__ = ("environments", "memories", "pending_suggestions", "receipts_per_day", "runs_per_day")
    ENVIRONMENTS_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    PENDING_SUGGESTIONS_FIELD_NUMBER: _ClassVar[int]
    RECEIPTS_PER_DAY_FIELD_NUMBER: _ClassVar[int]
    RUNS_PER_DAY_FIELD_NUMBER: _ClassVar[int]
    environments: int
    memories: int
    pending_suggestions: int
    receipts_per_day: int
    runs_per_day: int
    def __init__(self, environments: _Optional[int] = ..., memories: _Optional[int] = ..., pending_suggestions: _Optional[int] = ..., receipts_per_day: _Optional[int] = ..., runs_per_day: _Optional[int] = ...) -> None: ...

class Source(_message.Message):
    __slots__ = ("kind", "thread_id", "message_ids", "run_id", "first_offset", "last_offset")
    KIND_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    FIRST_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LAST_OFFSET_FIELD_NUMBER: _ClassVar[int]
    kind: SourceKind
    thread_id: str
    message_ids: _containers.RepeatedScalarFieldContainer[str]
    run_id: str
    first_offset: int
    last_offset: int
    def __init__(self, kind: _Optional[_Union[SourceKind, str]] = ..., thread_id: _Optional[str] = ..., message_ids: _Optional[_Iterable[str]] = ..., run_id: _Optional[str] = ..., first_offset: _Optional[int] = ..., last_offset: _Optional[int] = ...) -> None: ...

class Author(_message.Message):
    __slots__ = ("key_id", "agent_id", "user_id", "role")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    agent_id: str
    user_id: str
    role: _principal_pb2.KeyRole
    def __init__(self, key_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., user_id: _Optional[str] = ..., role: _Optional[_Union[_principal_pb2.KeyRole, str]] = ...) -> None: ...

class Entry(_message.Message):
    __slots__ = ("id", "key", "content", "category", "visibility", "importance", "content_hash", "expires_at", "recall_count", "last_recalled_at", "created_at", "updated_at", "user_id", "source", "scope", "kind", "agent_id", "tags", "confidence", "version", "author", "deleted_at", "superseded_by", "superseded_at", "purge_after")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    RECALL_COUNT_FIELD_NUMBER: _ClassVar[int]
    LAST_RECALLED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    DELETED_AT_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_AT_FIELD_NUMBER: _ClassVar[int]
    PURGE_AFTER_FIELD_NUMBER: _ClassVar[int]
    id: str
    key: str
    content: str
    category: Category
    visibility: Visibility
    importance: float
    content_hash: str
    expires_at: _timestamp_pb2.Timestamp
    recall_count: int
    last_recalled_at: _timestamp_pb2.Timestamp
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    user_id: str
    source: Source
    scope: MemoryScope
    kind: MemoryKind
    agent_id: str
    tags: _containers.ScalarMap[str, str]
    confidence: float
    version: int
    author: Author
    deleted_at: _timestamp_pb2.Timestamp
    superseded_by: str
    superseded_at: _timestamp_pb2.Timestamp
    purge_after: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., key: _Optional[str] = ..., content: _Optional[str] = ..., category: _Optional[_Union[Category, str]] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., importance: _Optional[float] = ..., content_hash: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., recall_count: _Optional[int] = ..., last_recalled_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., user_id: _Optional[str] = ..., source: _Optional[_Union[Source, _Mapping]] = ..., scope: _Optional[_Union[MemoryScope, str]] = ..., kind: _Optional[_Union[MemoryKind, str]] = ..., agent_id: _Optional[str] = ..., tags: _Optional[_Mapping[str, str]] = ..., confidence: _Optional[float] = ..., version: _Optional[int] = ..., author: _Optional[_Union[Author, _Mapping]] = ..., deleted_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., superseded_by: _Optional[str] = ..., superseded_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., purge_after: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class MemoryVersion(_message.Message):
    __slots__ = ("version", "entry", "action", "recorded_at", "recorded_until")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    RECORDED_UNTIL_FIELD_NUMBER: _ClassVar[int]
    version: int
    entry: Entry
    action: AuditAction
    recorded_at: _timestamp_pb2.Timestamp
    recorded_until: _timestamp_pb2.Timestamp
    def __init__(self, version: _Optional[int] = ..., entry: _Optional[_Union[Entry, _Mapping]] = ..., action: _Optional[_Union[AuditAction, str]] = ..., recorded_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., recorded_until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AuditRecord(_message.Message):
    __slots__ = ("id", "action", "memory_id", "version", "actor", "time", "before", "after")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    id: int
    action: AuditAction
    memory_id: str
    version: int
    actor: Author
    time: _timestamp_pb2.Timestamp
    before: _struct_pb2.Struct
    after: _struct_pb2.Struct
    def __init__(self, id: _Optional[int] = ..., action: _Optional[_Union[AuditAction, str]] = ..., memory_id: _Optional[str] = ..., version: _Optional[int] = ..., actor: _Optional[_Union[Author, _Mapping]] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., before: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., after: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class NewMemory(_message.Message):
    __slots__ = ("scope", "kind", "key", "content", "importance", "confidence", "tags", "source")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    scope: MemoryScope
    kind: MemoryKind
    key: str
    content: str
    importance: float
    confidence: float
    tags: _containers.ScalarMap[str, str]
    source: Source
    def __init__(self, scope: _Optional[_Union[MemoryScope, str]] = ..., kind: _Optional[_Union[MemoryKind, str]] = ..., key: _Optional[str] = ..., content: _Optional[str] = ..., importance: _Optional[float] = ..., confidence: _Optional[float] = ..., tags: _Optional[_Mapping[str, str]] = ..., source: _Optional[_Union[Source, _Mapping]] = ...) -> None: ...

class MemoryFilter(_message.Message):
    __slots__ = ("scopes", "kinds", "sources", "tags", "text", "include_deleted", "include_superseded", "as_of")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DELETED_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SUPERSEDED_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    scopes: _containers.RepeatedScalarFieldContainer[MemoryScope]
    kinds: _containers.RepeatedScalarFieldContainer[MemoryKind]
    sources: _containers.RepeatedScalarFieldContainer[SourceKind]
    tags: _containers.ScalarMap[str, str]
    text: str
    include_deleted: bool
    include_superseded: bool
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, scopes: _Optional[_Iterable[_Union[MemoryScope, str]]] = ..., kinds: _Optional[_Iterable[_Union[MemoryKind, str]]] = ..., sources: _Optional[_Iterable[_Union[SourceKind, str]]] = ..., tags: _Optional[_Mapping[str, str]] = ..., text: _Optional[str] = ..., include_deleted: _Optional[bool] = ..., include_superseded: _Optional[bool] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class MemoryEdit(_message.Message):
    __slots__ = ("key", "content", "kind", "importance", "confidence", "tags")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    key: str
    content: str
    kind: MemoryKind
    importance: float
    confidence: float
    tags: _containers.ScalarMap[str, str]
    def __init__(self, key: _Optional[str] = ..., content: _Optional[str] = ..., kind: _Optional[_Union[MemoryKind, str]] = ..., importance: _Optional[float] = ..., confidence: _Optional[float] = ..., tags: _Optional[_Mapping[str, str]] = ...) -> None: ...

class StoreRequest(_message.Message):
    __slots__ = ("principal", "key", "content", "category", "visibility", "importance", "source", "request_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    IMPORTANCE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    key: str
    content: str
    category: Category
    visibility: Visibility
    importance: float
    source: Source
    request_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., key: _Optional[str] = ..., content: _Optional[str] = ..., category: _Optional[_Union[Category, str]] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., importance: _Optional[float] = ..., source: _Optional[_Union[Source, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class StoreResponse(_message.Message):
    __slots__ = ("entry", "visibility", "unchanged", "replaced")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    VISIBILITY_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FIELD_NUMBER: _ClassVar[int]
    entry: Entry
    visibility: Visibility
    unchanged: bool
    replaced: bool
    def __init__(self, entry: _Optional[_Union[Entry, _Mapping]] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., unchanged: _Optional[bool] = ..., replaced: _Optional[bool] = ...) -> None: ...

class RecallRequest(_message.Message):
    __slots__ = ("principal", "query", "limit", "categories", "rerank")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    query: str
    limit: int
    categories: _containers.RepeatedScalarFieldContainer[Category]
    rerank: bool
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., query: _Optional[str] = ..., limit: _Optional[int] = ..., categories: _Optional[_Iterable[_Union[Category, str]]] = ..., rerank: _Optional[bool] = ...) -> None: ...

class RecalledEntry(_message.Message):
    __slots__ = ("entry", "score")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    entry: Entry
    score: float
    def __init__(self, entry: _Optional[_Union[Entry, _Mapping]] = ..., score: _Optional[float] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("entries", "fallback", "reranked")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    RERANKED_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[RecalledEntry]
    fallback: bool
    reranked: bool
    def __init__(self, entries: _Optional[_Iterable[_Union[RecalledEntry, _Mapping]]] = ..., fallback: _Optional[bool] = ..., reranked: _Optional[bool] = ...) -> None: ...

class ForgetRequest(_message.Message):
    __slots__ = ("principal", "key", "request_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    key: str
    request_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., key: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class ForgetResponse(_message.Message):
    __slots__ = ("forgotten",)
    FORGOTTEN_FIELD_NUMBER: _ClassVar[int]
    forgotten: bool
    def __init__(self, forgotten: _Optional[bool] = ...) -> None: ...

class ListPinnedRequest(_message.Message):
    __slots__ = ("principal",)
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ...) -> None: ...

class ListPinnedResponse(_message.Message):
    __slots__ = ("entries", "blocks", "procedures_recallable")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    PROCEDURES_RECALLABLE_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[Entry]
    blocks: _containers.RepeatedCompositeFieldContainer[Entry]
    procedures_recallable: bool
    def __init__(self, entries: _Optional[_Iterable[_Union[Entry, _Mapping]]] = ..., blocks: _Optional[_Iterable[_Union[Entry, _Mapping]]] = ..., procedures_recallable: _Optional[bool] = ...) -> None: ...

class WatchPinnedChangesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WatchPinnedChangesResponse(_message.Message):
    __slots__ = ("subscribed", "account_id", "all_accounts")
    SUBSCRIBED_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    ALL_ACCOUNTS_FIELD_NUMBER: _ClassVar[int]
    subscribed: bool
    account_id: str
    all_accounts: bool
    def __init__(self, subscribed: _Optional[bool] = ..., account_id: _Optional[str] = ..., all_accounts: _Optional[bool] = ...) -> None: ...

class GetEntryRequest(_message.Message):
    __slots__ = ("principal", "key")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    key: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., key: _Optional[str] = ...) -> None: ...

class GetEntryResponse(_message.Message):
    __slots__ = ("entry",)
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    entry: Entry
    def __init__(self, entry: _Optional[_Union[Entry, _Mapping]] = ...) -> None: ...

class ListEntriesRequest(_message.Message):
    __slots__ = ("principal", "page_size", "page_token", "categories")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    page_size: int
    page_token: str
    categories: _containers.RepeatedScalarFieldContainer[Category]
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., categories: _Optional[_Iterable[_Union[Category, str]]] = ...) -> None: ...

class ListEntriesResponse(_message.Message):
    __slots__ = ("entries", "next_page_token")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[Entry]
    next_page_token: str
    def __init__(self, entries: _Optional[_Iterable[_Union[Entry, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RunHygieneRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RunHygieneResponse(_message.Message):
    __slots__ = ("expired", "decayed", "purged", "pruned_versions", "receipts_deleted")
    EXPIRED_FIELD_NUMBER: _ClassVar[int]
    DECAYED_FIELD_NUMBER: _ClassVar[int]
    PURGED_FIELD_NUMBER: _ClassVar[int]
    PRUNED_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    RECEIPTS_DELETED_FIELD_NUMBER: _ClassVar[int]
    expired: int
    decayed: int
    purged: int
    pruned_versions: int
    receipts_deleted: int
    def __init__(self, expired: _Optional[int] = ..., decayed: _Optional[int] = ..., purged: _Optional[int] = ..., pruned_versions: _Optional[int] = ..., receipts_deleted: _Optional[int] = ...) -> None: ...

class ReindexRequest(_message.Message):
    __slots__ = ("principal",)
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ...) -> None: ...

class ReindexResponse(_message.Message):
    __slots__ = ("indexed", "total", "collection")
    INDEXED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_FIELD_NUMBER: _ClassVar[int]
    indexed: int
    total: int
    collection: str
    def __init__(self, indexed: _Optional[int] = ..., total: _Optional[int] = ..., collection: _Optional[str] = ...) -> None: ...

class ListMemoriesRequest(_message.Message):
    __slots__ = ("principal", "filter", "page_size", "page_token")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    filter: MemoryFilter
    page_size: int
    page_token: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., filter: _Optional[_Union[MemoryFilter, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMemoriesResponse(_message.Message):
    __slots__ = ("memories", "next_page_token")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[Entry]
    next_page_token: str
    def __init__(self, memories: _Optional[_Iterable[_Union[Entry, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetMemoryRequest(_message.Message):
    __slots__ = ("principal", "memory_id", "as_of")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    AS_OF_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    memory_id: str
    as_of: _timestamp_pb2.Timestamp
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., memory_id: _Optional[str] = ..., as_of: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetMemoryResponse(_message.Message):
    __slots__ = ("memory", "versions")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    memory: Entry
    versions: _containers.RepeatedCompositeFieldContainer[MemoryVersion]
    def __init__(self, memory: _Optional[_Union[Entry, _Mapping]] = ..., versions: _Optional[_Iterable[_Union[MemoryVersion, _Mapping]]] = ...) -> None: ...

class AddMemoryRequest(_message.Message):
    __slots__ = ("principal", "memory", "request_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    memory: NewMemory
    request_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., memory: _Optional[_Union[NewMemory, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class AddMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: Entry
    def __init__(self, memory: _Optional[_Union[Entry, _Mapping]] = ...) -> None: ...

class EditMemoryRequest(_message.Message):
    __slots__ = ("principal", "memory_id", "expected_version", "edit", "update_mask")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    EDIT_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    memory_id: str
    expected_version: int
    edit: MemoryEdit
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., memory_id: _Optional[str] = ..., expected_version: _Optional[int] = ..., edit: _Optional[_Union[MemoryEdit, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class EditMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: Entry
    def __init__(self, memory: _Optional[_Union[Entry, _Mapping]] = ...) -> None: ...

class DeleteMemoryRequest(_message.Message):
    __slots__ = ("principal", "memory_id", "expected_version")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    memory_id: str
    expected_version: int
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., memory_id: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class DeleteMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: Entry
    def __init__(self, memory: _Optional[_Union[Entry, _Mapping]] = ...) -> None: ...

class RestoreMemoryRequest(_message.Message):
    __slots__ = ("principal", "memory_id", "expected_version")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    memory_id: str
    expected_version: int
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., memory_id: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class RestoreMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: Entry
    def __init__(self, memory: _Optional[_Union[Entry, _Mapping]] = ...) -> None: ...

class RollbackMemoryRequest(_message.Message):
    __slots__ = ("principal", "memory_id", "version", "expected_version")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    memory_id: str
    version: int
    expected_version: int
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., memory_id: _Optional[str] = ..., version: _Optional[int] = ..., expected_version: _Optional[int] = ...) -> None: ...

class RollbackMemoryResponse(_message.Message):
    __slots__ = ("memory",)
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    memory: Entry
    def __init__(self, memory: _Optional[_Union[Entry, _Mapping]] = ...) -> None: ...

class SupersedeMemoryRequest(_message.Message):
    __slots__ = ("principal", "memory_id", "superseded_by", "expected_version")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_VERSION_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    memory_id: str
    superseded_by: str
    expected_version: int
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., memory_id: _Optional[str] = ..., superseded_by: _Optional[str] = ..., expected_version: _Optional[int] = ...) -> None: ...

class SupersedeMemoryResponse(_message.Message):
    __slots__ = ("memory", "replacement")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    REPLACEMENT_FIELD_NUMBER: _ClassVar[int]
    memory: Entry
    replacement: Entry
    def __init__(self, memory: _Optional[_Union[Entry, _Mapping]] = ..., replacement: _Optional[_Union[Entry, _Mapping]] = ...) -> None: ...

class ListAuditRequest(_message.Message):
    __slots__ = ("principal", "memory_id", "page_size", "page_token")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    memory_id: str
    page_size: int
    page_token: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., memory_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAuditResponse(_message.Message):
    __slots__ = ("records", "next_page_token")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[AuditRecord]
    next_page_token: str
    def __init__(self, records: _Optional[_Iterable[_Union[AuditRecord, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ExportMemoriesRequest(_message.Message):
    __slots__ = ("principal", "page_size", "page_token")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    page_size: int
    page_token: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("principal", "jsonl")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    JSONL_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    jsonl: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., jsonl: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("principal", "memory_id")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ID_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    memory_id: str
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., memory_id: _Optional[str] = ...) -> None: ...

class ExplainMemoryResponse(_message.Message):
    __slots__ = ("memory", "versions", "audit", "supersedes")
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    AUDIT_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDES_FIELD_NUMBER: _ClassVar[int]
    memory: Entry
    versions: _containers.RepeatedCompositeFieldContainer[MemoryVersion]
    audit: _containers.RepeatedCompositeFieldContainer[AuditRecord]
    supersedes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, memory: _Optional[_Union[Entry, _Mapping]] = ..., versions: _Optional[_Iterable[_Union[MemoryVersion, _Mapping]]] = ..., audit: _Optional[_Iterable[_Union[AuditRecord, _Mapping]]] = ..., supersedes: _Optional[_Iterable[str]] = ...) -> None: ...

class SummarizeMemoriesRequest(_message.Message):
    __slots__ = ("principal", "agent_ids")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., agent_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class SummarizeMemoriesResponse(_message.Message):
    __slots__ = ("counts",)
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    counts: _containers.RepeatedCompositeFieldContainer[MemoryCount]
    def __init__(self, counts: _Optional[_Iterable[_Union[MemoryCount, _Mapping]]] = ...) -> None: ...

class MemoryCount(_message.Message):
    __slots__ = ("agent_id", "scope", "kind", "memories", "last_update_time")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    LAST_UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    scope: MemoryScope
    kind: MemoryKind
    memories: int
    last_update_time: _timestamp_pb2.Timestamp
    def __init__(self, agent_id: _Optional[str] = ..., scope: _Optional[_Union[MemoryScope, str]] = ..., kind: _Optional[_Union[MemoryKind, str]] = ..., memories: _Optional[int] = ..., last_update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetAccountSettingsRequest(_message.Message):
    __slots__ = ("principal",)
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ...) -> None: ...

class GetAccountSettingsResponse(_message.Message):
    __slots__ = ("settings", "usage")
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    settings: AccountSettings
    usage: AccountUsage
    def __init__(self, settings: _Optional[_Union[AccountSettings, _Mapping]] = ..., usage: _Optional[_Union[AccountUsage, _Mapping]] = ...) -> None: ...

class AccountUsage(_message.Message):
    __slots__ = ("memories", "pending_suggestions", "receipts_today")
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    PENDING_SUGGESTIONS_FIELD_NUMBER: _ClassVar[int]
    RECEIPTS_TODAY_FIELD_NUMBER: _ClassVar[int]
    memories: int
    pending_suggestions: int
    receipts_today: int
    def __init__(self, memories: _Optional[int] = ..., pending_suggestions: _Optional[int] = ..., receipts_today: _Optional[int] = ...) -> None: ...

class UpdateAccountSettingsRequest(_message.Message):
    __slots__ = ("principal", "settings", "update_mask")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    settings: AccountSettings
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., settings: _Optional[_Union[AccountSettings, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateAccountSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: AccountSettings
    def __init__(self, settings: _Optional[_Union[AccountSettings, _Mapping]] = ...) -> None: ...

class GetAgentSettingsRequest(_message.Message):
    __slots__ = ("principal",)
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ...) -> None: ...

class GetAgentSettingsResponse(_message.Message):
    __slots__ = ("settings", "account_memory_enabled")
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_MEMORY_ENABLED_FIELD_NUMBER: _ClassVar[int]
    settings: AgentSettings
    account_memory_enabled: bool
    def __init__(self, settings: _Optional[_Union[AgentSettings, _Mapping]] = ..., account_memory_enabled: _Optional[bool] = ...) -> None: ...

class UpdateAgentSettingsRequest(_message.Message):
    __slots__ = ("principal", "settings", "update_mask")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    settings: AgentSettings
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., settings: _Optional[_Union[AgentSettings, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateAgentSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: AgentSettings
    def __init__(self, settings: _Optional[_Union[AgentSettings, _Mapping]] = ...) -> None: ...

class SetAgentSettingsRequest(_message.Message):
    __slots__ = ("principal", "settings")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    settings: AgentSettings
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., settings: _Optional[_Union[AgentSettings, _Mapping]] = ...) -> None: ...

class SetAgentSettingsResponse(_message.Message):
    __slots__ = ("settings",)
    SETTINGS_FIELD_NUMBER: _ClassVar[int]
    settings: AgentSettings
    def __init__(self, settings: _Optional[_Union[AgentSettings, _Mapping]] = ...) -> None: ...
