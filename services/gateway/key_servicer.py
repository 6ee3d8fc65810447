"""The gRPC KeyService: an account's API keys and user tokens, managed by its admins
(the permission model is in ``keys.py`` and the proto)."""

from __future__ import annotations

from datetime import UTC, datetime

from agentmemory.common.v1 import principal_pb2
from agentmemory.gateway.v1 import key_service_pb2 as pb
from agentmemory.gateway.v1 import key_service_pb2_grpc as pb_grpc

from libs import page_tokens
from libs.conversions import timestamp
from libs.errors import InvalidArgument, NotFound, PermissionDenied
from libs.identity import require_id
from services.gateway.callers import Callers
from services.gateway.keys import Credential, KeyEvent, KeyRecord, KeySpec

_ROLE_NAMES = {principal_pb2.KEY_ROLE_UNSPECIFIED: "agent", principal_pb2.KEY_ROLE_AGENT: "agent",
               principal_pb2.KEY_ROLE_ADMIN: "admin"}
_ROLES = {"agent": principal_pb2.KEY_ROLE_AGENT, "admin": principal_pb2.KEY_ROLE_ADMIN}
_ACTIONS = {"created": pb.KEY_ACTION_CREATED, "rotated": pb.KEY_ACTION_ROTATED,
            "revoked": pb.KEY_ACTION_REVOKED, "token_minted": pb.KEY_ACTION_TOKEN_MINTED}
MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE = 500, 100


def key_message(record: KeyRecord) -> pb.ApiKey:
    spec = record.spec
    return pb.ApiKey(
        id=record.id, name=record.name, role=_ROLES[spec.role],
        act_for_users=spec.act_for_users, user_id=spec.user_id, agent_ids=spec.agent_ids,
        create_time=timestamp(record.created_at), rotate_time=timestamp(record.rotated_at),
        revoke_time=timestamp(record.revoked_at), last_use_time=timestamp(record.last_used_at),
        previous_secret_expire_time=timestamp(record.previous_valid_until))


def _event_message(event: KeyEvent) -> pb.KeyEvent:
    return pb.KeyEvent(key_id=event.key_id, action=_ACTIONS[event.action],
                       by_key_id=event.by_key_id, time=timestamp(event.at),
                       detail={k: v if isinstance(v, str) else _text(v)
                               for k, v in event.detail.items()})


def _text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def _spec(request: pb.CreateKeyRequest) -> KeySpec:
    if request.role not in _ROLE_NAMES:
        raise InvalidArgument("role", "must be KEY_ROLE_AGENT or KEY_ROLE_ADMIN")
    return KeySpec(_ROLE_NAMES[request.role], request.act_for_users, request.user_id,
                   tuple(request.agent_ids))


def _require_admin(credential: Credential) -> None:
    if credential.role != "admin" or credential.is_token:
        raise PermissionDenied("managing keys needs an admin key", reason="ADMIN_REQUIRED")


class KeyServicer(pb_grpc.KeyServiceServicer):
    def __init__(self, callers: Callers) -> None:
        self._callers = callers
        self._keys = callers.keys

    async def _admin(self, context) -> Credential:
        credential = await self._callers.credential(context)
        _require_admin(credential)
        return credential

    async def CreateKey(self, request: pb.CreateKeyRequest, context) -> pb.CreateKeyResponse:
        admin = await self._admin(context)
        issued = await self._keys.create(admin.account_id, request.name, _spec(request), by=admin)
        record = await self._keys.get(admin.account_id, issued.id)
        return pb.CreateKeyResponse(key=key_message(record), secret=issued.key)

    async def ListKeys(self, request: pb.ListKeysRequest, context) -> pb.ListKeysResponse:
        admin = await self._admin(context)
        return pb.ListKeysResponse(keys=[key_message(r) for r in
                                         await self._keys.list(admin.account_id)])

    async def RotateKey(self, request: pb.RotateKeyRequest, context) -> pb.RotateKeyResponse:
        admin = await self._admin(context)
        key_id = require_id(request.key_id, "key_id")
        issued = await self._keys.rotate(admin.account_id, key_id,
                                         grace_seconds=request.grace_seconds, by=admin)
        return pb.RotateKeyResponse(key=key_message(await self._keys.get(admin.account_id, key_id)),
                                    secret=issued.key)

    async def RevokeKey(self, request: pb.RevokeKeyRequest, context) -> pb.RevokeKeyResponse:
        admin = await self._admin(context)
        key_id = require_id(request.key_id, "key_id")
        if not await self._keys.revoke(admin.account_id, key_id, by=admin):
            raise NotFound(f"no active key {key_id}", reason="KEY_NOT_FOUND")
        return pb.RevokeKeyResponse(key=key_message(await self._keys.get(admin.account_id, key_id)))

    async def MintUserToken(self, request: pb.MintUserTokenRequest,
                            context) -> pb.MintUserTokenResponse:
        credential = await self._callers.credential(context)
        minted = await self._keys.mint(credential, request.user_id, request.agent_id,
                                       request.ttl_seconds)
        expires = datetime.fromtimestamp(minted.claims.expires_at, UTC)
        return pb.MintUserTokenResponse(token=minted.token, expire_time=timestamp(expires),
                                        token_id=minted.claims.token_id)

    async def ListKeyEvents(self, request: pb.ListKeyEventsRequest,
                            context) -> pb.ListKeyEventsResponse:
        admin = await self._admin(context)
        if not 0 <= request.page_size <= MAX_PAGE_SIZE:
            raise InvalidArgument("page_size", f"must be 1-{MAX_PAGE_SIZE} (0: "
                                               f"{DEFAULT_PAGE_SIZE})")
        size = request.page_size or DEFAULT_PAGE_SIZE
        before = page_tokens.id_position(request.page_token)
        events = await self._keys.events(admin.account_id, before_id=before, limit=size)
        token = page_tokens.next_token(events, size, lambda last: page_tokens.id_token(last.id))
        return pb.ListKeyEventsResponse(events=[_event_message(e) for e in events],
                                        next_page_token=token)


