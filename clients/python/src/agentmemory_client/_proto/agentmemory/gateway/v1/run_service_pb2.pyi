from agentmemory_client._proto.agentmemory.agent_memory.v1 import learning_service_pb2 as _learning_service_pb2
from agentmemory_client._proto.agentmemory.common.v1 import run_pb2 as _run_pb2
from agentmemory_client._proto.agentmemory.gateway.v1 import gateway_service_pb2 as _gateway_service_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StartRunRequest(_message.Message):
    __slots__ = ("caller", "thread_id", "run_id", "credentials")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    thread_id: str
    run_id: str
    credentials: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ..., credentials: _Optional[_Iterable[str]] = ...) -> None: ...

class StartRunResponse(_message.Message):
    __slots__ = ("run", "deduplicated")
    RUN_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    run: _run_pb2.Run
    deduplicated: bool
    def __init__(self, run: _Optional[_Union[_run_pb2.Run, _Mapping]] = ..., deduplicated: _Optional[bool] = ...) -> None: ...

class FinishRunRequest(_message.Message):
    __slots__ = ("caller", "thread_id", "run_id", "outcome", "credentials")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    CREDENTIALS_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    thread_id: str
    run_id: str
    outcome: _run_pb2.RunOutcome
    credentials: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ..., outcome: _Optional[_Union[_run_pb2.RunOutcome, str]] = ..., credentials: _Optional[_Iterable[str]] = ...) -> None: ...

class FinishRunResponse(_message.Message):
    __slots__ = ("run", "deduplicated")
    RUN_FIELD_NUMBER: _ClassVar[int]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    run: _run_pb2.Run
    deduplicated: bool
    def __init__(self, run: _Optional[_Union[_run_pb2.Run, _Mapping]] = ..., deduplicated: _Optional[bool] = ...) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ("caller", "thread_id", "run_id")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    thread_id: str
    run_id: str
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ...) -> None: ...

class GetRunResponse(_message.Message):
    __slots__ = ("run",)
    RUN_FIELD_NUMBER: _ClassVar[int]
    run: _run_pb2.Run
    def __init__(self, run: _Optional[_Union[_run_pb2.Run, _Mapping]] = ...) -> None: ...

class RecordRunFeedbackRequest(_message.Message):
    __slots__ = ("caller", "thread_id", "run_id", "rating")
    CALLER_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    caller: _gateway_service_pb2.Caller
    thread_id: str
    run_id: str
    rating: _learning_service_pb2.RunRating
    def __init__(self, caller: _Optional[_Union[_gateway_service_pb2.Caller, _Mapping]] = ..., thread_id: _Optional[str] = ..., run_id: _Optional[str] = ..., rating: _Optional[_Union[_learning_service_pb2.RunRating, str]] = ...) -> None: ...

class RecordRunFeedbackResponse(_message.Message):
    __slots__ = ("procedure_ids",)
    PROCEDURE_IDS_FIELD_NUMBER: _ClassVar[int]
    procedure_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, procedure_ids: _Optional[_Iterable[str]] = ...) -> None: ...
