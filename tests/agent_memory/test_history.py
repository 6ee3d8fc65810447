"""History with a controllable clock: versions, supersede, tombstones, restore,
rollback, as-of reads, the retention window and the purge after it."""

from __future__ import annotations

from datetime import timedelta

import asyncpg
import grpc
from google.protobuf import timestamp_pb2

from services.agent_memory import index as vector_index
from testkit.journal_client import rpc_error
from testkit.memory_client import pb, recall, store
from tests.agent_memory.library import add, admin, edit, listed, mask, new, who

ME = who(user="u1")
COLLECTION = vector_index.collection_name("acme", "default", "local-bge-small-en")


def stamp(when) -> timestamp_pb2.Timestamp:
    value = timestamp_pb2.Timestamp()
    value.FromDatetime(when)
    return value


async def get(memory, memory_id, as_of=None, principal=ME) -> pb.GetMemoryResponse:
    request = pb.GetMemoryRequest(principal=principal, memory_id=memory_id)
    if as_of is not None:
        request.as_of.CopyFrom(stamp(as_of))
    return await memory.stub.GetMemory(request)


async def retention(memory, days: int) -> None:
    await memory.stub.UpdateAccountSettings(pb.UpdateAccountSettingsRequest(
        principal=admin(), settings=pb.AccountSettings(retention_days=days),
        update_mask=mask("retention_days")))


async def sql(memory, query: str, *args):
    connection = await asyncpg.connect(memory.dsn)
    try:
        return await connection.fetch(query, *args)
    finally:
        await connection.close()


async def test_an_edit_makes_a_new_version_and_the_old_one_stays_readable(memory):
    t0 = memory.clock.now()
    first = await add(memory.stub, ME, new("Prefers tea", pb.MEMORY_KIND_PREFERENCE))
    assert first.version == 1
    memory.clock.advance(hours=1)
    second = await edit(memory.stub, ME, first, content="Prefers green tea")
    memory.clock.advance(hours=1)
    third = await edit(memory.stub, ME, second, importance=0.9, tags={"topic": "drinks"})
    assert (second.version, third.version) == (2, 3) and third.id == first.id
    reply = await get(memory, first.id)
    assert reply.memory.content == "Prefers green tea" and reply.memory.tags == {"topic": "drinks"}
    versions = reply.versions
    assert [v.version for v in versions] == [1, 2, 3]
    assert [v.entry.content for v in versions] == ["Prefers tea", "Prefers green tea",
                                                   "Prefers green tea"]
    assert [v.action for v in versions] == [pb.AUDIT_ACTION_CREATE, pb.AUDIT_ACTION_UPDATE,
                                            pb.AUDIT_ACTION_UPDATE]
    assert versions[0].recorded_until == versions[1].recorded_at
    assert not versions[2].HasField("recorded_until")
    # As of a time: the version current then.
    old = await get(memory, first.id, as_of=t0 + timedelta(minutes=30))
    assert old.memory.content == "Prefers tea" and old.memory.version == 1
    assert [v.version for v in old.versions] == [1]
    before = await rpc_error(memory.stub.GetMemory(pb.GetMemoryRequest(
        principal=ME, memory_id=first.id, as_of=stamp(t0 - timedelta(seconds=1)))))
    assert before.code == grpc.StatusCode.NOT_FOUND
    # An edit of a version that is no longer current loses, and says so.
    stale = await rpc_error(memory.stub.EditMemory(pb.EditMemoryRequest(
        principal=ME, memory_id=first.id, expected_version=2,
        edit=pb.MemoryEdit(content="Prefers coffee"), update_mask=mask("content"))))
    assert stale.code == grpc.StatusCode.FAILED_PRECONDITION
    assert stale.reason == "VERSION_CONFLICT" and stale.metadata["current_version"] == "3"
    assert (await get(memory, first.id)).memory.content == "Prefers green tea"


