from agentmemory_client._proto.agentmemory.agent_memory.v1 import agent_memory_service_pb2 as _agent_memory_service_pb2
from agentmemory_client._proto.agentmemory.agent_memory.v1 import learning_service_pb2 as _learning_service_pb2
from agentmemory_client._proto.agentmemory.gateway.v1 import gateway_service_pb2 as _gateway_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListSuggestionsRequest(_message.Message):
    __slots__ = ("caller", "status", "page_size", "page_token")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    status: _learning_service_pb2.SuggestionStatus
    page_size: int
    page_token: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., status: _Optional[_Union[_learning_service_pb2.SuggestionStatus, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListSuggestionsResponse(_message.Message):
    __slots__ = ("suggestions", "next_page_token")
    SUGGESTIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    suggestions: _containers.RepeatedCompositeFieldContainer[_learning_service_pb2.Suggestion]
    next_page_token: str
    def __init__(self, suggestions: _Optional[_Iterable[_Union[_learning_service_pb2.Suggestion, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class AcceptSuggestionRequest(_message.Message):
    __slots__ = ("caller", "suggestion_id", "content")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    suggestion_id: str
    content: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., suggestion_id: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class AcceptSuggestionResponse(_message.Message):
    __slots__ = ("suggestion", "memory", "procedure")
    SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    PROCEDURE_FIELD_NUMBER: _ClassVar[int]
    suggestion: _learning_service_pb2.Suggestion
    memory: _agent_memory_service_pb2.Entry
    procedure: _learning_service_pb2.Procedure
    def __init__(self, suggestion: _Optional[_Union[_learning_service_pb2.Suggestion, _Mapping]] = ..., memory: _Optional[_Union[_agent_memory_service_pb2.Entry, _Mapping]] = ..., procedure: _Optional[_Union[_learning_service_pb2.Procedure, _Mapping]] = ...) -> None: ...

class RejectSuggestionRequest(_message.Message):
    __slots__ = ("caller", "suggestion_id")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_ID_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    suggestion_id: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., suggestion_id: _Optional[str] = ...) -> None: ...

class RejectSuggestionResponse(_message.Message):
    __slots__ = ("suggestion",)
    SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    suggestion: _learning_service_pb2.Suggestion
    def __init__(self, suggestion: _Optional[_Union[_learning_service_pb2.Suggestion, _Mapping]] = ...) -> None: ...

class ListProceduresRequest(_message.Message):
    __slots__ = ("caller", "page_size", "page_token", "include_deleted")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DELETED_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    page_size: int
    page_token: str
    include_deleted: bool
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., include_deleted: _Optional[bool] = ...) -> None: ...

class ListProceduresResponse(_message.Message):
    __slots__ = ("procedures", "next_page_token")
    PROCEDURES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    procedures: _containers.RepeatedCompositeFieldContainer[_learning_service_pb2.Procedure]
    next_page_token: str
    def __init__(self, procedures: _Optional[_Iterable[_Union[_learning_service_pb2.Procedure, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DeleteProcedureRequest(_message.Message):
    __slots__ = ("caller", "procedure_id")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    PROCEDURE_ID_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    procedure_id: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., procedure_id: _Optional[str] = ...) -> None: ...

class DeleteProcedureResponse(_message.Message):
    __slots__ = ("procedure",)
    PROCEDURE_FIELD_NUMBER: _ClassVar[int]
    procedure: _learning_service_pb2.Procedure
    def __init__(self, procedure: _Optional[_Union[_learning_service_pb2.Procedure, _Mapping]] = ...) -> None: ...

class ListLearningAuditRequest(_message.Message):
    __slots__ = ("caller", "page_size", "page_token")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    page_size: int
    page_token: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListLearningAuditResponse(_message.Message):
    __slots__ = ("records", "next_page_token")
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    records: _containers.RepeatedCompositeFieldContainer[_learning_service_pb2.LearningAuditRecord]
    next_page_token: str
    def __init__(self, records: _Optional[_Iterable[_Union[_learning_service_pb2.LearningAuditRecord, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
