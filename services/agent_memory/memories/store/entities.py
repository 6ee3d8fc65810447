"""The SQL of memory_entities: the names each memory mentions, a projection of its
current row kept by the projector; retrieval's entity and graph legs read it."""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import asyncpg

from libs.postgres import Connection
from services.agent_memory.memories import entities as entity_rules
from services.agent_memory.memories.model import Entry
from services.agent_memory.memories.store.sql import Query


async def refresh_entities(connection: Connection,
                           keys: Sequence[tuple[str, str, UUID]]) -> None:
    """Re-extract the entities of these memories from their current row (deleted or
    missing: none). Called by the projector, in its transaction, for each outbox batch."""
    if not keys:
        return
    q = Query()
    rows = await connection.fetch(
        f"SELECT m.account_id, m.environment, m.id, m.content FROM memory_entries m"
        f" JOIN unnest({q([k[0] for k in keys])}::text[], {q([k[1] for k in keys])}::text[],"
        f" {q([k[2] for k in keys])}::uuid[]) AS o(account_id, environment, id)"
        f" USING (account_id, environment, id) WHERE m.deleted_at IS NULL", *q.args)
    found = [(r["account_id"], r["environment"], r["id"], e)
             for r in rows for e in entity_rules.extract(r["content"])]
    await connection.execute(
        "DELETE FROM memory_entities e USING unnest($1::text[], $2::text[], $3::uuid[])"
        " AS o(account_id, environment, id) WHERE e.account_id = o.account_id"
        " AND e.environment = o.environment AND e.memory_id = o.id",
        [k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys])
    if found:
        await connection.execute(
            "INSERT INTO memory_entities (account_id, environment, memory_id, norm, name, kind)"
            " SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[],"
            " $6::text[]) ON CONFLICT DO NOTHING",
            [f[0] for f in found], [f[1] for f in found], [f[2] for f in found],
            [f[3].norm for f in found], [f[3].name for f in found], [f[3].kind for f in found])


async def add_entities(pool: asyncpg.Pool, found: Sequence[tuple[Entry, Sequence]]) -> None:
    """More entities of memories (the model's), kept only while each memory still has the
    content they were found in."""
    rows = [(e.account_id, e.environment, e.id, e.content_hash, x.norm, x.name, x.kind)
            for e, names in found for x in names]
    if not rows:
        return
    columns = list(zip(*rows, strict=True))
    await pool.execute(
        "INSERT INTO memory_entities (account_id, environment, memory_id, norm, name, kind)"
        " SELECT x.a, x.e, x.id, x.norm, x.name, x.kind FROM unnest($1::text[], $2::text[],"
        " $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[])"
        " AS x(a, e, id, hash, norm, name, kind) JOIN memory_entries m ON m.account_id = x.a"
        " AND m.environment = x.e AND m.id = x.id AND m.content_hash = x.hash"
        " AND m.deleted_at IS NULL ON CONFLICT DO NOTHING", *[list(c) for c in columns])
