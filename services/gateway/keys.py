"""Credentials: API keys ``am_<id>_<secret>`` and the user tokens they mint.

Who a caller may be is decided here and in ``callers.principal_of``; the request
states an agent and maybe a user, the credential says whether it may:

| credential                   | role          | agents it acts as           | users it acts as              |
|------------------------------|---------------|-----------------------------|-------------------------------|
| key                          | agent, admin  | any of the account's, or    | none: stating or naming a     |
|                              |               | only its bound ``agent_ids``| user is PERMISSION_DENIED     |
|                              |               |                             | (ACT_FOR_USERS_REQUIRED)      |
| key with ``act_for_users``   | agent, admin  | as above                    | any user it states or names   |
| key bound to a ``user_id``   | agent, admin  | as above                    | that user only, stated or not |
| user token (JWT, minutes to  | agent         | its one agent               | its one user                  |
| a day; ``tokens.py``)        |               |                             |                               |

A key fixes its account and role (agent memory decides what each role may
change). Only an ``act_for_users`` key mints user tokens, and a key can create
keys with no more than it has itself (an admin key only; ``act_for_users`` only
from a key that has it; within its own agents and user). Keys created before
the permission model keep what they could do: they are ``act_for_users`` keys.

A key's secret (32 random bytes) is kept as its SHA-256 and compared in constant
time; a key is high-entropy, so a fast hash is enough. A rotation gives the key a
new secret under the same id; the old one works on for the grace period asked for
(maybe none). Verified credentials are trusted for a few seconds without a lookup;
a revocation or rotation is announced (``services.gateway.invalidation``), so every
replica that hears it stops trusting the key, and the tokens it minted, at once,
and one that does not within those seconds. PostgreSQL down is UNAVAILABLE.
"""

from __future__ import annotations

import builtins
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass, replace
from datetime import datetime

import asyncpg
from agentmemory.common.v1 import principal_pb2
from cachetools import TTLCache

from libs.errors import InvalidArgument, NotFound, PermissionDenied, Unauthenticated
from libs.identity import require_id
from libs.invalidations import Invalidations
from libs.postgres import unavailable_when_down
from services.gateway import tokens
from services.gateway.invalidation import API_KEYS
from services.gateway.tokens import MintedToken, UserTokens

PREFIX = "am_"
ROLES = {"agent": principal_pb2.KEY_ROLE_AGENT, "admin": principal_pb2.KEY_ROLE_ADMIN}
MAX_BOUND_AGENTS = 100
MAX_NAME_CHARS = 100
MAX_GRACE_SECONDS = 7 * 24 * 3600
CACHE_SIZE = 10_000  # verified credentials kept; the least recently verified go first


@dataclass(frozen=True)
class Credential:
    """A verified key or user token: who the caller may be."""

    key_id: str  # the key itself, or the key that minted the token
    account_id: str
    role: str  # agent | admin
    act_for_users: bool = False
    user_id: str = ""  # the one user it acts as; "" = none
    agent_ids: tuple[str, ...] = ()  # the agents it may act as; () = any
    token_id: str = ""  # set for a user token
    #: unix time after which it stops working (a token; a rotated secret's grace end)
    expires_at: float | None = None

    @property
    def key_role(self) -> principal_pb2.KeyRole.ValueType:
        return ROLES[self.role]

    @property
    def is_token(self) -> bool:
        return bool(self.token_id)


