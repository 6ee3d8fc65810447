"""Environments are an account setting and per-account quotas bound what any key can make
the platform allocate: each refusal is RESOURCE_EXHAUSTED, reason QUOTA_EXCEEDED, naming
the quota; only the platform operator changes a quota; old receipts are deleted by
hygiene; accounts of before the setting keep the environments their data is in."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator

import asyncpg
import grpc
import pytest
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from agentmemory.agent_memory.v1 import retrieval_pb2 as retrieval_pb

from libs import migrations
from libs import postgres as pools
from services.agent_memory.app import MIGRATIONS
from testkit.journal_client import rpc_error
from testkit.memory_client import store
from testkit.postgres import fresh_database
from tests.agent_memory.library import OPERATOR_ROLE, add, admin, mask, new, who
from tests.retrieval.conftest import Retrieval, start

ADMIN = admin(user="u1")
OPERATOR = who(agent="operator", role=OPERATOR_ROLE)


@pytest.fixture
async def acme(postgres, tmp_path) -> AsyncIterator[Retrieval]:
    async for under_test in start(postgres, tmp_path):
        yield under_test


async def settings(stub) -> pb.GetAccountSettingsResponse:
    return await stub.GetAccountSettings(pb.GetAccountSettingsRequest(principal=ADMIN))


async def update(stub, principal, settings_: pb.AccountSettings, *paths: str):
    return await stub.UpdateAccountSettings(pb.UpdateAccountSettingsRequest(
        principal=principal, settings=settings_, update_mask=mask(*paths)))


def refused_by_quota(error, quota: str) -> bool:
    return (error.code, error.reason, error.metadata.get("quota")) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED, "QUOTA_EXCEEDED", quota)


async def test_environments_default_to_default_and_admins_change_them(acme):
    stub = acme.memory.stub
    current = await settings(stub)
    assert list(current.settings.environments) == ["default"]
    assert current.settings.quotas == pb.AccountQuotas(
        environments=10, memories=100_000, pending_suggestions=10_000,
        receipts_per_day=100_000, runs_per_day=10_000)
    changed = await update(stub, ADMIN, pb.AccountSettings(
        environments=["default", "production"]), "environments")
    assert list(changed.settings.environments) == ["default", "production"]
    for values, field in [(["prod", "prod"], "settings.environments"),
                          (["ok", "bad id"], "settings.environments[1]"),
                          ([], "settings.environments")]:
        error = await rpc_error(update(stub, ADMIN, pb.AccountSettings(environments=values),
                                       "environments"))
        assert (error.code, error.field_violations.keys()) == (
            grpc.StatusCode.INVALID_ARGUMENT, {field}), values
    error = await rpc_error(update(stub, who(user="u1"), pb.AccountSettings(
        environments=["x"]), "environments"))
    assert error.reason == "ADMIN_REQUIRED"


async def test_more_environments_than_the_quota_are_refused(acme):
    stub = acme.memory.stub
    eleven = [f"env{i}" for i in range(11)]
    error = await rpc_error(update(stub, ADMIN, pb.AccountSettings(environments=eleven),
                                   "environments"))
    assert refused_by_quota(error, "environments") and error.metadata["limit"] == "10"
    await update(stub, OPERATOR, pb.AccountSettings(
        quotas=pb.AccountQuotas(environments=11)), "quotas.environments")
    changed = await update(stub, ADMIN, pb.AccountSettings(environments=eleven), "environments")
    assert len(changed.settings.environments) == 11


async def test_only_the_operator_sets_quotas_and_zero_restores_the_default(acme):
    stub = acme.memory.stub
    error = await rpc_error(update(stub, ADMIN, pb.AccountSettings(
        quotas=pb.AccountQuotas(memories=10**9)), "quotas.memories"))
    assert (error.code, error.reason) == (grpc.StatusCode.PERMISSION_DENIED, "OPERATOR_REQUIRED")
    raised = await update(stub, OPERATOR, pb.AccountSettings(
        quotas=pb.AccountQuotas(memories=5, runs_per_day=7)), "quotas.memories",
        "quotas.runs_per_day")
    assert (raised.settings.quotas.memories, raised.settings.quotas.runs_per_day,
            raised.settings.quotas.receipts_per_day) == (5, 7, 100_000)
    back = await update(stub, OPERATOR, pb.AccountSettings(), "quotas.memories")
    assert back.settings.quotas.memories == 100_000 and back.settings.quotas.runs_per_day == 7
    error = await rpc_error(update(stub, OPERATOR, pb.AccountSettings(
        quotas=pb.AccountQuotas(memories=-1)), "quotas.memories"))
    assert error.field_violations.keys() == {"settings.quotas.memories"}


async def test_the_memory_quota_bounds_every_way_a_memory_is_made(acme):
    stub = acme.memory.stub
    await update(stub, OPERATOR, pb.AccountSettings(quotas=pb.AccountQuotas(memories=3)),
                 "quotas.memories")
    await add(stub, ADMIN, new("first fact"))
    await stub.Store(store("second", "second fact", who=who(user="u1")))
    assert (await settings(stub)).usage.memories == 2
    other = who(environment="staging", user="u1")  # every environment counts
    await add(stub, other, new("third fact"))
    error = await rpc_error(add(stub, ADMIN, new("fourth fact")))
    assert refused_by_quota(error, "memories") and error.metadata["limit"] == "3"
    error = await rpc_error(stub.Store(store("fifth", "fifth fact", who=who(user="u1"))))
    assert refused_by_quota(error, "memories")
    exported = (await stub.ExportMemories(pb.ExportMemoriesRequest(principal=ADMIN))).jsonl
    initech = admin(account="initech", user="u1")
    await update(stub, who("initech", "operator", role=OPERATOR_ROLE), pb.AccountSettings(
        quotas=pb.AccountQuotas(memories=1)), "quotas.memories")
    error = await rpc_error(stub.ImportMemories(pb.ImportMemoriesRequest(principal=initech,
                                                                         jsonl=exported)))
    assert refused_by_quota(error, "memories")
    assert not (await stub.ListMemories(pb.ListMemoriesRequest(principal=initech))).memories
    # an edit makes no new memory, so it is never refused by the quota
    memories = (await stub.ListMemories(pb.ListMemoriesRequest(principal=ADMIN))).memories
    first = next(m for m in memories if m.content == "first fact")
    edited = await stub.EditMemory(pb.EditMemoryRequest(
        principal=ADMIN, memory_id=first.id, expected_version=first.version,
        edit=pb.MemoryEdit(content="first fact, edited"), update_mask=mask("content")))
    assert edited.memory.version == first.version + 1


async def test_receipts_per_day_are_bounded_and_old_ones_deleted(acme):
    stub = acme.memory.stub
    await acme.add("The deploy window opens on Tuesdays", key="deploys")
    await update(stub, OPERATOR, pb.AccountSettings(quotas=pb.AccountQuotas(receipts_per_day=2)),
                 "quotas.receipts_per_day")
    first = await acme.retrieve("deploy window")
    await acme.retrieve("deploy window")
    error = await rpc_error(acme.retrieve("deploy window"))
    assert refused_by_quota(error, "receipts_per_day")
    assert (await settings(stub)).usage.receipts_today == 3  # the refused one is counted
    connection = await asyncpg.connect(acme.memory.dsn)
    try:
        assert await connection.fetchval("SELECT count(*) FROM retrieval_receipts") == 2
        assert await connection.fetchval("SELECT sum(recall_count) FROM memory_entries") == 2
        acme.clock.advance(days=1)  # a new day
        assert (await acme.retrieve("deploy window")).receipt_id
        acme.clock.advance(days=31)  # past the retention window (30 days)
        swept = await stub.RunHygiene(pb.RunHygieneRequest())
        assert swept.receipts_deleted == 3
        assert await connection.fetchval("SELECT count(*) FROM retrieval_receipts") == 0
        assert await connection.fetchval("SELECT count(*) FROM retrieval_receipt_items") == 0
        assert await connection.fetchval("SELECT count(*) FROM account_daily_usage") == 0
    finally:
        await connection.close()
    gone = await rpc_error(acme.stub.GetReceipt(retrieval_pb.GetReceiptRequest(
        principal=who(), receipt_id=first.receipt_id)))
    assert gone.code == grpc.StatusCode.NOT_FOUND


async def test_accounts_keep_the_environments_their_data_is_in(postgres, tmp_path):
    dsn = await fresh_database(postgres)
    earlier = tmp_path / "migrations"
    earlier.mkdir()
    for path in sorted(MIGRATIONS.glob("000[1-7]_*.sql")):
        shutil.copy(path, earlier / path.name)
    pool = await pools.create_pool(dsn, min_size=1, max_size=2)
    try:
        await migrations.apply(pool, "agent_memory", earlier)
        await pool.execute(
            "INSERT INTO agent_settings (account_id, environment, agent_id, memory_bound,"
            " updated_at) VALUES ('acme', 'production', 'helper', true, now()),"
            " ('globex', 'staging', 'helper', true, now())")
        await migrations.apply(pool, "agent_memory", MIGRATIONS)
        rows = await pool.fetch("SELECT account_id, environments FROM account_settings"
                                " ORDER BY account_id")
    finally:
        await pool.close()
    assert [(r["account_id"], list(r["environments"])) for r in rows] == [
        ("acme", ["default", "production"]), ("globex", ["default", "staging"])]
