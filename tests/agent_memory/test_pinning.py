"""Pinning: user_profile, importance >= 0.7, visible, unexpired, by importance then recency, <= 10."""

from __future__ import annotations

from testkit.memory_client import pb, principal, store

ALICE = principal(user="alice")


async def pinned_keys(memory, who=ALICE) -> list[str]:
    reply = await memory.stub.ListPinned(pb.ListPinnedRequest(principal=who))
    return [e.key for e in reply.entries]


async def test_only_important_profile_entries_are_pinned_in_order(memory):
    await memory.stub.Store(store("fact", "Repo uses trunk-based development",
                                  pb.CATEGORY_PROJECT_FACT, importance=1.0))
    await memory.stub.Store(store("obs", "Asked about pricing twice", pb.CATEGORY_OBSERVATION,
                                  importance=1.0))
    await memory.stub.Store(store("low", "Likes cats", importance=0.69, who=ALICE))
    await memory.stub.Store(store("edge", "Name is Alice", importance=0.7, who=ALICE))
    await memory.stub.Store(store("top", "Is the CTO", importance=0.95, who=ALICE))
    memory.clock.advance(minutes=1)
    await memory.stub.Store(store("newer", "Prefers email over calls", importance=0.7, who=ALICE))
    assert await pinned_keys(memory) == ["top", "newer", "edge"]
    # A replaced entry is more recent; ties on importance go to recency.
    memory.clock.advance(minutes=1)
    await memory.stub.Store(store("edge", "Name is Alice Smith", importance=0.7, who=ALICE))
    assert await pinned_keys(memory) == ["top", "edge", "newer"]


async def test_at_most_ten_and_private_ones_only_for_their_user(memory):
    for i in range(8):
        await memory.stub.Store(store(f"mine{i}", f"private fact {i}", importance=0.8, who=ALICE))
    for i in range(8):
        await memory.stub.Store(store(f"shared{i}", f"shared fact {i}", importance=0.9))
    assert len(await pinned_keys(memory)) == 10
    bob = await pinned_keys(memory, principal(user="bob"))
    assert sorted(bob) == sorted(f"shared{i}" for i in range(8))
    alice = await pinned_keys(memory)
    assert set(alice[:8]) == {f"shared{i}" for i in range(8)} and len(alice) == 10


async def test_pinned_entries_come_from_the_database_not_the_index(memory):
    # Nothing projected: pinning does not depend on Qdrant.
    await memory.stub.Store(store("name", "Called Sam", importance=0.9, who=ALICE))
    assert await pinned_keys(memory) == ["name"]
