"""Short-lived signed user tokens: one user, one agent, an expiry.

A service key that may act for users (``act_for_users``) mints them
(``KeyService.MintUserToken``) for an end-user surface, an MCP desktop client
or the browser, so no long-lived account key sits on an end user's machine.
A token is a JWT (HS256, PyJWT) signed with ``GATEWAY_TOKEN_SECRET``: the
claims say the account, the user (``sub``), the agent, the key that minted it
and when it expires. Verifying one checks the signature, the issuer, the
audience and the expiry here; ``ApiKeys`` then checks that the minting key is
still active, so revoking a key ends every token it minted.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass

import jwt

from libs.errors import Unauthenticated
from libs.settings import Secret, SettingsError

ISSUER = "agentmemory"
AUDIENCE = "agentmemory-gateway"
ALGORITHM = "HS256"
MIN_SECRET_CHARS = 32
DEFAULT_SECONDS = 3600
MAX_SECONDS = 24 * 3600
#: Clock skew tolerated between the replica that minted a token and the one reading it.
LEEWAY_SECONDS = 5


@dataclass(frozen=True)
class TokenClaims:
    token_id: str
    account_id: str
    key_id: str  # the key that minted it
    user_id: str
    agent_id: str
    expires_at: float  # unix time


@dataclass(frozen=True)
class MintedToken:
    token: str
    claims: TokenClaims


def looks_like_token(value: str) -> bool:
    """A JWT's shape (three base64url parts), so a key-shaped mistake is not read as one."""
    return value.count(".") == 2 and value.startswith("ey")


class UserTokens:
    def __init__(self, secret: Secret) -> None:
        value = secret.reveal()
        if value and len(value) < MIN_SECRET_CHARS:
            raise SettingsError(f"GATEWAY_TOKEN_SECRET: at least {MIN_SECRET_CHARS} characters")
        self._secret = value.encode() if value else os.urandom(32)

    def mint(self, *, account_id: str, key_id: str, user_id: str, agent_id: str,
             seconds: int) -> MintedToken:
        now = int(time.time())
        claims = TokenClaims(uuid.uuid4().hex, account_id, key_id, user_id, agent_id,
                             float(now + seconds))
        token = jwt.encode({
            "iss": ISSUER, "aud": AUDIENCE, "iat": now, "exp": now + seconds,
            "jti": claims.token_id, "acc": account_id, "kid": key_id, "sub": user_id,
            "agt": agent_id}, self._secret, algorithm=ALGORITHM)
        return MintedToken(token, claims)

    def verify(self, token: str) -> TokenClaims:
        try:
            claims = jwt.decode(
                token, self._secret, algorithms=[ALGORITHM], audience=AUDIENCE, issuer=ISSUER,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iat", "jti", "sub", "acc", "kid", "agt"]})
        except jwt.ExpiredSignatureError:
            raise Unauthenticated("the user token has expired: mint a new one",
                                  reason="TOKEN_EXPIRED") from None
        except jwt.InvalidTokenError:
            raise Unauthenticated("unknown or invalid user token", reason="TOKEN_INVALID") from None
        return TokenClaims(str(claims["jti"]), str(claims["acc"]), str(claims["kid"]),
                           str(claims["sub"]), str(claims["agt"]), float(claims["exp"]))
