import datetime

from agentmemory_client._proto.agentmemory.common.v1 import principal_pb2 as _principal_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KeyAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KEY_ACTION_UNSPECIFIED: _ClassVar[KeyAction]
    KEY_ACTION_CREATED: _ClassVar[KeyAction]
    KEY_ACTION_ROTATED: _ClassVar[KeyAction]
    KEY_ACTION_REVOKED: _ClassVar[KeyAction]
    KEY_ACTION_TOKEN_MINTED: _ClassVar[KeyAction]
KEY_ACTION_UNSPECIFIED: KeyAction
KEY_ACTION_CREATED: KeyAction
KEY_ACTION_ROTATED: KeyAction
KEY_ACTION_REVOKED: KeyAction
KEY_ACTION_TOKEN_MINTED: KeyAction

class ApiKey(_message.Message):
    __slots__ = ("id", "name", "role", "act_for_users", "user_id", "agent_ids", "create_time", "rotate_time", "revoke_time", "last_use_time", "previous_secret_expire_time")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    ACT_FOR_USERS_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    ROTATE_TIME_FIELD_NUMBER: _ClassVar[int]
    REVOKE_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_USE_TIME_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_SECRET_EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    role: _principal_pb2.KeyRole
    act_for_users: bool
    user_id: str
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    create_time: _timestamp_pb2.Timestamp
    rotate_time: _timestamp_pb2.Timestamp
    revoke_time: _timestamp_pb2.Timestamp
    last_use_time: _timestamp_pb2.Timestamp
    previous_secret_expire_time: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., role: _Optional[_Union[_principal_pb2.KeyRole, str]] = ..., act_for_users: _Optional[bool] = ..., user_id: _Optional[str] = ..., agent_ids: _Optional[_Iterable[str]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rotate_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., revoke_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_use_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., previous_secret_expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateKeyRequest(_message.Message):
    __slots__ = ("name", "role", "act_for_users", "user_id", "agent_ids")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    ACT_FOR_USERS_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    name: str
    role: _principal_pb2.KeyRole
    act_for_users: bool
    user_id: str
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, name: _Optional[str] = ..., role: _Optional[_Union[_principal_pb2.KeyRole, str]] = ..., act_for_users: _Optional[bool] = ..., user_id: _Optional[str] = ..., agent_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class CreateKeyResponse(_message.Message):
    __slots__ = ("key", "secret")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    key: ApiKey
    secret: str
    def __init__(self, key: _Optional[_Union[ApiKey, _Mapping]] = ..., secret: _Optional[str] = ...) -> None: ...

class ListKeysRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListKeysResponse(_message.Message):
    __slots__ = ("keys",)
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[ApiKey]
    def __init__(self, keys: _Optional[_Iterable[_Union[ApiKey, _Mapping]]] = ...) -> None: ...

class RotateKeyRequest(_message.Message):
    __slots__ = ("key_id", "grace_seconds")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    GRACE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    grace_seconds: int
    def __init__(self, key_id: _Optional[str] = ..., grace_seconds: _Optional[int] = ...) -> None: ...

class RotateKeyResponse(_message.Message):
    __slots__ = ("key", "secret")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SECRET_FIELD_NUMBER: _ClassVar[int]
    key: ApiKey
    secret: str
    def __init__(self, key: _Optional[_Union[ApiKey, _Mapping]] = ..., secret: _Optional[str] = ...) -> None: ...

class RevokeKeyRequest(_message.Message):
    __slots__ = ("key_id",)
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    def __init__(self, key_id: _Optional[str] = ...) -> None: ...

class RevokeKeyResponse(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: ApiKey
    def __init__(self, key: _Optional[_Union[ApiKey, _Mapping]] = ...) -> None: ...

class MintUserTokenRequest(_message.Message):
    __slots__ = ("user_id", "agent_id", "ttl_seconds")
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TTL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    user_id: str
    agent_id: str
    ttl_seconds: int
    def __init__(self, user_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., ttl_seconds: _Optional[int] = ...) -> None: ...

class MintUserTokenResponse(_message.Message):
    __slots__ = ("token", "expire_time", "token_id")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    EXPIRE_TIME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_ID_FIELD_NUMBER: _ClassVar[int]
    token: str
    expire_time: _timestamp_pb2.Timestamp
    token_id: str
    def __init__(self, token: _Optional[str] = ..., expire_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., token_id: _Optional[str] = ...) -> None: ...

class KeyEvent(_message.Message):
    __slots__ = ("key_id", "action", "by_key_id", "time", "detail")
    class DetailEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    BY_KEY_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    action: KeyAction
    by_key_id: str
    time: _timestamp_pb2.Timestamp
    detail: _containers.ScalarMap[str, str]
    def __init__(self, key_id: _Optional[str] = ..., action: _Optional[_Union[KeyAction, str]] = ..., by_key_id: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., detail: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ListKeyEventsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListKeyEventsResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[KeyEvent]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[KeyEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