async def test_as_of_lists_return_the_store_as_it_was(memory):
    times = [memory.clock.now()]
    a = await add(memory.stub, ME, new("Alpha plan", key="a"))
    b = await add(memory.stub, ME, new("Beta plan", key="b"))
    memory.clock.advance(hours=1)
    times.append(memory.clock.now())
    a = await edit(memory.stub, ME, a, content="Alpha plan, revised")
    await memory.stub.DeleteMemory(pb.DeleteMemoryRequest(principal=ME, memory_id=b.id))
    c = await add(memory.stub, ME, new("Gamma plan", key="c"))
    memory.clock.advance(hours=1)
    times.append(memory.clock.now())
    await memory.stub.SupersedeMemory(pb.SupersedeMemoryRequest(
        principal=ME, memory_id=a.id, superseded_by=c.id))
    memory.clock.advance(hours=1)

    async def as_of(when, **flags):
        found = await listed(memory.stub, ME, as_of=stamp(when), **flags)
        return {m.key: m.content for m in found}

    assert await as_of(times[0] + timedelta(minutes=1)) == {"a": "Alpha plan", "b": "Beta plan"}
    assert await as_of(times[1] + timedelta(minutes=1)) == {"a": "Alpha plan, revised",
                                                            "c": "Gamma plan"}
    assert await as_of(times[2] + timedelta(minutes=1)) == {"c": "Gamma plan"}
    assert await as_of(times[2] + timedelta(minutes=1), include_superseded=True) == {
        "a": "Alpha plan, revised", "c": "Gamma plan"}
    assert await as_of(times[0] - timedelta(minutes=1)) == {}
    assert {m.key for m in await listed(memory.stub, ME)} == {"c"}


async def test_supersede_hides_the_old_memory_and_keeps_it_on_request(memory):
    old = await add(memory.stub, ME, new("Deploys happen on Tuesdays", key="deploy-day"))
    newer = await add(memory.stub, ME, new("Deploys happen on Thursdays", key="deploy-day-2"))
    await memory.project()
    reply = await memory.stub.SupersedeMemory(pb.SupersedeMemoryRequest(
        principal=ME, memory_id=old.id, superseded_by=newer.id, expected_version=1))
    assert reply.memory.superseded_by == newer.id and reply.memory.version == 2
    assert reply.replacement.id == newer.id
    await memory.project()
    assert [m.key for m in await listed(memory.stub, ME)] == ["deploy-day-2"]
    assert {m.key for m in await listed(memory.stub, ME, include_superseded=True)} == {
        "deploy-day", "deploy-day-2"}
    recalled = await memory.stub.Recall(recall("when do deploys happen", who=ME))
    assert [e.entry.key for e in recalled.entries] == ["deploy-day-2"]
    assert await memory.service.index.count(COLLECTION) == 1
    explained = await memory.stub.ExplainMemory(pb.ExplainMemoryRequest(principal=ME,
                                                                        memory_id=newer.id))
    assert list(explained.supersedes) == [old.id]
    again = await rpc_error(memory.stub.SupersedeMemory(pb.SupersedeMemoryRequest(
        principal=ME, memory_id=old.id, superseded_by=newer.id)))
    assert again.code == grpc.StatusCode.FAILED_PRECONDITION and again.reason == \
        "MEMORY_SUPERSEDED"
    itself = await rpc_error(memory.stub.SupersedeMemory(pb.SupersedeMemoryRequest(
        principal=ME, memory_id=newer.id, superseded_by=newer.id)))
    assert itself.code == grpc.StatusCode.INVALID_ARGUMENT and "superseded_by" in \
        itself.field_violations
    # Rolling back to the version before the supersede makes it live again.
    back = await memory.stub.RollbackMemory(pb.RollbackMemoryRequest(
        principal=ME, memory_id=old.id, version=1))
    assert back.memory.version == 3 and not back.memory.superseded_by


