"""Every mutation path leaves exactly one audit record, in the same transaction,
with who (key, agent, user, role), when, what, and the snapshots before and after;
reads and refused changes leave none."""

from __future__ import annotations

import json

import asyncpg
import grpc

from libs import page_tokens
from testkit.journal_client import rpc_error
from testkit.memory_client import pb, recall, store
from tests.agent_memory.library import ADMIN_ROLE, add, admin, audit, edit, export, mask, new, who

ADMIN = admin(user="u1")
AGENT_KEY = who(user="u1", key_id="agent-key")


class Trail:
    def __init__(self, memory) -> None:
        self.memory = memory

    async def rows(self) -> list[asyncpg.Record]:
        connection = await asyncpg.connect(self.memory.dsn)
        try:
            return await connection.fetch("SELECT * FROM memory_audit ORDER BY id")
        finally:
            await connection.close()

    async def one(self, action: str | None, call, *, actor=None):
        """Run ``call()``; exactly one record with ``action`` (or none) must appear."""
        before = len(await self.rows())
        result = await call()
        rows = await self.rows()
        assert len(rows) - before == (1 if action else 0), (action, rows[before:])
        if action:
            record = rows[-1]
            assert record["action"] == action
            if actor is not None:
                assert (record["actor_key_id"], record["actor_agent_id"],
                        record["actor_user_id"], record["actor_role"]) == actor
        return result


async def test_every_mutation_path_leaves_exactly_one_record(memory):
    trail = Trail(memory)
    admin_actor = ("admin-key", "helper", "u1", "admin")
    agent_actor = ("agent-key", "helper", "u1", "agent")
    # Seed 000's paths.
    created = await trail.one("create", lambda: memory.stub.Store(store("k", "Likes jazz", who=AGENT_KEY)),
                              actor=agent_actor)
    await trail.one(None, lambda: memory.stub.Store(store("k", "Likes jazz", who=AGENT_KEY)))
    await trail.one("update", lambda: memory.stub.Store(store("k", "Likes bebop", who=AGENT_KEY)),
                    actor=agent_actor)
    await trail.one(None, lambda: memory.stub.Recall(recall("jazz", who=AGENT_KEY)))
    await trail.one("delete", lambda: memory.stub.Forget(pb.ForgetRequest(principal=AGENT_KEY, key="k")),
                    actor=agent_actor)
    await trail.one(None, lambda: memory.stub.Forget(pb.ForgetRequest(principal=AGENT_KEY, key="k")))
    # The library's paths.
    a = await trail.one("create", lambda: add(memory.stub, ADMIN, new("Uses Kafka", key="a")),
                        actor=admin_actor)
    b = await trail.one("create", lambda: add(memory.stub, ADMIN, new("Uses Pulsar", key="b")))
    a2 = await trail.one("update", lambda: edit(memory.stub, ADMIN, a, content="Uses Kafka 3"),
                         actor=admin_actor)
    await trail.one(None, lambda: rpc_error(edit(memory.stub, ADMIN, a, expected=1, content="x")))
    await trail.one("supersede", lambda: memory.stub.SupersedeMemory(pb.SupersedeMemoryRequest(
        principal=ADMIN, memory_id=b.id, superseded_by=a2.id)))
    await trail.one("rollback", lambda: memory.stub.RollbackMemory(pb.RollbackMemoryRequest(
        principal=ADMIN, memory_id=a.id, version=1)))
    await trail.one("delete", lambda: memory.stub.DeleteMemory(pb.DeleteMemoryRequest(
        principal=ADMIN, memory_id=a.id)))
    await trail.one(None, lambda: rpc_error(memory.stub.DeleteMemory(pb.DeleteMemoryRequest(
        principal=ADMIN, memory_id=a.id))))
    await trail.one("restore", lambda: memory.stub.RestoreMemory(pb.RestoreMemoryRequest(
        principal=ADMIN, memory_id=a.id)))
    await trail.one(None, lambda: rpc_error(add(memory.stub, AGENT_KEY, new(
        "account-wide", scope=pb.MEMORY_SCOPE_ACCOUNT))))
    # Settings.
    await trail.one("account_settings", lambda: memory.stub.UpdateAccountSettings(
        pb.UpdateAccountSettingsRequest(principal=ADMIN, settings=pb.AccountSettings(
            retention_days=10), update_mask=mask("retention_days"))), actor=admin_actor)
    await trail.one("agent_settings", lambda: memory.stub.UpdateAgentSettings(
        pb.UpdateAgentSettingsRequest(principal=ADMIN, settings=pb.AgentSettings(
            memory_bound=True), update_mask=mask("memory_bound"))), actor=admin_actor)
    await trail.one(None, lambda: rpc_error(memory.stub.UpdateAgentSettings(
        pb.UpdateAgentSettingsRequest(principal=AGENT_KEY, settings=pb.AgentSettings(
            memory_bound=False), update_mask=mask("memory_bound")))))
    # Import: one record per memory written, none for one already there.
    exported = await export(memory.stub, ADMIN)
    moved = admin("initech", user="u1")
    await trail.one(None, lambda: memory.stub.ImportMemories(pb.ImportMemoriesRequest(
        principal=ADMIN, jsonl=exported)))
    header, *lines = exported.splitlines()
    single = "\n".join([header, *(line for line in lines if json.loads(line)["key"] == "b")])
    await trail.one("import", lambda: memory.stub.ImportMemories(pb.ImportMemoriesRequest(
        principal=moved, jsonl=single)))
    # Hygiene: one record per memory it changes (expired "mood"; "k" forgotten on the
    # first day, past the 10-day window), then the purge of "mood" after the window.
    mood = await trail.one("create", lambda: memory.stub.Store(store(
        "mood", "Seemed tired", pb.CATEGORY_OBSERVATION, who=AGENT_KEY)))
    memory.clock.advance(days=30, seconds=1)
    rows_before = len(await trail.rows())
    report = await memory.stub.RunHygiene(pb.RunHygieneRequest())
    rows = (await trail.rows())[rows_before:]
    assert (report.expired, report.purged) == (1, 1)
    assert sorted((r["action"], str(r["memory_id"]), r["actor_agent_id"]) for r in rows) == \
        sorted([("expire", mood.entry.id, "hygiene"), ("purge", created.entry.id, "hygiene")])
    memory.clock.advance(days=10)
    await trail.one("purge", lambda: memory.stub.RunHygiene(pb.RunHygieneRequest()),
                    actor=("", "hygiene", "", "service"))
    await trail.one(None, lambda: memory.stub.RunHygiene(pb.RunHygieneRequest()))


