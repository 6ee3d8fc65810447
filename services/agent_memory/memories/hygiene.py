"""Hygiene, daily and on RunHygiene: expire, decay, prune history, purge.

- expired memories (observations after 30 days) become tombstones, one
  audited change each (they had already left every read);
- project facts and observations not recalled for 90 days lose 0.1 importance
  a day, down to 0.1 (maintenance: no new version);
- replaced versions older than the account's retention window are deleted,
  and their content is redacted from the audit trail;
- tombstones older than the retention window are purged for real: the row,
  every version, the index point (through the outbox), and the content in
  their audit records; one ``purge`` record remains;
- request ids older than a day are forgotten;
- delivery receipts older than the account's retention window are deleted, with
  their items and credits (the per-day receipt counts with them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from services.agent_memory.memories import rules
from services.agent_memory.memories.clock import Clock
from services.agent_memory.memories.store.entries import Repository
from services.agent_memory.memories.writes import Writes

logger = logging.getLogger(__name__)

_BATCH = 500


@dataclass(frozen=True)
class HygieneReport:
    expired: int
    decayed: int
    purged: int
    pruned_versions: int
    receipts_deleted: int


class Hygiene:
    def __init__(self, repository: Repository, writes: Writes, clock: Clock) -> None:
        self._repository = repository
        self._writes = writes
        self._clock = clock

    async def run(self) -> HygieneReport:
        expired = await self._each(self._repository.expired_ids, self._writes.expire)
        decayed = await self._repository.decay(self._clock.now())
        pruned = await self._repository.prune_versions(self._clock.now())
        purged = await self._each(self._repository.purgeable_ids, self._writes.purge)
        await self._repository.forget_requests(self._clock.now() - rules.REQUEST_ID_TTL)
        receipts = 0
        while (deleted := await self._repository.purge_receipts(self._clock.now(), _BATCH)):
            receipts += deleted
        report = HygieneReport(expired, decayed, purged, pruned, receipts)
        logger.info("hygiene: %d expired, %d decayed, %d versions pruned, %d purged, %d receipts"
                    " deleted", expired, decayed, pruned, purged, receipts)
        return report

    async def _each(self, find, act) -> int:
        done = 0
        while True:
            ids = await find(self._clock.now(), _BATCH)
            handled = [await act(*identity) for identity in ids]
            done += sum(handled)
            if len(ids) < _BATCH or not any(handled):
                return done
