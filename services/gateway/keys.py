"""API keys: ``am_<id>_<secret>``, created by an operator, stored as a hash.

The id finds the row; the secret (32 random bytes) is compared by its SHA-256,
in constant time. A key is high-entropy, so a fast hash is enough. Verified
keys are trusted for a few seconds without a lookup; a revocation is announced
(``services.gateway.invalidation``), so every replica that hears it stops
trusting the key at once, and one that does not within those seconds.

A key fixes its account and its role: ``agent`` (an agent or application) or
``admin`` (an account administrator). Agent memory decides what each role may
change; the gateway only stamps the role on every principal it sends.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

import asyncpg
from agentmemory.common.v1 import principal_pb2
from cachetools import TTLCache

from libs.errors import InvalidArgument, Unauthenticated
from libs.invalidations import Invalidations
from services.gateway.invalidation import API_KEYS

PREFIX = "am_"
ROLES = {"agent": principal_pb2.KEY_ROLE_AGENT, "admin": principal_pb2.KEY_ROLE_ADMIN}


@dataclass(frozen=True)
class IssuedKey:
    id: str
    account_id: str
    role: str
    key: str  # shown once


@dataclass(frozen=True)
class ApiKey:
    """A verified key: who the caller is."""

    id: str
    account_id: str
    role: str  # agent | admin

    @property
    def key_role(self) -> int:
        return ROLES[self.role]


def _hash(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


CACHE_SIZE = 10_000  # verified keys kept; the least recently verified go first


class ApiKeys:
    def __init__(self, pool: asyncpg.Pool, invalidations: Invalidations | None = None, *,
                 cache_seconds: float = 30.0) -> None:
        self._pool = pool
        self._verified: TTLCache[str, ApiKey] = TTLCache(CACHE_SIZE, cache_seconds,
                                                         timer=time.monotonic)
        self._invalidations = invalidations
        if invalidations is not None:
            invalidations.on(API_KEYS, self._forget, self._verified.clear)

    async def create(self, account_id: str, name: str, role: str) -> IssuedKey:
        if role not in ROLES:
            raise InvalidArgument("role", "must be agent or admin")
        key_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        await self._pool.execute(
            "INSERT INTO api_keys (id, account_id, name, secret_hash, role)"
            " VALUES ($1, $2, $3, $4, $5)", key_id, account_id, name, _hash(secret), role)
        return IssuedKey(key_id, account_id, role, f"{PREFIX}{key_id}_{secret}")

    async def revoke(self, key_id: str) -> bool:
        revoked = await self._pool.fetch(
            "WITH revoked AS (UPDATE api_keys SET revoked_at = now() WHERE id = $1"
            f" AND revoked_at IS NULL RETURNING id) SELECT pg_notify('{API_KEYS}', id)"
            " FROM revoked", key_id)
        self._forget(key_id)
        return len(revoked) == 1

    def _forget(self, key_id: str) -> None:
        for key in [k for k in self._verified if k.startswith(f"{PREFIX}{key_id}_")]:
            del self._verified[key]

    async def list(self, account_id: str) -> list[asyncpg.Record]:
        return await self._pool.fetch(
            "SELECT id, name, role, created_at, revoked_at FROM api_keys WHERE account_id = $1"
            " ORDER BY created_at", account_id)

    async def authenticate(self, authorization: str | None) -> ApiKey:
        """The key of an ``authorization: Bearer <key>`` header."""
        if not authorization:
            raise Unauthenticated("an API key is required: authorization: Bearer <key>",
                                  reason="API_KEY_MISSING")
        scheme, _, key = authorization.partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key.startswith(PREFIX):
            raise Unauthenticated("malformed authorization header", reason="API_KEY_INVALID")
        cached = self._verified.get(key)
        if cached is not None:
            return cached
        key_id, _, secret = key[len(PREFIX):].partition("_")
        generation = self._generation()
        row = await self._pool.fetchrow(
            "SELECT account_id, role, secret_hash FROM api_keys WHERE id = $1"
            " AND revoked_at IS NULL", key_id)
        if row is None or not hmac.compare_digest(bytes(row["secret_hash"]), _hash(secret)):
            raise Unauthenticated("unknown or revoked API key", reason="API_KEY_INVALID")
        verified = ApiKey(key_id, row["account_id"], row["role"])
        if generation == self._generation():  # not revoked while it was read
            self._verified[key] = verified
        return verified

    def _generation(self) -> int:
        return 0 if self._invalidations is None else self._invalidations.generation
