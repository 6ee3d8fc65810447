"""Tenant isolation: accounts never see each other; private entries stay with their user.

Checked through Get, List, Recall and pinning, on both index adapters.
"""

from __future__ import annotations

import grpc

from testkit.journal_client import rpc_error
from testkit.memory_client import pb, principal, recall, store

ACME_X = principal("acme", user="xavier")
ACME_Y = principal("acme", user="yolanda")
ACME_NOBODY = principal("acme")
GLOBEX_X = principal("globex", user="xavier")


async def _seed(memory):
    await memory.stub.Store(store("secret-project", "Xavier is secretly planning a surprise party",
                                  pb.CATEGORY_USER_PROFILE, who=ACME_X, importance=0.9))
    await memory.stub.Store(store("team-fact", "The team celebrates birthdays with a party",
                                  pb.CATEGORY_USER_PROFILE, who=ACME_NOBODY, importance=0.9))
    await memory.stub.Store(store("globex-plan", "Globex plans a party for its launch",
                                  pb.CATEGORY_USER_PROFILE, who=GLOBEX_X, importance=0.9))
    await memory.project()


async def _everything(memory, who) -> dict[str, set[str]]:
    listed = await memory.stub.ListEntries(pb.ListEntriesRequest(principal=who))
    recalled = await memory.stub.Recall(recall("party plans", who=who, limit=20))
    pinned = await memory.stub.ListPinned(pb.ListPinnedRequest(principal=who))
    return {
        "list": {e.key for e in listed.entries},
        "recall": {e.entry.key for e in recalled.entries},
        "pinned": {e.key for e in pinned.entries},
    }


async def test_each_caller_sees_exactly_what_is_theirs(memory_on_both):
    memory = memory_on_both
    await _seed(memory)
    assert await _everything(memory, ACME_X) == {
        "list": {"secret-project", "team-fact"}, "recall": {"secret-project", "team-fact"},
        "pinned": {"secret-project", "team-fact"}}
    for stranger in (ACME_Y, ACME_NOBODY):
        assert await _everything(memory, stranger) == {
            "list": {"team-fact"}, "recall": {"team-fact"}, "pinned": {"team-fact"}}
    assert await _everything(memory, GLOBEX_X) == {
        "list": {"globex-plan"}, "recall": {"globex-plan"}, "pinned": {"globex-plan"}}
    other_agent = principal("acme", agent="other-agent", user="xavier")
    assert await _everything(memory, other_agent) == {"list": set(), "recall": set(),
                                                      "pinned": set()}


async def test_get_and_forget_never_reach_another_users_or_accounts_entry(memory):
    await _seed(memory)
    for stranger in (ACME_Y, ACME_NOBODY, GLOBEX_X):
        error = await rpc_error(memory.stub.GetEntry(
            pb.GetEntryRequest(principal=stranger, key="secret-project")))
        assert error.code == grpc.StatusCode.NOT_FOUND
        forgot = await memory.stub.Forget(pb.ForgetRequest(principal=stranger, key="secret-project"))
        assert not forgot.forgotten
    mine = await memory.stub.GetEntry(pb.GetEntryRequest(principal=ACME_X, key="secret-project"))
    assert mine.entry.user_id == "xavier"


async def test_same_key_private_and_shared_resolve_to_the_callers_own_first(memory):
    await memory.stub.Store(store("lunch", "Team lunch is on Thursdays", who=ACME_NOBODY))
    await memory.stub.Store(store("lunch", "Xavier skips lunch on Thursdays", who=ACME_X))
    x = await memory.stub.GetEntry(pb.GetEntryRequest(principal=ACME_X, key="lunch"))
    y = await memory.stub.GetEntry(pb.GetEntryRequest(principal=ACME_Y, key="lunch"))
    assert x.entry.content.startswith("Xavier") and y.entry.content.startswith("Team")
    assert (await memory.stub.Forget(pb.ForgetRequest(principal=ACME_X, key="lunch"))).forgotten
    x = await memory.stub.GetEntry(pb.GetEntryRequest(principal=ACME_X, key="lunch"))
    assert x.entry.content.startswith("Team")
