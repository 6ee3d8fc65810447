"""The JSON form of memories: audit snapshots and the export/import file.

An export is JSON Lines. The first line is a header::

    {"format": "agentmemory.memories", "version": 1, "account_id": ..., "environment": ...,
     "exported_at": ...}

and each other line is one memory: its current state (the snapshot below, plus
``recall_count`` and ``last_recalled_at``) and ``versions``, every recorded
version still kept (a snapshot plus ``action``, ``recorded_at`` and
``recorded_until``). Times are ISO 8601 with microseconds, so a round trip is
exact. The account and environment of an import are the importer's; every
other field, ids included, is kept.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any, Literal, overload
from uuid import UUID

from libs.errors import InvalidArgument, shorten
from libs.identity import require_id
from libs.postgres import BIGINT_MAX, INTEGER_MAX
from services.agent_memory.memories.model import Action, Author, Entry, Role, Source, Version
from services.agent_memory.memories.rules import Kind, Scope, SourceKind

FORMAT = "agentmemory.memories"
FORMAT_VERSION = 1


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def snapshot(entry: Entry) -> dict[str, Any]:
    """One version of a memory as JSON (also each audit record's before/after)."""
    return {
        "id": str(entry.id), "version": entry.version, "scope": str(entry.scope),
        "agent_id": entry.agent_id, "user_id": entry.owner_user_id, "key": entry.key,
        "content": entry.content, "content_hash": entry.content_hash, "kind": str(entry.kind),
        "importance": entry.importance, "confidence": entry.confidence, "tags": entry.tags,
        "source": {"kind": str(entry.source.kind), "thread_id": entry.source.thread_id,
                   "message_ids": list(entry.source.message_ids), "run_id": entry.source.run_id,
                   "first_offset": entry.source.first_offset,
                   "last_offset": entry.source.last_offset},
        "author": {"key_id": entry.author.key_id, "agent_id": entry.author.agent_id,
                   "user_id": entry.author.user_id, "role": str(entry.author.role)},
        "expires_at": _time(entry.expires_at), "created_at": _time(entry.created_at),
        "updated_at": _time(entry.updated_at), "deleted_at": _time(entry.deleted_at),
        "superseded_by": str(entry.superseded_by) if entry.superseded_by else None,
        "superseded_at": _time(entry.superseded_at),
    }


def header(account_id: str, environment: str, now: datetime) -> str:
    return json.dumps({"format": FORMAT, "version": FORMAT_VERSION, "account_id": account_id,
                       "environment": environment, "exported_at": now.isoformat()})


def memory_line(entry: Entry, versions: list[Version]) -> str:
    return json.dumps(_memory(entry, versions), ensure_ascii=False, sort_keys=True)


def _memory(entry: Entry, versions: list[Version]) -> dict[str, Any]:
    return {**snapshot(entry), "recall_count": entry.recall_count,
            "last_recalled_at": _time(entry.last_recalled_at),
            "versions": [{**snapshot(v.entry), "action": str(v.action),
                          "recorded_at": _time(v.recorded_at),
                          "recorded_until": _time(v.recorded_until)} for v in versions]}


def comparable(entry: Entry, versions: list[Version]) -> dict[str, Any]:
    """What an import compares: everything but the usage counters."""
    found = _memory(entry, versions)
    del found["recall_count"], found["last_recalled_at"]
    return found


class _Line:
    """Reads one JSON object, naming ``jsonl[n].<field>`` in every error."""

    def __init__(self, data: dict, field: str) -> None:
        self._data = data
        self._field = field

    def path(self, name: str) -> str:
        return f"{self._field}.{name}" if name else self._field

    def error(self, name: str, message: str) -> InvalidArgument:
        return InvalidArgument(self.path(name), message)

    def get(self, name: str, kinds: type | tuple[type, ...], *, optional: bool = False):
        value = self._data.get(name)
        if value is None and optional:
            return None
        if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
            raise self.error(name, "wrong type")
        if not isinstance(value, kinds):
            raise self.error(name, "missing or of the wrong type")
        return value

    # Each read is overloaded on ``optional``: only an optional field can be None.
    @overload
    def integer(self, name: str, maximum: int, *, optional: Literal[False] = False) -> int: ...
    @overload
    def integer(self, name: str, maximum: int, *, optional: bool) -> int | None: ...

    def integer(self, name: str, maximum: int, *, optional: bool = False) -> int | None:
        """0-``maximum``: what the column holds."""
        value = self.get(name, int, optional=optional)
        if value is not None and not 0 <= value <= maximum:
            raise self.error(name, f"must be 0-{maximum}")
        return value

    def number(self, name: str) -> float:
        try:
            return float(self.get(name, (int, float)))
        except OverflowError:  # an integer past any float
            raise self.error(name, "out of range") from None

    @overload
    def time(self, name: str, *, optional: Literal[False] = False) -> datetime: ...
    @overload
    def time(self, name: str, *, optional: bool) -> datetime | None: ...

    def time(self, name: str, *, optional: bool = False) -> datetime | None:
        value = self.get(name, str, optional=optional)
        if value is None:
            return None
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise self.error(name, "not an ISO 8601 time") from None
        if parsed.tzinfo is None:
            raise self.error(name, "needs a time zone")
        return parsed

    def enum(self, name: str, kind: type):
        try:
            return kind(self.get(name, str))
        except ValueError:
            raise self.error(name, f"unknown value {shorten(repr(self._data.get(name)))}") from None

    @overload
    def uuid(self, name: str, *, optional: Literal[False] = False) -> UUID: ...
    @overload
    def uuid(self, name: str, *, optional: bool) -> UUID | None: ...

    def uuid(self, name: str, *, optional: bool = False) -> UUID | None:
        value = self.get(name, str, optional=optional)
        if value is None:
            return None
        try:
            return UUID(value)
        except ValueError:
            raise self.error(name, "not a UUID") from None

    def child(self, name: str) -> _Line:
        return _Line(self.get(name, dict), f"{self._field}.{name}")


@overload
def _id(line: _Line, name: str, *, optional: Literal[False]) -> str: ...
@overload
def _id(line: _Line, name: str, *, optional: bool = True) -> str | None: ...


def _id(line: _Line, name: str, *, optional: bool = True) -> str | None:
    value = line.get(name, str, optional=optional)
    return require_id(value, line.path(name)) if value else value


def _entry(line: _Line, account_id: str, environment: str) -> Entry:
    source, author = line.child("source"), line.child("author")
    tags = line.get("tags", dict)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in tags.items()):
        raise line.error("tags", "keys and values must be strings")
    agent = line.get("agent_id", str)
    message_ids = source.get("message_ids", list)
    for index, message_id in enumerate(message_ids):
        if not isinstance(message_id, str):
            raise source.error("message_ids", "must be strings")
        require_id(message_id, source.path(f"message_ids[{index}]"))
    return Entry(
        id=line.uuid("id"), account_id=account_id, environment=environment,
        scope=line.enum("scope", Scope), agent_id=agent and _id(line, "agent_id", optional=False),
        owner_user_id=_id(line, "user_id") or None, key=line.get("key", str),
        content=line.get("content", str), kind=line.enum("kind", Kind),
        importance=line.number("importance"), confidence=line.number("confidence"),
        tags=dict(tags),
        content_hash=line.get("content_hash", str),
        source=Source(source.enum("kind", SourceKind), _id(source, "thread_id"),
                      tuple(message_ids), _id(source, "run_id"),
                      source.integer("first_offset", BIGINT_MAX, optional=True),
                      source.integer("last_offset", BIGINT_MAX, optional=True)),
        expires_at=line.time("expires_at", optional=True), created_at=line.time("created_at"),
        updated_at=line.time("updated_at"), version=line.integer("version", INTEGER_MAX),
        author=Author(_id(author, "key_id", optional=False), _id(author, "agent_id",
                                                                  optional=False),
                      _id(author, "user_id", optional=False), author.enum("role", Role)),
        deleted_at=line.time("deleted_at", optional=True),
        superseded_by=line.uuid("superseded_by", optional=True),
        superseded_at=line.time("superseded_at", optional=True),
    )


