"""A dependency that is down makes a call UNAVAILABLE, never INTERNAL.

The server wrappers (``libs/server.py``, the gateway's ``http/calls.py``) ask this
module about an exception no handler mapped: a PostgreSQL that is down or
restarting, or any refused, reset or timed-out connection, becomes UNAVAILABLE,
which clients retry. Code that knows which dependency it calls says so itself
(``libs.postgres.unavailable_when_down``); this is the net under the rest.
"""

from __future__ import annotations

import asyncpg

from libs.errors import Unavailable

#: InternalClientError is what a pooled connection whose server went away answers
#: to the next statement ("cannot switch to state ..., another operation is in
#: progress"), before the pool notices and replaces it.
POSTGRES_DOWN = (asyncpg.PostgresConnectionError, asyncpg.CannotConnectNowError,
                 asyncpg.exceptions.AdminShutdownError, asyncpg.exceptions.CrashShutdownError,
                 asyncpg.TooManyConnectionsError, asyncpg.InternalClientError)


def as_unavailable(exc: BaseException) -> Unavailable | None:
    if isinstance(exc, POSTGRES_DOWN):
        return postgres_unavailable(exc)
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return Unavailable(f"a dependency is unreachable ({type(exc).__name__}); try again",
                           reason="DEPENDENCY_UNAVAILABLE")
    return None


def postgres_unavailable(exc: BaseException) -> Unavailable:
    return Unavailable(f"PostgreSQL unreachable ({type(exc).__name__}); try again",
                       reason="POSTGRES_UNAVAILABLE")
