"""ClickHouse access: one interface, two engines, the same SQL.

Statements name their parameters ClickHouse's way, ``{name:Type}``, and
:func:`bind` writes the values in as escaped literals before either engine
sees the statement: ``ChdbClickHouse`` runs ClickHouse in-process (chDB, the
embedded default), ``ServerClickHouse`` talks to a ClickHouse server over the
native protocol (clickhouse-driver). Both engines thus receive the very same
text, and chDB keeps no parameters in its session between calls. The
statements use functions old servers also have (``arrayMap`` lambdas), so they
run on ClickHouse 18.16 and on current releases; the dense leg alone spells
its two measures natively where the engine can (``dense.spelling``).

Both engines are synchronous libraries: calls run on one worker thread each,
one at a time (chDB binds parameters per session, so two statements at once
could swap them), and every failure becomes UNAVAILABLE (reason
CLICKHOUSE_UNAVAILABLE) with the engine's message.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from libs.errors import Unavailable
from libs.settings import Secret

if TYPE_CHECKING:  # chDB is in the embedded extra only: imported when first used
    from chdb.session import Session

_PARAMETER = re.compile(r"\{(\w+):[^}]+\}")
_IN_PARAMETER = re.compile(r"\bIN \{(\w+):Array\(")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


class ClickHouse(Protocol):
    name: str

    async def execute(self, sql: str, params: dict[str, Any] | None = None) -> None: ...

    async def query(self, sql: str, params: dict[str, Any] | None = None) -> list[dict]: ...

    async def insert(self, table: str, columns: Sequence[str], rows: Sequence[tuple]) -> None: ...

    async def close(self) -> None: ...


def _unavailable(exc: Exception) -> Unavailable:
    detail = str(exc).split("Stack trace")[0].strip()[:300]
    return Unavailable(f"transcript index unavailable: {detail}", reason="CLICKHOUSE_UNAVAILABLE")


class _OneThread:
    def __init__(self, name: str) -> None:
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=name)

    async def run(self, function, *args):
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, function, *args)
        except Unavailable:
            raise
        except Exception as exc:
            raise _unavailable(exc) from exc

    def shutdown(self) -> None:
        self._executor.shutdown(wait=True)


def bind(sql: str, params: dict[str, Any] | None) -> str:
    """``sql`` with every ``{name:Type}`` replaced by its value as a literal. A list
    after ``IN`` becomes a tuple (what IN takes), elsewhere an array."""
    if not params:
        return sql
    after_in = set(_IN_PARAMETER.findall(sql))
    return _PARAMETER.sub(lambda m: _literal(params[m.group(1)], m.group(1) in after_in), sql)


def _literal(value: Any, as_tuple: bool = False) -> str:
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, tuple) or (isinstance(value, list) and as_tuple):
        return "(" + ",".join(_literal(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ",".join(_literal(v) for v in value) + "]"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(value)
    raise TypeError(f"no ClickHouse literal for {type(value).__name__}")


# ClickHouse's memory worker re-reads the process's memory use to correct its memory
# tracker, by default ten times a second, busy or idle (about 0.2% of a core in an idle
# search service). Once a second is plenty for an engine sharing its process.
_CHDB_OPTIONS = "memory_worker_period_ms=1000"


class ChdbClickHouse:
    """ClickHouse in-process (chDB); one process per data directory."""

    name = "chdb"

    def __init__(self, path: Path) -> None:
        self._path = path
        self._thread = _OneThread("chdb")
        self._session: Session | None = None

    def _connect(self):
        if self._session is None:
            from chdb import session

            self._path.mkdir(parents=True, exist_ok=True)
            self._session = session.Session(f"{self._path}?{_CHDB_OPTIONS}")
        return self._session

    def _run(self, sql: str, params: dict[str, Any] | None, fmt: str = "JSONEachRow") -> str:
        result = self._connect().query(bind(sql, params), fmt)
        return result.bytes().decode() if result is not None else ""

    def _rows(self, sql: str, params: dict[str, Any] | None) -> list[dict]:
        # Parsed on the worker thread: a large result does not hold the event loop alone.
        return [json.loads(line) for line in self._run(sql, params).splitlines() if line]

    async def execute(self, sql: str, params: dict[str, Any] | None = None) -> None:
        await self._thread.run(self._run, sql, params)

    async def query(self, sql: str, params: dict[str, Any] | None = None) -> list[dict]:
        return await self._thread.run(self._rows, sql, params)

    async def insert(self, table: str, columns: Sequence[str], rows: Sequence[tuple]) -> None:
        if not rows:
            return
        body = "\n".join(json.dumps(dict(zip(columns, row, strict=True)), ensure_ascii=False)
                         for row in rows)
        await self._thread.run(self._run, f"INSERT INTO {table} FORMAT JSONEachRow\n{body}", None)

    async def close(self) -> None:
        def close() -> None:
            if self._session is not None:
                self._session.close()
                self._session = None

        await self._thread.run(close)
        self._thread.shutdown()


class ServerClickHouse:
    """A ClickHouse server over the native protocol (clickhouse-driver)."""

    name = "server"

    def __init__(self, *, host: str, port: int, user: str, password: Secret,
                 timeout: float = 10.0) -> None:
        from clickhouse_driver import Client

        self._client = Client(host=host, port=port, user=user, password=password.reveal(),
                              connect_timeout=timeout, send_receive_timeout=timeout,
                              settings={"use_numpy": False})
        self._thread = _OneThread("clickhouse")

    def _run(self, sql: str, params: dict[str, Any] | None) -> list[dict]:
        rows, columns = self._client.execute(bind(sql, params), with_column_types=True)
        names = [name for name, _ in columns]
        return [dict(zip(names, row, strict=True)) for row in rows]

    async def execute(self, sql: str, params: dict[str, Any] | None = None) -> None:
        await self._thread.run(self._run, sql, params)

    async def query(self, sql: str, params: dict[str, Any] | None = None) -> list[dict]:
        return await self._thread.run(self._run, sql, params)

    async def insert(self, table: str, columns: Sequence[str], rows: Sequence[tuple]) -> None:
        if rows:
            await self._thread.run(lambda: self._client.execute(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES", list(rows)))

    async def close(self) -> None:
        await self._thread.run(self._client.disconnect)
        self._thread.shutdown()
