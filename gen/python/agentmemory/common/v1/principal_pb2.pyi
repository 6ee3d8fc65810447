from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class KeyRole(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    KEY_ROLE_UNSPECIFIED: _ClassVar[KeyRole]
    KEY_ROLE_AGENT: _ClassVar[KeyRole]
    KEY_ROLE_ADMIN: _ClassVar[KeyRole]
    KEY_ROLE_OPERATOR: _ClassVar[KeyRole]

class Surface(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SURFACE_UNSPECIFIED: _ClassVar[Surface]
    SURFACE_AGENT: _ClassVar[Surface]
    SURFACE_MCP_GATEWAY: _ClassVar[Surface]

class Capability(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CAPABILITY_UNSPECIFIED: _ClassVar[Capability]
    CAPABILITY_MEMORY: _ClassVar[Capability]
KEY_ROLE_UNSPECIFIED: KeyRole
KEY_ROLE_AGENT: KeyRole
KEY_ROLE_ADMIN: KeyRole
KEY_ROLE_OPERATOR: KeyRole
SURFACE_UNSPECIFIED: Surface
SURFACE_AGENT: Surface
SURFACE_MCP_GATEWAY: Surface
CAPABILITY_UNSPECIFIED: Capability
CAPABILITY_MEMORY: Capability

class Principal(_message.Message):
    __slots__ = ("account_id", "agent_id", "user_id", "environment", "key_id", "role", "act_for_users")
    ACCOUNT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    ENVIRONMENT_FIELD_NUMBER: _ClassVar[int]
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    ACT_FOR_USERS_FIELD_NUMBER: _ClassVar[int]
    account_id: str
    agent_id: str
    user_id: str
    environment: str
    key_id: str
    role: KeyRole
    act_for_users: bool
    def __init__(self, account_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., user_id: _Optional[str] = ..., environment: _Optional[str] = ..., key_id: _Optional[str] = ..., role: _Optional[_Union[KeyRole, str]] = ..., act_for_users: _Optional[bool] = ...) -> None: ...
