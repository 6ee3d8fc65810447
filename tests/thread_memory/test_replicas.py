"""Two thread-memory replicas follow the same feed and share one cursor object per shard."""

from __future__ import annotations

from libs.object_store import LocalObjectStore
from services.thread_memory.counting import ObjectStoreCursors


class ReadThenRace(LocalObjectStore):
    """The real local store; after the first read, another replica's save lands before
    this replica writes (the interleaving two replicas hit when they save together)."""

    def __init__(self, root, other: ObjectStoreCursors, position: int) -> None:
        super().__init__(root)
        self._other = other
        self._position = position
        self.raced = False

    async def get(self, path):
        stored = await super().get(path)
        if not self.raced:
            self.raced = True
            await self._other.save(0, self._position, [])
        return stored


async def test_replicas_saving_together_keep_the_furthest_cursor_and_never_fail(tmp_path):
    first = ObjectStoreCursors(LocalObjectStore(tmp_path))
    racing = ReadThenRace(tmp_path, first, position=15)
    second = ObjectStoreCursors(racing)
    assert await first.load(0) == (0, []) and await second.load(0) == (0, [])
    racing.raced = False

    await first.save(0, 10, [])
    await second.save(0, 20, [])  # conflict, re-read (the first saves 15 meanwhile), retry

    assert racing.raced
    assert await ObjectStoreCursors(LocalObjectStore(tmp_path)).load(0) == (20, [])
    await first.save(0, 18, [])  # behind what is stored: the stored snapshot stands
    assert await ObjectStoreCursors(LocalObjectStore(tmp_path)).load(0) == (20, [])
