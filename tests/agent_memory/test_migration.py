"""A database written by the previous release (migration 0001 and its SQL) is
migrated at start and keeps every entry and its behaviour."""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from datetime import timedelta

import asyncpg
import grpc

from libs import migrations
from services.agent_memory.app import MIGRATIONS
from testkit.clock import FakeClock
from testkit.journal_client import rpc_error
from testkit.memory_client import pb, principal, recall, store
from testkit.postgres import fresh_database
from tests.agent_memory.conftest import start_memory

ALICE, BOB, NOBODY = principal(user="alice"), principal(user="bob"), principal()

# The previous release's Repository._insert, verbatim.
OLD_INSERT = (
    "INSERT INTO memory_entries (id, account_id, environment, agent_id, owner_user_id,"
    " key, content, content_hash, category, visibility, importance, expires_at,"
    " source_kind, source_thread_id, source_message_ids, created_at, updated_at)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16)")
OLD_ROWS = [
    # key, account, owner, content, category, visibility, importance, source, days ago
    ("name", "acme", "alice", "Alice's name is Alice Liddell", "user_profile", "private", 0.9,
     "agent_tool", 40),
    ("stack", "acme", "", "The team deploys with Argo CD", "project_fact", "shared", 0.6,
     "pre_compaction_flush", 20),
    ("mood", "acme", "", "Seemed tired in the standup", "observation", "shared", 0.5,
     "agent_tool", 10),
    ("lunch", "acme", "", "Team lunch is on Thursdays", "user_profile", "shared", 0.8,
     "agent_tool", 5),
    ("lunch", "acme", "alice", "Alice skips lunch on Thursdays", "user_profile", "private", 0.8,
     "agent_tool", 4),
    ("name", "globex", "", "Globex's assistant is called Max", "user_profile", "shared", 0.9,
     "agent_tool", 3),
]


async def _previous_release(dsn: str, tmp_path, now) -> dict[tuple[str, str, str], uuid.UUID]:
    only_first = tmp_path / "old-migrations"
    only_first.mkdir()
    shutil.copy(MIGRATIONS / "0001_entries.sql", only_first)
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=2)
    ids = {}
    try:
        assert await migrations.apply(pool, "agent_memory", only_first) == [1]
        for key, account, owner, content, category, visibility, importance, source, ago in \
                OLD_ROWS:
            created = now - timedelta(days=ago)
            expires = created + timedelta(days=30) if category == "observation" else None
            entry_id = uuid.uuid4()
            await pool.execute(
                OLD_INSERT, entry_id, account, "default", "helper", owner, key, content,
                hashlib.sha256(content.encode()).hexdigest(), category,
                visibility, importance, expires, source, "t-1", ["m1", "m2"], created)
            ids[(account, owner, key)] = entry_id
        await pool.execute(
            "INSERT INTO memory_store_requests (account_id, request_id, response, created_at)"
            " VALUES ($1, $2, $3, $4)", "acme", "req-1",
            json.dumps({"entry": str(ids[("acme", "alice", "name")]),
                        "outcome": "created"}).encode(), now - timedelta(hours=1))
        await pool.execute(
            "INSERT INTO agent_settings (account_id, environment, agent_id, memory_bound,"
            " updated_at) VALUES ('acme', 'default', 'helper', true, $1)", now)
    finally:
        await pool.close()
    return ids