async def test_delete_is_a_tombstone_restorable_until_the_window_ends_then_purged(memory):
    kept = await add(memory.stub, ME, new("The office is in Lisbon", key="office"))
    gone = await add(memory.stub, ME, new("The API key rotates monthly", key="rotation"))
    await memory.project()
    assert await memory.service.index.count(COLLECTION) == 2
    deleted = (await memory.stub.DeleteMemory(pb.DeleteMemoryRequest(
        principal=ME, memory_id=gone.id, expected_version=1))).memory
    assert deleted.version == 2 and deleted.HasField("deleted_at")
    assert deleted.purge_after.ToDatetime() - deleted.deleted_at.ToDatetime() == \
        timedelta(days=30)
    await memory.project()
    assert await memory.service.index.count(COLLECTION) == 1
    assert [m.key for m in await listed(memory.stub, ME)] == ["office"]
    assert {m.key for m in await listed(memory.stub, ME, include_deleted=True)} == {
        "office", "rotation"}
    recalled = await memory.stub.Recall(recall("API key rotation", who=ME))
    assert "rotation" not in [e.entry.key for e in recalled.entries]
    # Restorable inside the window, as a new version.
    memory.clock.advance(days=29)
    restored = (await memory.stub.RestoreMemory(pb.RestoreMemoryRequest(
        principal=ME, memory_id=gone.id))).memory
    assert restored.version == 3 and not restored.HasField("deleted_at")
    await memory.project()
    assert await memory.service.index.count(COLLECTION) == 2
    not_deleted = await rpc_error(memory.stub.RestoreMemory(pb.RestoreMemoryRequest(
        principal=ME, memory_id=gone.id)))
    assert not_deleted.reason == "MEMORY_NOT_DELETED"
    # A shorter window: past it, no restore, and hygiene purges for real.
    await retention(memory, 7)
    await memory.stub.DeleteMemory(pb.DeleteMemoryRequest(principal=ME, memory_id=gone.id))
    memory.clock.advance(days=6)
    assert (await memory.stub.RunHygiene(pb.RunHygieneRequest())).purged == 0
    memory.clock.advance(days=1, seconds=1)
    late = await rpc_error(memory.stub.RestoreMemory(pb.RestoreMemoryRequest(
        principal=ME, memory_id=gone.id)))
    assert late.code == grpc.StatusCode.FAILED_PRECONDITION
    assert late.reason == "VERSION_OUTSIDE_RETENTION"
    assert (await memory.stub.RunHygiene(pb.RunHygieneRequest())).purged == 1
    await memory.project()
    missing = await rpc_error(memory.stub.GetMemory(pb.GetMemoryRequest(principal=ME,
                                                                       memory_id=gone.id)))
    assert missing.code == grpc.StatusCode.NOT_FOUND
    assert await sql(memory, "SELECT 1 FROM memory_versions WHERE memory_id = $1::uuid",
                     gone.id) == []
    assert await memory.service.index.count(COLLECTION) == 1
    trail = await sql(memory, "SELECT action, before, after FROM memory_audit"
                              " WHERE memory_id = $1::uuid ORDER BY id", gone.id)
    assert [r["action"] for r in trail] == ["create", "delete", "restore", "delete", "purge"]
    for record in trail:  # the content went with the memory
        for snapshot in (record["before"], record["after"]):
            assert snapshot is None or ("content" not in snapshot and "API key" not in snapshot)
    assert [m.key for m in await listed(memory.stub, ME, include_deleted=True)] == ["office"]
    assert (await get(memory, kept.id)).memory.content == "The office is in Lisbon"


