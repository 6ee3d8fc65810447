"""How far each follower of the change feed is behind the journal."""

from __future__ import annotations

from dataclasses import dataclass, field

from libs.clients.journal import JournalClient
from libs.errors import DomainError
from libs.pacing import IdleBackoff

REFRESH_SECONDS = 5.0
IDLE_REFRESH_SECONDS = 30.0


@dataclass(frozen=True)
class ShardLag:
    shard: int
    projected: int
    journal: int

    @property
    def lag(self) -> int:
        return max(0, self.journal - self.projected)


def shard_lags(positions: dict[int, int], journal: dict[int, int]) -> list[ShardLag]:
    return [ShardLag(shard, projected, max(journal.get(shard, 0), projected))
            for shard, projected in sorted(positions.items())]


@dataclass
class JournalSequences:
    """The journal's durable sequence per shard, as last seen: read every REFRESH_SECONDS
    while it moves (or cannot be read), then less and less often while it stands still,
    at least every IDLE_REFRESH_SECONDS."""

    journal: JournalClient
    sequences: dict[int, int] = field(default_factory=dict)

    async def refresh(self) -> None:
        self.sequences = await self.journal.durable_sequences()

    async def run_forever(self) -> None:
        pacing = IdleBackoff(REFRESH_SECONDS, IDLE_REFRESH_SECONDS)
        while True:
            before = self.sequences
            try:
                await self.refresh()
                moved = self.sequences != before
            except DomainError:
                moved = True  # try again soon
            await pacing.pause(busy=moved)
