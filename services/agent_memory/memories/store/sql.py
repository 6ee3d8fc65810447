"""SQL building blocks of agent memory: the statement builder, the visibility
predicate every read uses, and the row <-> domain mapping.

The visibility predicate (``_branches``, used as ``visible`` or, for ordered
pages, ``visible_page``) is the one place tenancy is decided for reads
(memories, versions and audit records alike): within the caller's account and
environment, a caller sees

- ``account`` memories of the account,
- ``agent`` memories of its agent,
- ``user`` memories of its user (whatever agent wrote them),
- ``private`` memories of its agent *and* its user,

and, where a read asks for them, the ``platform`` rules. A caller without a
user sees no user or private memory. A read over several agents (the library's
summary: ``agents``) sees what the caller would see acting as each of them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import asyncpg

from services.agent_memory.memories.model import Actor, Author, Entry, Role, Source
from services.agent_memory.memories.rules import Kind, Scope, SourceKind


class Query:
    """One statement's positional arguments: ``q(value)`` appends a value and
    returns its placeholder (``$1``, ``$2``, ...)."""

    def __init__(self, *values: Any) -> None:
        self.args: list[Any] = list(values)

    def __call__(self, value: Any) -> str:
        self.args.append(value)
        return f"${len(self.args)}"


def _branches(q: Query, actor: Actor, a: str, platform: bool,
              agents: Sequence[str] | None = None) -> list[str]:
    """The visible rows as disjoint parts, each an equality on (account, environment,
    scope, agent, owner): one index range apiece. (The agent and owner columns of a
    scope that has none are '' by the table's checks.) ``agents``: those agents' rows
    instead of the actor's agent's (empty: every agent's)."""
    tenant = (f"{a}account_id = {q(actor.account_id)}"
              f" AND {a}environment = {q(actor.environment)}")
    if agents is None:
        agent = f"{a}agent_id = {q(actor.agent_id)}"
    elif agents:
        agent = f"{a}agent_id = ANY({q(list(agents))}::text[])"
    else:
        agent = f"{a}agent_id <> ''"
    found = [f"{tenant} AND {a}scope = 'account' AND {a}agent_id = '' AND {a}owner_user_id = ''",
             f"{tenant} AND {a}scope = 'agent' AND {agent} AND {a}owner_user_id = ''"]
    if actor.user_id:  # without a user, no user or private memory is visible
        owner = q(actor.user_id)
        found += [f"{tenant} AND {a}scope = 'user' AND {a}agent_id = ''"
                  f" AND {a}owner_user_id = {owner}",
                  f"{tenant} AND {a}scope = 'private' AND {agent}"
                  f" AND {a}owner_user_id = {owner}"]
    if platform:
        found.append(f"{a}account_id = '' AND {a}environment = '' AND {a}scope = 'platform'")
    return found


def visible(q: Query, actor: Actor, alias: str = "", *, platform: bool = False,
            agents: Sequence[str] | None = None) -> str:
    """The rows of memory_entries / memory_versions / memory_audit ``actor`` may see
    (with ``agents``: acting as any of those agents, every agent when empty)."""
    a = f"{alias}." if alias else ""
    return "(" + " OR ".join(f"({b})" for b in _branches(q, actor, a, platform, agents)) + ")"


def visible_page(q: Query, actor: Actor, *, select: str, table: str, where: list[str],
                 order: str, limit: int, platform: bool = False) -> str:
    """A page of the visible rows that match ``where``, in ``order``: the same rows as
    ``visible``, read as one ordered, limited index range per part and merged, so a
    page costs the same however large the account is."""
    bound = q(limit)
    extra = "".join(f" AND {condition}" for condition in where)
    parts = [f"(SELECT {select} FROM {table} WHERE {branch}{extra} ORDER BY {order}"
             f" LIMIT {bound})" for branch in _branches(q, actor, "", platform)]
    return (f"SELECT * FROM ({' UNION ALL '.join(parts)}) AS visible ORDER BY {order}"
            f" LIMIT {bound}")


def live(q: Query, now, alias: str = "") -> str:
    """Not deleted, not superseded, not expired at ``now``."""
    a = f"{alias}." if alias else ""
    return (f"{a}deleted_at IS NULL AND {a}superseded_by IS NULL"
            f" AND ({a}expires_at IS NULL OR {a}expires_at > {q(now)})")


# The columns of a memory's snapshot: what memory_versions keeps per version.
SNAPSHOT = ("scope", "agent_id", "owner_user_id", "key", "content", "content_hash", "kind",
            "importance", "confidence", "tags", "source_kind", "source_thread_id",
            "source_message_ids", "source_run_id", "source_first_offset", "source_last_offset",
            "expires_at", "deleted_at", "superseded_by", "superseded_at", "author_key_id",
            "author_agent_id", "author_user_id", "author_role", "created_at", "updated_at")
ENTRY = ("id", "account_id", "environment", "version", *SNAPSHOT, "recall_count",
         "last_recalled_at")
ENTRY_COLUMNS = ", ".join(ENTRY)
VERSION_COLUMNS = ", ".join(("memory_id AS id", "account_id", "environment", "version", *SNAPSHOT,
                             "0 AS recall_count", "NULL::timestamptz AS last_recalled_at",
                             "action", "recorded_at", "recorded_until"))


def columns(alias: str) -> str:
    return ", ".join(f"{alias}.{c}" for c in ENTRY)


def entry(row: asyncpg.Record) -> Entry:
    return Entry(
        id=row["id"],
        account_id=row["account_id"],
        environment=row["environment"],
        scope=Scope(row["scope"]),
        agent_id=row["agent_id"],
        owner_user_id=row["owner_user_id"] or None,
        key=row["key"],
        content=row["content"],
        kind=Kind(row["kind"]),
        importance=row["importance"],
        confidence=row["confidence"],
        tags=_tags(row["tags"]),
        content_hash=row["content_hash"],
        source=Source(SourceKind(row["source_kind"]), row["source_thread_id"],
                      tuple(row["source_message_ids"]), row["source_run_id"],
                      row["source_first_offset"], row["source_last_offset"]),
        expires_at=row["expires_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        version=row["version"],
        author=Author(row["author_key_id"], row["author_agent_id"], row["author_user_id"],
                      Role(row["author_role"])),
        deleted_at=row["deleted_at"],
        superseded_by=row["superseded_by"],
        superseded_at=row["superseded_at"],
        recall_count=row["recall_count"],
        last_recalled_at=row["last_recalled_at"],
    )


def _tags(value) -> dict[str, str]:
    return json.loads(value) if isinstance(value, str) else dict(value or {})


def snapshot_values(e: Entry) -> list[Any]:
    """The values of ``SNAPSHOT`` for ``e``, in order."""
    return [e.scope, e.agent_id, e.owner_user_id or "", e.key, e.content, e.content_hash, e.kind,
            e.importance, e.confidence, json.dumps(e.tags, sort_keys=True), e.source.kind,
            e.source.thread_id, list(e.source.message_ids), e.source.run_id,
            e.source.first_offset, e.source.last_offset, e.expires_at, e.deleted_at,
            e.superseded_by, e.superseded_at, e.author.key_id, e.author.agent_id,
            e.author.user_id, e.author.role, e.created_at, e.updated_at]