async def test_forget_is_a_tombstone_and_frees_the_key(memory):
    first = await memory.stub.Store(store("city", "Lives in Lisbon", who=ME))
    assert (await memory.stub.Forget(pb.ForgetRequest(principal=ME, key="city"))).forgotten
    assert not (await memory.stub.Forget(pb.ForgetRequest(principal=ME, key="city"))).forgotten
    second = await memory.stub.Store(store("city", "Lives in Porto", who=ME))
    assert second.entry.id != first.entry.id and not second.replaced
    tombstone = (await get(memory, first.entry.id)).memory
    assert tombstone.HasField("deleted_at") and tombstone.content == "Lives in Lisbon"
    taken = await rpc_error(memory.stub.RestoreMemory(pb.RestoreMemoryRequest(
        principal=ME, memory_id=first.entry.id)))
    assert taken.code == grpc.StatusCode.ALREADY_EXISTS and taken.reason == "KEY_IN_USE"


async def test_store_over_a_key_makes_a_new_version(memory):
    first = await memory.stub.Store(store("lang", "Writes Python", who=ME))
    memory.clock.advance(minutes=1)
    second = await memory.stub.Store(store("lang", "Writes Rust", who=ME))
    assert second.replaced and second.entry.id == first.entry.id and second.entry.version == 2
    versions = (await get(memory, first.entry.id)).versions
    assert [v.entry.content for v in versions] == ["Writes Python", "Writes Rust"]


async def test_rollback_restores_an_old_version_inside_the_window(memory):
    a = await add(memory.stub, ME, new("Version A", key="doc"))
    memory.clock.advance(days=1)
    b = await edit(memory.stub, ME, a, content="Version B")
    memory.clock.advance(days=1)
    c = await edit(memory.stub, ME, b, content="Version C", kind=pb.MEMORY_KIND_DECISION)
    back = (await memory.stub.RollbackMemory(pb.RollbackMemoryRequest(
        principal=ME, memory_id=a.id, version=1, expected_version=c.version))).memory
    assert back.version == 4 and back.content == "Version A"
    assert back.kind == pb.MEMORY_KIND_PROJECT_FACT
    versions = (await get(memory, a.id)).versions
    assert [v.entry.content for v in versions] == ["Version A", "Version B", "Version C",
                                                   "Version A"]
    assert versions[-1].action == pb.AUDIT_ACTION_ROLLBACK
    # A deleted memory rolls back to life.
    await memory.stub.DeleteMemory(pb.DeleteMemoryRequest(principal=ME, memory_id=a.id))
    alive = (await memory.stub.RollbackMemory(pb.RollbackMemoryRequest(
        principal=ME, memory_id=a.id, version=2))).memory
    assert alive.content == "Version B" and not alive.HasField("deleted_at")
    missing = await rpc_error(memory.stub.RollbackMemory(pb.RollbackMemoryRequest(
        principal=ME, memory_id=a.id, version=99)))
    assert missing.code == grpc.StatusCode.NOT_FOUND and missing.reason == "VERSION_NOT_FOUND"
    # Outside the window: refused, then pruned by hygiene (with its content in the trail).
    await retention(memory, 1)
    memory.clock.advance(days=1, seconds=1)
    late = await rpc_error(memory.stub.RollbackMemory(pb.RollbackMemoryRequest(
        principal=ME, memory_id=a.id, version=2)))
    assert late.reason == "VERSION_OUTSIDE_RETENTION"
    pruned = await memory.stub.RunHygiene(pb.RunHygieneRequest())
    assert pruned.pruned_versions == 5
    assert [v.version for v in (await get(memory, a.id)).versions] == [6]
    trail = await sql(memory, "SELECT version, before, after FROM memory_audit"
                              " WHERE memory_id = $1::uuid ORDER BY id", a.id)
    assert [r["version"] for r in trail] == [1, 2, 3, 4, 5, 6]
    assert "content" in trail[-1]["after"]
    assert all("content" not in (r["after"] or "") for r in trail[:-1])
    gone = await rpc_error(memory.stub.RollbackMemory(pb.RollbackMemoryRequest(
        principal=ME, memory_id=a.id, version=2)))
    assert gone.reason == "VERSION_NOT_FOUND"