def parse(text: str, account_id: str, environment: str, field: str = "jsonl"
          ) -> list[tuple[str, Entry, list[Version]]]:
    """The memories in an export's lines, each with the field naming its line
    (``jsonl[N]``, counted from 1); header lines are checked and skipped."""
    found = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        name = f"{field}[{number}]"
        try:
            data = json.loads(raw)
        except ValueError:
            raise InvalidArgument(name, "not a JSON object") from None
        if not isinstance(data, dict):
            raise InvalidArgument(name, "not a JSON object")
        if "format" in data:
            if data.get("format") != FORMAT or data.get("version") != FORMAT_VERSION:
                raise InvalidArgument(f"{name}.format", f"expected {FORMAT} version "
                                                        f"{FORMAT_VERSION}")
            continue
        try:
            line = _Line(data, name)
            entry = _entry(line, account_id, environment)
            entry = _counters(line, entry)
            versions = []
            for index, item in enumerate(line.get("versions", list)):
                if not isinstance(item, dict):
                    raise InvalidArgument(f"{name}.versions[{index}]", "not a JSON object")
                version_line = _Line(item, f"{name}.versions[{index}]")
                versions.append(Version(_entry(version_line, account_id, environment),
                                        version_line.enum("action", Action),
                                        version_line.time("recorded_at"),
                                        version_line.time("recorded_until", optional=True)))
        except InvalidArgument as exc:
            if exc.field.startswith(name):
                raise
            raise InvalidArgument(f"{name}.{exc.field}", exc.description) from None
        found.append((name, entry, versions))
    return found


def _counters(line: _Line, entry: Entry) -> Entry:
    return replace(entry, recall_count=line.integer("recall_count", BIGINT_MAX),
                   last_recalled_at=line.time("last_recalled_at", optional=True))
