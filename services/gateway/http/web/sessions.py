"""Sessions of the memory library page, kept server-side in the gateway's PostgreSQL.

A person signs in with an API key; the page then acts with that key, so every
action is authenticated and checked exactly as the same gRPC call would be.

- The cookie is ``<sid>.<mac>``: a session id of 32 random bytes and its
  HMAC-SHA256 under ``GATEWAY_SESSION_SECRET`` (a cookie not made here is
  refused before any lookup). HttpOnly, SameSite=Strict (no cross-site request
  carries it, and the page is never meant to be entered by a link from
  elsewhere with a session), Secure when the page is served over https,
  scoped to ``/a/<account>/``.
- The row is found by SHA-256(sid): the table names no live cookie. It holds
  the API key sealed (AES-GCM) under a key derived from both the secret and the
  sid, so neither a database dump nor the secret alone yields an API key; the
  key is never in the cookie and never logged.
- The CSRF token of a session is HMAC(secret, "csrf" | sid): one per session,
  checked on every POST; another session's token does not pass.
- Signing in always makes a new session id and deletes the one the browser
  held (session fixation). The sign-in form has its own token, double-submitted
  in a short-lived signed cookie, so a forged cross-site sign-in fails too.
- Signing out deletes the row: the cookie is dead at once, everywhere.

With an empty secret, each process draws a random one at start: sessions then
do not survive a restart and one replica cannot read another's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import asyncpg
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from libs.settings import Secret, SettingsError

MIN_SECRET_CHARS = 32
_NONCE_BYTES = 12


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclass(frozen=True)
class Session:
    sid: str
    account_id: str
    api_key: Secret = field(repr=False)
    agent_id: str
    user_id: str
    expires_at: datetime

    @property
    def authorization(self) -> str:
        return f"Bearer {self.api_key.reveal()}"


class Sessions:
    def __init__(self, pool: asyncpg.Pool, secret: Secret, *, max_age_seconds: int) -> None:
        value = secret.reveal()
        if value and len(value) < MIN_SECRET_CHARS:
            raise SettingsError(f"GATEWAY_SESSION_SECRET: at least {MIN_SECRET_CHARS} characters")
        self._secret = value.encode() if value else os.urandom(32)
        self._pool = pool
        self.max_age_seconds = max_age_seconds

    def _mac(self, purpose: str, value: str) -> bytes:
        return hmac.new(self._secret, f"{purpose}|{value}".encode(), hashlib.sha256).digest()

    def _aead(self, sid: str) -> AESGCM:
        return AESGCM(self._mac("seal", sid))

    # -- the session cookie --------------------------------------------------------

    def cookie_value(self, session: Session) -> str:
        return f"{session.sid}.{_b64(self._mac('cookie', session.sid))}"

    def _sid(self, cookie: str | None) -> str | None:
        sid, _, mac = (cookie or "").partition(".")
        if not sid or not hmac.compare_digest(mac, _b64(self._mac("cookie", sid))):
            return None
        return sid

    def csrf_token(self, session: Session) -> str:
        return _b64(self._mac("csrf", session.sid))

    def csrf_ok(self, session: Session, token: str | None) -> bool:
        return token is not None and hmac.compare_digest(token, self.csrf_token(session))

    # -- the sign-in form's own token (double submit) ------------------------------

    def sign_in_pair(self) -> tuple[str, str]:
        """(cookie value, form token) for one sign-in form."""
        nonce = secrets.token_urlsafe(24)
        return f"{nonce}.{_b64(self._mac('sign-in', nonce))}", nonce

    def sign_in_ok(self, cookie: str | None, token: str | None) -> bool:
        nonce, _, mac = (cookie or "").partition(".")
        return bool(nonce) and token is not None and hmac.compare_digest(
            mac, _b64(self._mac("sign-in", nonce))) and hmac.compare_digest(nonce, token)

    # -- the store -----------------------------------------------------------------

    async def create(self, account_id: str, api_key: str, agent_id: str, user_id: str, *,
                     replacing: str | None = None, not_after: datetime | None = None) -> Session:
        """A new session, ending by ``not_after`` if given (a user token's expiry); the
        one the browser held (``replacing``, its cookie) is deleted."""
        sid = secrets.token_urlsafe(32)
        nonce = os.urandom(_NONCE_BYTES)
        sealed = nonce + self._aead(sid).encrypt(nonce, api_key.encode(), account_id.encode())
        expires_at = datetime.now(UTC) + timedelta(seconds=self.max_age_seconds)
        if not_after is not None:
            expires_at = min(expires_at, not_after)
        old = self._sid(replacing)
        async with self._pool.acquire() as connection, connection.transaction():
            await connection.execute("DELETE FROM web_sessions WHERE expires_at < now()")
            if old:
                await connection.execute("DELETE FROM web_sessions WHERE id_hash = $1",
                                         _row_id(old))
            await connection.execute(
                "INSERT INTO web_sessions (id_hash, account_id, sealed_key, agent_id, user_id,"
                " expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
                _row_id(sid), account_id, sealed, agent_id, user_id, expires_at)
        return Session(sid, account_id, Secret(api_key), agent_id, user_id, expires_at)

    async def get(self, cookie: str | None) -> Session | None:
        """The live session of a cookie, or None (unsigned, unknown, expired, unsealable)."""
        sid = self._sid(cookie)
        if sid is None:
            return None
        row = await self._pool.fetchrow(
            "SELECT account_id, sealed_key, agent_id, user_id, expires_at FROM web_sessions"
            " WHERE id_hash = $1 AND expires_at > now()", _row_id(sid))
        if row is None:
            return None
        sealed = bytes(row["sealed_key"])
        try:
            api_key = self._aead(sid).decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:],
                                              row["account_id"].encode()).decode()
        except InvalidTag:  # sealed under another secret (another replica, a restart)
            return None
        return Session(sid, row["account_id"], Secret(api_key), row["agent_id"],
                       row["user_id"], row["expires_at"])

    async def set_view(self, session: Session, agent_id: str, user_id: str) -> None:
        """The agent (and user) the page acts as, remembered for the session."""
        await self._pool.execute(
            "UPDATE web_sessions SET agent_id = $2, user_id = $3 WHERE id_hash = $1",
            _row_id(session.sid), agent_id, user_id)

    async def delete(self, session: Session) -> None:
        await self._pool.execute("DELETE FROM web_sessions WHERE id_hash = $1",
                                 _row_id(session.sid))


def _row_id(sid: str) -> bytes:
    return hashlib.sha256(sid.encode()).digest()