@dataclass(frozen=True)
class KeySpec:
    """What a new key may do."""

    role: str = "agent"
    act_for_users: bool = False
    user_id: str = ""
    agent_ids: tuple[str, ...] = ()

    def checked(self) -> KeySpec:
        if self.role not in ROLES:
            raise InvalidArgument("role", "must be agent or admin")
        if self.user_id:
            require_id(self.user_id, "user_id")
            if self.act_for_users:
                raise InvalidArgument("act_for_users", "a key bound to one user cannot act for "
                                                       "other users")
        if len(self.agent_ids) > MAX_BOUND_AGENTS:
            raise InvalidArgument("agent_ids", f"at most {MAX_BOUND_AGENTS}")
        for index, agent in enumerate(self.agent_ids):
            require_id(agent, f"agent_ids[{index}]")
        if len(set(self.agent_ids)) != len(self.agent_ids):
            raise InvalidArgument("agent_ids", "each agent at most once")
        return replace(self, agent_ids=tuple(sorted(self.agent_ids)))

    def check_within(self, creator: Credential) -> None:
        """A key creates keys with no more than it has itself."""
        if creator.role != "admin" or creator.is_token:
            raise PermissionDenied("creating keys needs an admin key", reason="ADMIN_REQUIRED")
        if self.act_for_users and not creator.act_for_users:
            raise PermissionDenied("only a key that may act for users creates one that may",
                                   reason="ACT_FOR_USERS_REQUIRED",
                                   metadata={"field": "act_for_users"})
        if creator.agent_ids and not (self.agent_ids and
                                      set(self.agent_ids) <= set(creator.agent_ids)):
            raise PermissionDenied("this key may create keys only for its own agents: "
                                   + ", ".join(creator.agent_ids), reason="AGENT_NOT_ALLOWED",
                                   metadata={"field": "agent_ids"})
        if creator.user_id and self.user_id != creator.user_id:
            raise PermissionDenied(f"this key may create keys only for its user "
                                   f"{creator.user_id}", reason="ACT_FOR_USERS_REQUIRED",
                                   metadata={"field": "user_id"})


@dataclass(frozen=True)
class IssuedKey:
    id: str
    account_id: str
    spec: KeySpec
    key: str  # shown once


@dataclass(frozen=True)
class KeyRecord:
    id: str
    account_id: str
    name: str
    spec: KeySpec
    created_at: datetime
    rotated_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None
    previous_valid_until: datetime | None


@dataclass(frozen=True)
class KeyEvent:
    id: int
    key_id: str
    action: str
    by_key_id: str
    detail: dict
    at: datetime