async def test_records_hold_the_snapshots_before_and_after(memory):
    first = await add(memory.stub, ADMIN, new("Prefers tea", key="drink", tags={"t": "x"}))
    second = await edit(memory.stub, ADMIN, first, content="Prefers coffee")
    records = await audit(memory.stub, ADMIN, first.id)
    assert [r.action for r in records] == [pb.AUDIT_ACTION_UPDATE, pb.AUDIT_ACTION_CREATE]
    update, create = records
    assert not create.HasField("before") and create.after["content"] == "Prefers tea"
    assert update.before["content"] == "Prefers tea"
    assert update.after["content"] == "Prefers coffee" and update.after["version"] == 2
    assert update.version == second.version == 2
    assert update.actor.key_id == "admin-key" and update.actor.role == ADMIN_ROLE
    assert dict(update.after["tags"]) == {"t": "x"}
    assert update.after["source"]["kind"] == "admin" and update.after["author"]["role"] == "admin"


async def test_the_account_trail_shows_only_what_the_caller_may_see(memory):
    mine = await add(memory.stub, who(user="u1"), new("u1's secret plan", key="plan"))
    theirs = await add(memory.stub, who(user="u2"), new("u2's secret plan", key="plan"))
    await memory.stub.UpdateAccountSettings(pb.UpdateAccountSettingsRequest(
        principal=ADMIN, settings=pb.AccountSettings(retention_days=9),
        update_mask=mask("retention_days")))
    seen = await audit(memory.stub, who(user="u1"))
    assert {r.memory_id for r in seen} == {mine.id, ""}
    assert [r.action for r in seen] == [pb.AUDIT_ACTION_ACCOUNT_SETTINGS, pb.AUDIT_ACTION_CREATE]
    hidden = await audit(memory.stub, who(user="u1"), theirs.id)
    assert hidden == []
    paged = await memory.stub.ListAudit(pb.ListAuditRequest(principal=who(user="u2"),
                                                            page_size=1))
    assert len(paged.records) == 1 and paged.next_page_token
    # Tokens are not signed: a forged one must not carry a number past bigint to a query.
    for token in ("garbage", page_tokens.encode(before=2**70), page_tokens.encode(before=-1),
                  page_tokens.encode(before=True)):
        bad = await rpc_error(memory.stub.ListAudit(pb.ListAuditRequest(
            principal=who(user="u2"), page_token=token)))
        assert bad.code == grpc.StatusCode.INVALID_ARGUMENT and "page_token" in \
            bad.field_violations


async def test_a_store_over_an_expired_key_retires_it_then_creates_one_record_each(memory):
    trail = Trail(memory)
    first = await memory.stub.Store(store("mood", "Seemed tired", pb.CATEGORY_OBSERVATION,
                                          who=AGENT_KEY))
    memory.clock.advance(days=31)
    before = len(await trail.rows())
    second = await memory.stub.Store(store("mood", "Seemed rested", pb.CATEGORY_OBSERVATION,
                                           who=AGENT_KEY))
    assert second.entry.id != first.entry.id and not second.replaced
    rows = (await trail.rows())[before:]
    assert [(r["action"], str(r["memory_id"])) for r in rows] == [
        ("expire", first.entry.id), ("create", second.entry.id)]
