"""The services' PostgreSQL connection pools (asyncpg)."""

from __future__ import annotations

from typing import TypeAlias

import asyncpg
import asyncpg.pool

from libs.outages import POSTGRES_DOWN, postgres_unavailable

#: What a PostgreSQL that is down, restarting or full of connections raises (OSError
#: covers a refused connection, a missing socket and a timed-out acquire or command).
DOWN = (OSError, *POSTGRES_DOWN)

#: The largest ``integer`` and ``bigint``: a number a request names that reaches such a
#: column is checked against it where the request is validated (asyncpg cannot send a
#: larger one: the call would fail unexpectedly).
INTEGER_MAX = 2**31 - 1
BIGINT_MAX = 2**63 - 1

#: A connection a pool lends (a proxy) or one opened on its own: the same calls.
Connection: TypeAlias = asyncpg.Connection | asyncpg.pool.PoolConnectionProxy


def one_row(row: asyncpg.Record | None) -> asyncpg.Record:
    """The row of a statement that always answers one (an aggregate over a row that is
    always there, an insert's RETURNING): asyncpg's fetchrow types it as optional."""
    if row is None:
        raise RuntimeError("the statement answered no row")
    return row

async def create_pool(dsn: str, *, min_size: int, max_size: int,
                      command_timeout: float = 10) -> asyncpg.Pool:
    return await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size,
                                     command_timeout=command_timeout, reset=_keep_session)


async def _keep_session(connection: asyncpg.Connection) -> None:
    """Nothing to reset when a connection goes back to its pool.

    asyncpg's default reset is one more round trip per query (``RESET ALL``,
    ``UNLISTEN *``, ``CLOSE ALL``, ``pg_advisory_unlock_all()``) for session state
    no service leaves behind: no ``SET``, no ``LISTEN``, no cursor outside a
    transaction, only transaction-scoped advisory locks. An open transaction is
    still rolled back (asyncpg does that before calling this)."""



class unavailable_when_down:  # noqa: N801 - used like a function: `with unavailable_when_down():`
    """PostgreSQL being down is UNAVAILABLE (POSTGRES_UNAVAILABLE), which clients
    retry, never INTERNAL. A context manager for ``with`` and ``async with``."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, traceback) -> None:
        if isinstance(exc, DOWN):
            raise postgres_unavailable(exc) from exc

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, kind, exc, traceback) -> None:
        self.__exit__(kind, exc, traceback)
