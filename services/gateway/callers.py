"""Who calls the gateway: the credential's account and role, and the agent and user
the request states, as far as the credential allows (the table in ``keys.py``).

Every surface builds its principal here, so every call agent memory receives
through the gateway carries the key's id, role and ``act_for_users`` (the audit
trail and the permissions read them), and no request is anyone the credential may
not be.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentmemory.gateway.v1 import gateway_service_pb2 as pb

from libs.errors import PermissionDenied
from libs.identity import DEFAULT_ENVIRONMENT, Principal, require_id
from services.gateway.accounts import Accounts
from services.gateway.keys import ApiKeys, Credential


def principal_of(credential: Credential, caller: pb.Caller, *,
                 agent_required: bool = True) -> Principal:
    return Principal(
        account_id=credential.account_id,
        agent_id=agent_of(credential, caller.agent_id, required=agent_required),
        user_id=user_of(credential, caller.user_id) or None,
        environment=(require_id(caller.environment, "caller.environment")
                     if caller.environment else DEFAULT_ENVIRONMENT),
        key_id=credential.key_id, role=credential.key_role,
        act_for_users=credential.act_for_users)


def agent_of(credential: Credential, stated: str, field: str = "caller.agent_id", *,
             required: bool = True) -> str:
    """The stated agent, if the credential may act as it; a credential bound to one
    agent acts as that one when none is stated. Not ``required``: "" when none is
    stated (a call over the account's and the user's pools, no agent's)."""
    bound = credential.agent_ids
    if not stated and len(bound) == 1:
        return bound[0]
    if not stated and not required:
        return ""
    agent = require_id(stated, field)
    if bound and agent not in bound:
        raise PermissionDenied(f"this credential may not act as agent {agent} (it may act as "
                               f"{', '.join(bound)})", reason="AGENT_NOT_ALLOWED",
                               metadata={"field": field})
    return agent


def agents_of(credential: Credential, stated: Sequence[str],
              field: str = "agent_ids") -> list[str]:
    """The agents a call over several agents covers: the stated ones, if the credential
    may act as each; none stated, the agents it is bound to ([]: every agent)."""
    if not stated:
        return list(credential.agent_ids)
    return [agent_of(credential, agent, f"{field}[{i}]") for i, agent in enumerate(stated)]


def user_of(credential: Credential, stated: str, field: str = "caller.user_id") -> str:
    """The user the call acts as ("" for none): the credential's own user, or the
    stated one if the credential may act for users."""
    if stated:
        require_id(stated, field)
    if credential.user_id:
        if stated and stated != credential.user_id:
            raise act_for_users_required(field, f"this credential acts as user "
                                                f"{credential.user_id} only")
        return credential.user_id
    if stated and not credential.act_for_users:
        raise act_for_users_required(field, "stating a user needs a key with act_for_users "
                                            "(or a user token for that user)")
    return stated


def act_for_users_required(field: str, why: str) -> PermissionDenied:
    return PermissionDenied(f"{field}: {why}", reason="ACT_FOR_USERS_REQUIRED",
                            metadata={"field": field})


def check_named_user(principal: Principal, named: str, field: str) -> None:
    """A request field naming a user (RetrieveContext ``user_id``, ``search_memory``'s
    ``userId``): another user than the caller's own needs ``act_for_users``."""
    if named and named != principal.user_id and not principal.act_for_users:
        raise act_for_users_required(field, "naming a user other than the caller's own needs "
                                            "a key with act_for_users")


class Callers:
    """Every servicer's door: the call's credential, the principal it may be, and an
    environment the account has."""

    def __init__(self, keys: ApiKeys, accounts: Accounts) -> None:
        self.keys = keys
        self.accounts = accounts

    async def credential(self, context) -> Credential:
        """The credential of a call (``authorization`` metadata, over HTTP its header)."""
        metadata = dict(context.invocation_metadata() or ())
        return await self.keys.authenticate(metadata.get("authorization"))

    async def principal(self, context, caller: pb.Caller, *,
                        agent_required: bool = True) -> Principal:
        return (await self.identify(context, caller, agent_required=agent_required))[1]

    async def identify(self, context, caller: pb.Caller, *,
                       agent_required: bool = True) -> tuple[Credential, Principal]:
        """The call's credential and the principal it may be."""
        credential = await self.credential(context)
        principal = principal_of(credential, caller, agent_required=agent_required)
        await self.accounts.check_environment(principal)
        return credential, principal

