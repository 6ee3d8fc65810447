"""Who calls the gateway: the API key's account and role, the rest as stated.

Every surface builds its principal here, so every call agent memory receives
through the gateway carries the key's id and role (the audit trail and the
permissions read them).
"""

from __future__ import annotations

from dataclasses import replace

from agentmemory.gateway.v1 import gateway_service_pb2 as pb

from libs.identity import Principal
from services.gateway import conversions
from services.gateway.keys import ApiKey, ApiKeys


def principal_of(key: ApiKey, caller: pb.Caller) -> Principal:
    return replace(conversions.principal(key.account_id, caller), key_id=key.id,
                   role=key.key_role)


async def authenticate(keys: ApiKeys, context, caller: pb.Caller) -> Principal:
    """The principal of a gRPC call (``authorization`` metadata)."""
    metadata = dict(context.invocation_metadata() or ())
    return principal_of(await keys.authenticate(metadata.get("authorization")), caller)
