"""API keys: ``am_<id>_<secret>``, created by an operator, stored as a hash.

The id finds the row; the secret (32 random bytes) is compared by its SHA-256,
in constant time. A key is high-entropy, so a fast hash is enough. Verified
keys are trusted for a few seconds without a lookup.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

import asyncpg

from libs.errors import Unauthenticated

PREFIX = "am_"


@dataclass(frozen=True)
class IssuedKey:
    id: str
    account_id: str
    key: str  # shown once


def _hash(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


class ApiKeys:
    def __init__(self, pool: asyncpg.Pool, *, cache_seconds: float = 30.0) -> None:
        self._pool = pool
        self._cache_seconds = cache_seconds
        self._verified: dict[str, tuple[str, float]] = {}

    async def create(self, account_id: str, name: str) -> IssuedKey:
        key_id = secrets.token_hex(6)
        secret = secrets.token_urlsafe(32)
        await self._pool.execute(
            "INSERT INTO api_keys (id, account_id, name, secret_hash) VALUES ($1, $2, $3, $4)",
            key_id, account_id, name, _hash(secret))
        return IssuedKey(key_id, account_id, f"{PREFIX}{key_id}_{secret}")

    async def revoke(self, key_id: str) -> bool:
        status = await self._pool.execute(
            "UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL", key_id)
        self._verified = {k: v for k, v in self._verified.items() if not k.startswith(
            f"{PREFIX}{key_id}_")}
        return status.endswith(" 1")

    async def list(self, account_id: str) -> list[asyncpg.Record]:
        return await self._pool.fetch(
            "SELECT id, name, created_at, revoked_at FROM api_keys WHERE account_id = $1"
            " ORDER BY created_at", account_id)

    async def account_of(self, authorization: str | None) -> str:
        """The account an ``authorization: Bearer <key>`` header belongs to."""
        if not authorization:
            raise Unauthenticated("an API key is required: authorization: Bearer <key>",
                                  reason="API_KEY_MISSING")
        scheme, _, key = authorization.partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key.startswith(PREFIX):
            raise Unauthenticated("malformed authorization header", reason="API_KEY_INVALID")
        cached = self._verified.get(key)
        if cached and time.monotonic() - cached[1] < self._cache_seconds:
            return cached[0]
        key_id, _, secret = key[len(PREFIX):].partition("_")
        row = await self._pool.fetchrow(
            "SELECT account_id, secret_hash FROM api_keys WHERE id = $1 AND revoked_at IS NULL",
            key_id)
        if row is None or not hmac.compare_digest(bytes(row["secret_hash"]), _hash(secret)):
            raise Unauthenticated("unknown or revoked API key", reason="API_KEY_INVALID")
        self._verified[key] = (row["account_id"], time.monotonic())
        return row["account_id"]
