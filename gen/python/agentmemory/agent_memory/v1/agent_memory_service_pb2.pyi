import datetime

from agentmemory.common.v1 import principal_pb2 as _principal_pb2
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

class AgentSettings(_message.Message):
    __slots__ = ("memory_bound",)
    MEMORY_BOUND_FIELD_NUMBER: _ClassVar[int]
    memory_bound: bool
    def __init__(self, memory_bound: _Optional[bool] = ...) -> None: ...

class Source(_message.Message):
    __slots__ = ("kind", "thread_id", "message_ids")
    KIND_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_IDS_FIELD_NUMBER: _ClassVar[int]
    kind: SourceKind
    thread_id: str
    message_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, kind: _Optional[_Union[SourceKind, str]] = ..., thread_id: _Optional[str] = ..., message_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class Entry(_message.Message):
    __slots__ = ("id", "key", "content", "category", "visibility", "importance", "content_hash", "expires_at", "recall_count", "last_recalled_at", "created_at", "updated_at", "user_id", "source")
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
    def __init__(self, id: _Optional[str] = ..., key: _Optional[str] = ..., content: _Optional[str] = ..., category: _Optional[_Union[Category, str]] = ..., visibility: _Optional[_Union[Visibility, str]] = ..., importance: _Optional[float] = ..., content_hash: _Optional[str] = ..., expires_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., recall_count: _Optional[int] = ..., last_recalled_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., user_id: _Optional[str] = ..., source: _Optional[_Union[Source, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("principal", "query", "limit", "categories")
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CATEGORIES_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    query: str
    limit: int
    categories: _containers.RepeatedScalarFieldContainer[Category]
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ..., query: _Optional[str] = ..., limit: _Optional[int] = ..., categories: _Optional[_Iterable[_Union[Category, str]]] = ...) -> None: ...

class RecalledEntry(_message.Message):
    __slots__ = ("entry", "score")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    entry: Entry
    score: float
    def __init__(self, entry: _Optional[_Union[Entry, _Mapping]] = ..., score: _Optional[float] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("entries", "fallback")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[RecalledEntry]
    fallback: bool
    def __init__(self, entries: _Optional[_Iterable[_Union[RecalledEntry, _Mapping]]] = ..., fallback: _Optional[bool] = ...) -> None: ...

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
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[Entry]
    def __init__(self, entries: _Optional[_Iterable[_Union[Entry, _Mapping]]] = ...) -> None: ...

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
    __slots__ = ("expired", "decayed")
    EXPIRED_FIELD_NUMBER: _ClassVar[int]
    DECAYED_FIELD_NUMBER: _ClassVar[int]
    expired: int
    decayed: int
    def __init__(self, expired: _Optional[int] = ..., decayed: _Optional[int] = ...) -> None: ...

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

class GetAgentSettingsRequest(_message.Message):
    __slots__ = ("principal",)
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    principal: _principal_pb2.Principal
    def __init__(self, principal: _Optional[_Union[_principal_pb2.Principal, _Mapping]] = ...) -> None: ...

class GetAgentSettingsResponse(_message.Message):
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
