import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RunOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_OUTCOME_UNSPECIFIED: _ClassVar[RunOutcome]
    RUN_OUTCOME_SUCCEEDED: _ClassVar[RunOutcome]
    RUN_OUTCOME_FAILED: _ClassVar[RunOutcome]
    RUN_OUTCOME_CANCELLED: _ClassVar[RunOutcome]
    RUN_OUTCOME_TIMED_OUT: _ClassVar[RunOutcome]

class RunState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_STATE_UNSPECIFIED: _ClassVar[RunState]
    RUN_STATE_OPEN: _ClassVar[RunState]
    RUN_STATE_FINISHED: _ClassVar[RunState]

class RunBoundaryKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_BOUNDARY_KIND_UNSPECIFIED: _ClassVar[RunBoundaryKind]
    RUN_BOUNDARY_KIND_STARTED: _ClassVar[RunBoundaryKind]
    RUN_BOUNDARY_KIND_FINISHED: _ClassVar[RunBoundaryKind]
RUN_OUTCOME_UNSPECIFIED: RunOutcome
RUN_OUTCOME_SUCCEEDED: RunOutcome
RUN_OUTCOME_FAILED: RunOutcome
RUN_OUTCOME_CANCELLED: RunOutcome
RUN_OUTCOME_TIMED_OUT: RunOutcome
RUN_STATE_UNSPECIFIED: RunState
RUN_STATE_OPEN: RunState
RUN_STATE_FINISHED: RunState
RUN_BOUNDARY_KIND_UNSPECIFIED: RunBoundaryKind
RUN_BOUNDARY_KIND_STARTED: RunBoundaryKind
RUN_BOUNDARY_KIND_FINISHED: RunBoundaryKind

class Run(_message.Message):
    __slots__ = ("thread_id", "run_id", "state", "outcome", "after_offset", "last_offset", "start_time", "finish_time")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    AFTER_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LAST_OFFSET_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    FINISH_TIME_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    run_id: str
    state: RunState
    outcome: RunOutcome
    after_offset: int
    last_offset: int
    start_time: _timestamp_pb2.Timestamp
    finish_time: _timestamp_pb2.Timestamp
    def __init__(self, thread_id: _Optional[str] = ..., run_id: _Optional[str] = ..., state: _Optional[_Union[RunState, str]] = ..., outcome: _Optional[_Union[RunOutcome, str]] = ..., after_offset: _Optional[int] = ..., last_offset: _Optional[int] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finish_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RunBoundary(_message.Message):
    __slots__ = ("kind", "run")
    KIND_FIELD_NUMBER: _ClassVar[int]
    RUN_FIELD_NUMBER: _ClassVar[int]
    kind: RunBoundaryKind
    run: Run
    def __init__(self, kind: _Optional[_Union[RunBoundaryKind, str]] = ..., run: _Optional[_Union[Run, _Mapping]] = ...) -> None: ...