def _hash(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def _matches(stored: bytes | None, secret: str) -> bool:
    return stored is not None and hmac.compare_digest(bytes(stored), _hash(secret))


def _spec(row: asyncpg.Record) -> KeySpec:
    return KeySpec(row["role"], row["act_for_users"], row["user_id"], tuple(row["agent_ids"]))


def _record(row: asyncpg.Record) -> KeyRecord:
    return KeyRecord(row["id"], row["account_id"], row["name"], _spec(row), row["created_at"],
                     row["rotated_at"], row["revoked_at"], row["last_used_at"],
                     row["previous_valid_until"])


def check_name(name: str) -> str:
    if not name.strip() or len(name) > MAX_NAME_CHARS or not name.isprintable():
        raise InvalidArgument("name", f"1-{MAX_NAME_CHARS} printable characters")
    return name


_COLUMNS = ("id, account_id, name, role, act_for_users, user_id, agent_ids, created_at,"
            " rotated_at, revoked_at, last_used_at, previous_valid_until")
_ACTIVE = ("SELECT account_id, role, act_for_users, user_id, agent_ids, secret_hash,"
           " previous_secret_hash, previous_valid_until FROM api_keys"
           " WHERE id = $1 AND revoked_at IS NULL")
_NOTE_USE = ("UPDATE api_keys SET last_used_at = now() WHERE id = $1"
             " AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')")


class ApiKeys:
    def __init__(self, pool: asyncpg.Pool, invalidations: Invalidations | None = None, *,
                 tokens: UserTokens | None = None, cache_seconds: float = 30.0) -> None:
        self._pool = pool
        self._tokens = tokens
        self._verified: TTLCache[str, Credential] = TTLCache(CACHE_SIZE, cache_seconds,
                                                             timer=time.monotonic)
        self._invalidations = invalidations
        if invalidations is not None:
            invalidations.on(API_KEYS, self._forget, self._verified.clear)

    # -- administration ------------------------------------------------------------

    async def create(self, account_id: str, name: str, spec: KeySpec, *,
                     by: Credential | None = None) -> IssuedKey:
        """A new key; ``by`` is the key asking (None: the operator's command line)."""
        spec = spec.checked()
        if by is not None:
            spec.check_within(by)
        key_id, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
        async with unavailable_when_down(), self._pool.acquire() as connection, \
                connection.transaction():
            await connection.execute(
                "INSERT INTO api_keys (id, account_id, name, secret_hash, role, act_for_users,"
                " user_id, agent_ids) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", key_id,
                account_id, check_name(name), _hash(secret), spec.role, spec.act_for_users,
                spec.user_id, list(spec.agent_ids))
            await _event(connection, account_id, key_id, "created", by,
                         {"name": name, "role": spec.role, "act_for_users": spec.act_for_users,
                          "user_id": spec.user_id, "agent_ids": list(spec.agent_ids)})
        return IssuedKey(key_id, account_id, spec, f"{PREFIX}{key_id}_{secret}")

    async def rotate(self, account_id: str | None, key_id: str, *, grace_seconds: int = 0,
                     by: Credential | None = None) -> IssuedKey:
        """A new secret for the key; the old one works for ``grace_seconds`` more."""
        if not 0 <= grace_seconds <= MAX_GRACE_SECONDS:
            raise InvalidArgument("grace_seconds", f"0-{MAX_GRACE_SECONDS}")
        secret = secrets.token_urlsafe(32)
        async with unavailable_when_down(), self._pool.acquire() as connection, \
                connection.transaction():
            row = await connection.fetchrow(
                "UPDATE api_keys SET previous_secret_hash = secret_hash, secret_hash = $3,"
                " previous_valid_until = now() + make_interval(secs => $4), rotated_at = now()"
                " WHERE id = $1 AND ($2::text IS NULL OR account_id = $2)"
                f" AND revoked_at IS NULL RETURNING {_COLUMNS}",
                key_id, account_id, _hash(secret), grace_seconds)
            if row is None:
                raise NotFound(f"no active key {key_id}", reason="KEY_NOT_FOUND")
            await _event(connection, row["account_id"], key_id, "rotated", by,
                         {"grace_seconds": grace_seconds})
            await connection.execute(f"SELECT pg_notify('{API_KEYS}', $1)", key_id)
        self._forget(key_id)
        return IssuedKey(key_id, row["account_id"], _spec(row), f"{PREFIX}{key_id}_{secret}")

    async def revoke(self, account_id: str | None, key_id: str, *,
                     by: Credential | None = None) -> bool:
        """Whether an active key was revoked (``account_id`` None: any account's)."""
        async with unavailable_when_down(), self._pool.acquire() as connection, \
                connection.transaction():
            row = await connection.fetchrow(
                "UPDATE api_keys SET revoked_at = now() WHERE id = $1"
                " AND ($2::text IS NULL OR account_id = $2) AND revoked_at IS NULL"
                " RETURNING account_id", key_id, account_id)
            if row is not None:
                await _event(connection, row["account_id"], key_id, "revoked", by, {})
                await connection.execute(f"SELECT pg_notify('{API_KEYS}', $1)", key_id)
        self._forget(key_id)
        return row is not None

    async def get(self, account_id: str, key_id: str) -> KeyRecord:
        async with unavailable_when_down():
            row = await self._pool.fetchrow(
                f"SELECT {_COLUMNS} FROM api_keys WHERE account_id = $1 AND id = $2",
                account_id, key_id)
        if row is None:
            raise NotFound(f"no key {key_id}", reason="KEY_NOT_FOUND")
        return _record(row)

    async def list(self, account_id: str) -> list[KeyRecord]:
        async with unavailable_when_down():
            rows = await self._pool.fetch(
                f"SELECT {_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id",
                account_id)
        return [_record(row) for row in rows]

    async def events(self, account_id: str, *, before_id: int | None = None,
                     limit: int = 100) -> builtins.list[KeyEvent]:  # `list` is the method above
        """The account's credential events, newest first."""
        async with unavailable_when_down():
            rows = await self._pool.fetch(
                "SELECT id, key_id, action, by_key_id, detail, at FROM key_events"
                " WHERE account_id = $1 AND ($2::bigint IS NULL OR id < $2)"
                " ORDER BY id DESC LIMIT $3", account_id, before_id, limit)
        return [KeyEvent(r["id"], r["key_id"], r["action"], r["by_key_id"],
                         json.loads(r["detail"]), r["at"]) for r in rows]

    async def mint(self, by: Credential, user_id: str, agent_id: str,
                   seconds: int = 0) -> MintedToken:
        """A user token for one user and agent, minted by an ``act_for_users`` key."""
        if not by.act_for_users or by.is_token:
            raise PermissionDenied("only a key that may act for users mints user tokens",
                                   reason="ACT_FOR_USERS_REQUIRED")
        require_id(user_id, "user_id")
        require_id(agent_id, "agent_id")
        if by.agent_ids and agent_id not in by.agent_ids:
            raise PermissionDenied(f"this key may not act as agent {agent_id}",
                                   reason="AGENT_NOT_ALLOWED", metadata={"field": "agent_id"})
        seconds = seconds or tokens.DEFAULT_SECONDS
        if not 60 <= seconds <= tokens.MAX_SECONDS:
            raise InvalidArgument("ttl_seconds", f"60-{tokens.MAX_SECONDS}; 0: "
                                                 f"{tokens.DEFAULT_SECONDS}")
        minted = self._token_signer().mint(account_id=by.account_id, key_id=by.key_id,
                                           user_id=user_id, agent_id=agent_id, seconds=seconds)
        async with unavailable_when_down(), self._pool.acquire() as connection:
            await _event(connection, by.account_id, by.key_id, "token_minted", by,
                         {"token_id": minted.claims.token_id, "user_id": user_id,
                          "agent_id": agent_id, "seconds": seconds})
        return minted

    def _token_signer(self) -> UserTokens:
        if self._tokens is None:
            raise PermissionDenied("this gateway mints no user tokens", reason="TOKENS_DISABLED")
        return self._tokens

    def _forget(self, key_id: str) -> None:
        for cached in [k for k, v in self._verified.items() if v.key_id == key_id]:
            self._verified.pop(cached, None)

    # -- authentication ------------------------------------------------------------

    async def authenticate(self, authorization: str | None) -> Credential:
        """The credential of an ``authorization: Bearer <key or user token>`` header."""
        if not authorization:
            raise Unauthenticated("an API key or user token is required: authorization: Bearer "
                                  "<key>", reason="API_KEY_MISSING")
        scheme, _, value = authorization.partition(" ")
        value = value.strip()
        is_key = value.startswith(PREFIX)
        if scheme.lower() != "bearer" or not (is_key or tokens.looks_like_token(value)):
            raise Unauthenticated("malformed authorization header: expected Bearer <key>",
                                  reason="API_KEY_INVALID")
        cached = self._verified.get(value)
        if cached is not None and (cached.expires_at is None or cached.expires_at > time.time()):
            return cached
        generation = self._generation()
        async with unavailable_when_down():
            verified = await (self._verify_key(value) if is_key else self._verify_token(value))
            await self._pool.execute(_NOTE_USE, verified.key_id)
        if generation == self._generation():  # not revoked while it was read
            self._verified[value] = verified
        return verified

    async def _verify_key(self, key: str) -> Credential:
        key_id, _, secret = key[len(PREFIX):].partition("_")
        row = await self._pool.fetchrow(_ACTIVE, key_id)
        if row is not None and _matches(row["secret_hash"], secret):
            expires_at = None
        elif row is not None and _matches(row["previous_secret_hash"], secret) and \
                row["previous_valid_until"].timestamp() > time.time():
            expires_at = row["previous_valid_until"].timestamp()
        else:
            raise Unauthenticated("unknown or revoked API key", reason="API_KEY_INVALID")
        spec = _spec(row)
        return Credential(key_id, row["account_id"], spec.role, spec.act_for_users, spec.user_id,
                          spec.agent_ids, expires_at=expires_at)

    async def _verify_token(self, token: str) -> Credential:
        if self._tokens is None:
            raise Unauthenticated("this gateway accepts no user tokens", reason="TOKEN_INVALID")
        claims = self._tokens.verify(token)
        row = await self._pool.fetchrow(_ACTIVE, claims.key_id)
        if row is None or row["account_id"] != claims.account_id or not row["act_for_users"]:
            raise Unauthenticated("the key that minted this user token is revoked",
                                  reason="TOKEN_INVALID")
        return Credential(claims.key_id, claims.account_id, "agent", False, claims.user_id,
                          (claims.agent_id,), token_id=claims.token_id,
                          expires_at=claims.expires_at)

    def _generation(self) -> int:
        return 0 if self._invalidations is None else self._invalidations.generation


async def _event(connection: asyncpg.Connection | asyncpg.pool.PoolConnectionProxy,
                 account_id: str, key_id: str, action: str, by: Credential | None,
                 detail: dict) -> None:
    await connection.execute(
        "INSERT INTO key_events (account_id, key_id, action, by_key_id, detail)"
        " VALUES ($1, $2, $3, $4, $5)", account_id, key_id, action,
        "" if by is None else by.key_id, json.dumps(detail))
