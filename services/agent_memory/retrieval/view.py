"""Which state of the store a retrieval reads, as SQL: now, as recorded at a past time,
or as valid at a past time.

Every leg and every section selects from :meth:`View.source` and filters with
:meth:`View.where`, which always holds the caller's visibility predicate
(``sql.visible``): tenant isolation is in the SQL of every statement.

- ``now``: current memories, not deleted, not expired;
- ``recorded`` (as of t): the version of each memory that was current at t
  (memory_versions, recorded_at <= t < recorded_until), not deleted or
  expired at t;
- ``valid`` (as of t): today's knowledge of what held at t: current memories
  created by t, not expired by t, not deleted, and superseded only if that
  happened by t.

Superseded memories are *not* filtered here: the filter stage hides and
counts them (seed: supersededHiddenCount).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from services.agent_memory.memories.model import Actor
from services.agent_memory.memories.rules import Kind
from services.agent_memory.memories.store import sql
from services.agent_memory.memories.store.sql import Query, visible
from services.agent_memory.retrieval.model import AsOfAxis

_VERSION_SOURCE = ("(SELECT memory_id AS id, account_id, environment, version, "
                   f"{', '.join(sql.SNAPSHOT)}, search_simple, recorded_at, recorded_until"
                   " FROM memory_versions)")


@dataclass(frozen=True)
class View:
    now: datetime
    as_of: datetime | None = None
    axis: AsOfAxis = AsOfAxis.RECORDED

    @property
    def at(self) -> datetime:
        """The time the read is about: expiry, recency and freshness are measured from it."""
        return self.as_of or self.now

    @property
    def versions(self) -> bool:
        return self.as_of is not None and self.axis == AsOfAxis.RECORDED

    def source(self, alias: str = "m") -> str:
        return f"{_VERSION_SOURCE} {alias}" if self.versions else f"memory_entries {alias}"

    def where(self, q: Query, actor: Actor, kinds: Sequence[Kind], alias: str = "m", *,
              platform: bool = False) -> str:
        return " AND ".join([visible(q, actor, alias, platform=platform),
                             *self.conditions(q, kinds, alias)])

    def conditions(self, q: Query, kinds: Sequence[Kind] | None, alias: str = "m") -> list[str]:
        """The view's conditions besides visibility (``kinds`` None: any kind; ``alias``
        empty: bare column names)."""
        a = f"{alias}." if alias else ""
        conditions = [f"{a}deleted_at IS NULL",
                      f"({a}expires_at IS NULL OR {a}expires_at > {q(self.at)})"]
        if kinds is not None:
            conditions.append(f"{a}kind = ANY({q([str(k) for k in kinds])}::text[])")
        if self.versions:
            at = q(self.at)
            conditions.append(f"{a}recorded_at <= {at} AND ({a}recorded_until IS NULL"
                              f" OR {a}recorded_until > {at})")
        elif self.as_of is not None:
            conditions.append(f"{a}created_at <= {q(self.at)}")
        return conditions

    def superseded(self, q: Query, alias: str = "m") -> str:
        """A boolean SQL expression: the memory counts as superseded in this view."""
        if self.as_of is not None and not self.versions:
            return f"({alias}.superseded_at IS NOT NULL AND {alias}.superseded_at <= {q(self.at)})"
        return f"({alias}.superseded_by IS NOT NULL)"