async def test_a_database_of_the_previous_release_keeps_every_entry_and_behaviour(postgres,
                                                                                   tmp_path):
    clock = FakeClock()
    dsn = await fresh_database(postgres)
    ids = await _previous_release(dsn, tmp_path, clock.now())
    async for memory in start_memory(postgres, tmp_path, dsn=dsn, clock=clock):
        stub = memory.stub
        for (account, owner, key), entry_id in ids.items():
            who = principal(account, user=owner)
            row = next(r for r in OLD_ROWS if (r[1], r[2], r[0]) == (account, owner, key))
            entry = (await stub.GetMemory(pb.GetMemoryRequest(principal=who,
                                                              memory_id=str(entry_id)))).memory
            assert (entry.key, entry.content, entry.importance, entry.user_id) == \
                (key, row[3], row[6], owner)
            assert entry.category == {"user_profile": pb.CATEGORY_USER_PROFILE,
                                      "project_fact": pb.CATEGORY_PROJECT_FACT,
                                      "observation": pb.CATEGORY_OBSERVATION}[row[4]]
            assert entry.visibility == (pb.VISIBILITY_PRIVATE if owner else pb.VISIBILITY_SHARED)
            assert entry.scope == (pb.MEMORY_SCOPE_PRIVATE if owner else pb.MEMORY_SCOPE_AGENT)
            assert entry.source.kind == {"agent_tool": pb.SOURCE_KIND_AGENT_TOOL,
                                         "pre_compaction_flush":
                                         pb.SOURCE_KIND_PRE_COMPACTION_FLUSH}[row[7]]
            assert list(entry.source.message_ids) == ["m1", "m2"] and entry.version == 1
            assert entry.created_at.ToDatetime() == (clock.now() - timedelta(days=row[8])
                                                     ).replace(tzinfo=None)
        # Seed 000's reads behave as before.
        lunch = await stub.GetEntry(pb.GetEntryRequest(principal=ALICE, key="lunch"))
        assert lunch.entry.content.startswith("Alice")
        assert (await stub.GetEntry(pb.GetEntryRequest(principal=BOB, key="lunch"))
                ).entry.content.startswith("Team")
        pinned = await stub.ListPinned(pb.ListPinnedRequest(principal=ALICE))
        assert [e.key for e in pinned.entries] == ["name", "lunch", "lunch"]
        assert [e.key for e in (await stub.ListPinned(pb.ListPinnedRequest(
            principal=principal("globex")))).entries] == ["name"]
        assert await memory.project() == len(OLD_ROWS)  # the migration re-queued every entry
        found = await stub.Recall(recall("Argo CD deploys", who=BOB))
        assert not found.fallback and found.entries[0].entry.key == "stack"
        # Writes: unchanged, replaced (a new version), a retried request id, settings.
        same = await stub.Store(store("stack", "The team deploys with Argo CD", who=NOBODY,
                                      category=pb.CATEGORY_PROJECT_FACT))
        assert same.unchanged and same.entry.id == str(ids[("acme", "", "stack")])
        replaced = await stub.Store(store("stack", "The team deploys with Flux", who=NOBODY,
                                          category=pb.CATEGORY_PROJECT_FACT))
        assert replaced.replaced and replaced.entry.version == 2
        retried = await stub.Store(store("name", "Alice's name is Alice Liddell", who=ALICE,
                                         importance=0.9, request_id="req-1"))
        assert retried.entry.id == str(ids[("acme", "alice", "name")])
        bobs = await stub.Store(store("name", "Bob's name is Bob", who=BOB, request_id="req-1"))
        assert bobs.entry.user_id == "bob" and bobs.entry.id != retried.entry.id
        settings = await stub.GetAgentSettings(pb.GetAgentSettingsRequest(principal=ALICE))
        assert settings.settings.memory_bound and settings.account_memory_enabled
        assert settings.settings.extraction_mode == pb.EXTRACTION_MODE_SUGGESTIONS
        # Expiry as before: the observation was 10 days old.
        clock.advance(days=20, seconds=1)
        gone = await rpc_error(stub.GetEntry(pb.GetEntryRequest(principal=NOBODY, key="mood")))
        assert gone.code == grpc.StatusCode.NOT_FOUND
        assert (await stub.RunHygiene(pb.RunHygieneRequest())).expired == 1
        assert (await stub.Forget(pb.ForgetRequest(principal=ALICE, key="lunch"))).forgotten
        lunch = await stub.GetEntry(pb.GetEntryRequest(principal=ALICE, key="lunch"))
        assert lunch.entry.content.startswith("Team")
