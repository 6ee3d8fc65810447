"""The SQL of the settings family: account_settings (the account's switches, retention
and quotas), agent_settings, and the usage counters the quotas are checked against
(account_usage and account_daily_usage, kept by the triggers of migration 0008).

:class:`SettingsReads` and :class:`SettingsWrites` are the part of ``entries``'
Repository and Transaction over these tables, so that a write reads and changes
settings on its own transaction's connection."""

from __future__ import annotations

from datetime import date, datetime

import asyncpg

from libs import postgres
from libs.postgres import Connection
from libs.quotas import quota_exceeded
from services.agent_memory.memories import rules
from services.agent_memory.memories.model import (
    AccountSettings,
    AccountUsage,
    Actor,
    AgentSettings,
    Quotas,
)
from services.agent_memory.memories.rules import ExtractionMode


def account_columns(prefix: str = "") -> str:
    names = ("memory_enabled", "retention_days", "default_token_budget", "updated_at",
             "environments", *(f"quota_{name}" for name in rules.QUOTA_DEFAULTS))
    return ", ".join(prefix + name for name in names)


_SETTINGS = account_columns()
_ACCOUNT = f"SELECT {_SETTINGS} FROM account_settings WHERE account_id = $1"


def account_settings_from(row) -> AccountSettings:
    if row is None or row["memory_enabled"] is None:
        return AccountSettings()
    quotas = Quotas(**{name: row[f"quota_{name}"] or default
                       for name, default in rules.QUOTA_DEFAULTS.items()})
    return AccountSettings(row["memory_enabled"], row["retention_days"],
                           row["default_token_budget"], row["updated_at"],
                           tuple(row["environments"]), quotas)


_AGENT_SETTINGS = ("memory_bound", "extraction_mode", "procedures_enabled", "updated_at",
                   "relevant_memories_enabled", "relevant_memories_token_budget")


def _agent_settings(row) -> AgentSettings:
    if row is None or row["memory_bound"] is None:
        return AgentSettings()
    return AgentSettings(row["memory_bound"], ExtractionMode(row["extraction_mode"]),
                         row["procedures_enabled"], row["updated_at"],
                         row["relevant_memories_enabled"], row["relevant_memories_token_budget"])


class SettingsReads:
    """Reads over the pool (the Repository's)."""

    _pool: asyncpg.Pool

    async def account_settings(self, account_id: str) -> AccountSettings:
        return account_settings_from(await self._pool.fetchrow(_ACCOUNT, account_id))

    async def account_usage(self, account_id: str, today: date) -> AccountUsage:
        row = postgres.one_row(await self._pool.fetchrow(
            "SELECT (SELECT memories FROM account_usage WHERE account_id = $1) AS memories,"
            " (SELECT receipts FROM account_daily_usage WHERE account_id = $1 AND day = $2)"
            " AS receipts, (SELECT count(*) FROM learning_suggestions WHERE account_id = $1"
            " AND status = 'pending') AS pending", account_id, today))
        return AccountUsage(row["memories"] or 0, row["pending"], row["receipts"] or 0)

    async def agent_settings(self, actor: Actor) -> tuple[AgentSettings, bool]:
        """The agent's settings and whether memory is enabled for its account."""
        row = postgres.one_row(await self._pool.fetchrow(
            f"SELECT {', '.join('g.' + name for name in _AGENT_SETTINGS)},"
            " (SELECT memory_enabled FROM account_settings WHERE account_id = $1) AS enabled"
            " FROM (SELECT 1) one LEFT JOIN agent_settings g ON g.account_id = $1"
            " AND g.environment = $2 AND g.agent_id = $3",
            actor.account_id, actor.environment, actor.agent_id))
        return _agent_settings(row), row["enabled"] is not False


class SettingsWrites:
    """Statements inside one transaction (the Transaction's)."""

    _c: Connection

    async def settings(self, account_id: str) -> AccountSettings:
        return account_settings_from(await self._c.fetchrow(_ACCOUNT, account_id))

    async def check_memory_quota(self, account_id: str, quotas: Quotas, adding: int) -> None:
        """Room for ``adding`` more stored memories in the account (the count is kept by
        the triggers of migration 0008)."""
        stored = await self._c.fetchval(
            "SELECT memories FROM account_usage WHERE account_id = $1", account_id) or 0
        if stored + adding > quotas.memories:
            raise quota_exceeded("memories", quotas.memories,
                                 f"the account stores {stored} memories, its quota is "
                                 f"{quotas.memories}")

    async def agent_settings(self, actor: Actor) -> AgentSettings:
        row = await self._c.fetchrow(
            f"SELECT {', '.join(_AGENT_SETTINGS)} FROM agent_settings WHERE account_id = $1"
            " AND environment = $2 AND agent_id = $3 FOR UPDATE",
            actor.account_id, actor.environment, actor.agent_id)
        return _agent_settings(row)

    async def save_agent_settings(self, actor: Actor, settings: AgentSettings) -> None:
        values = ", ".join(f"${i}" for i in range(4, 4 + len(_AGENT_SETTINGS)))
        updates = ", ".join(f"{name} = excluded.{name}" for name in _AGENT_SETTINGS)
        await self._c.execute(
            f"INSERT INTO agent_settings (account_id, environment, agent_id,"
            f" {', '.join(_AGENT_SETTINGS)}) VALUES ($1, $2, $3, {values})"
            f" ON CONFLICT (account_id, environment, agent_id) DO UPDATE SET {updates}",
            actor.account_id, actor.environment, actor.agent_id,
            *(getattr(settings, name) for name in _AGENT_SETTINGS))

    async def locked_account_settings(self, account_id: str, now: datetime) -> AccountSettings:
        await self._c.execute(
            "INSERT INTO account_settings (account_id, updated_at) VALUES ($1, $2)"
            " ON CONFLICT DO NOTHING", account_id, now)
        row = await self._c.fetchrow(
            f"SELECT {_SETTINGS} FROM account_settings WHERE account_id = $1 FOR UPDATE",
            account_id)
        return account_settings_from(row)

    async def save_account_settings(self, account_id: str, settings: AccountSettings) -> None:
        quotas = [getattr(settings.quotas, name) for name in rules.QUOTA_DEFAULTS]
        defaults = list(rules.QUOTA_DEFAULTS.values())
        await self._c.execute(
            "UPDATE account_settings SET memory_enabled = $2, retention_days = $3,"
            " default_token_budget = $4, updated_at = $5, environments = $6,"
            " quota_environments = NULLIF($7::int, $12::int),"
            " quota_memories = NULLIF($8::bigint, $13::bigint),"
            " quota_pending_suggestions = NULLIF($9::int, $14::int),"
            " quota_receipts_per_day = NULLIF($10::int, $15::int),"
            " quota_runs_per_day = NULLIF($11::int, $16::int)"
            " WHERE account_id = $1",
            account_id, settings.memory_enabled, settings.retention_days,
            settings.default_token_budget, settings.updated_at, list(settings.environments),
            *quotas, *defaults)
