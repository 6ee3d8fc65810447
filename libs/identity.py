"""Identifiers and the caller's principal, validated the same way everywhere."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentmemory.common.v1 import principal_pb2

from libs.errors import InvalidArgument

ID_PATTERN = re.compile(r"[A-Za-z0-9._:@+-]{1,128}")
# Ids become object-store path segments (``accounts/{account}/.../summary.json``):
# these two would name the segment itself or its parent.
_PATH_ALIASES = {".", ".."}
DEFAULT_ENVIRONMENT = "default"


def require_id(value: str, field: str) -> str:
    """``value`` if it is a valid identifier; otherwise INVALID_ARGUMENT naming ``field``."""
    if not value:
        raise InvalidArgument(field, "required")
    if not ID_PATTERN.fullmatch(value):
        raise InvalidArgument(field, "must be 1-128 characters of A-Z a-z 0-9 . _ : @ + -")
    if value in _PATH_ALIASES:
        raise InvalidArgument(field, f"{value!r} is not a valid id (it names a path, not a segment)")
    return value


@dataclass(frozen=True)
class Principal:
    account_id: str
    agent_id: str
    user_id: str | None
    environment: str
    # Set by the gateway from the API key (the audit trail and agent memory's
    # permissions read them); empty/unspecified for platform-internal callers.
    key_id: str = ""
    role: principal_pb2.KeyRole.ValueType = principal_pb2.KEY_ROLE_UNSPECIFIED
    #: May name a user other than its own (the credential's ``act_for_users``).
    act_for_users: bool = False

    def to_proto(self) -> principal_pb2.Principal:
        return principal_pb2.Principal(
            account_id=self.account_id,
            agent_id=self.agent_id,
            user_id=self.user_id or "",
            environment=self.environment,
            key_id=self.key_id,
            role=self.role,
            act_for_users=self.act_for_users,
        )


def parse_principal(message: principal_pb2.Principal, field: str = "principal", *,
                    agent_required: bool = True) -> Principal:
    """``agent_required`` False: a principal of no agent (retrieval over the account's
    and the user's pools only, seed 002 without ``applicationId``)."""
    return Principal(
        account_id=require_id(message.account_id, f"{field}.account_id"),
        agent_id=(require_id(message.agent_id, f"{field}.agent_id")
                  if agent_required or message.agent_id else ""),
        user_id=require_id(message.user_id, f"{field}.user_id") if message.user_id else None,
        environment=(
            require_id(message.environment, f"{field}.environment")
            if message.environment
            else DEFAULT_ENVIRONMENT
        ),
        key_id=require_id(message.key_id, f"{field}.key_id") if message.key_id else "",
        role=_role(message.role, f"{field}.role"),
        act_for_users=message.act_for_users,
    )


def _role(value: principal_pb2.KeyRole.ValueType, field: str) -> principal_pb2.KeyRole.ValueType:
    if value not in principal_pb2.KeyRole.values():
        raise InvalidArgument(field, "unknown role")
    return value
