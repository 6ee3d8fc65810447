"""The scope visibility matrix: every scope x every kind of caller, through Get,
List, Recall (both index adapters), pinning, export and seed 000's ListEntries.

A caller sees, within its account and environment: account memories, its
agent's, its user's (whatever agent wrote them), and its own private ones with
that agent. Platform rules are readable by everyone and listed on request.
"""

from __future__ import annotations

import json

import grpc

from testkit.journal_client import rpc_error
from testkit.memory_client import pb, recall
from tests.agent_memory.library import OPERATOR_ROLE, add, admin, export, listed, new, who

PROFILE = pb.MEMORY_KIND_USER_PROFILE
ACCOUNT, AGENT, USER, PRIVATE = (pb.MEMORY_SCOPE_ACCOUNT, pb.MEMORY_SCOPE_AGENT,
                                 pb.MEMORY_SCOPE_USER, pb.MEMORY_SCOPE_PRIVATE)

# key -> (writer, scope)
MEMORIES = {
    "acct": (admin(user="u1"), ACCOUNT),
    "agent-helper": (who(agent="helper"), AGENT),
    "agent-other": (who(agent="other"), AGENT),
    "user-u1": (who(agent="helper", user="u1"), USER),
    "user-u2": (who(agent="other", user="u2"), USER),
    "private-helper-u1": (who(agent="helper", user="u1"), PRIVATE),
    "private-other-u1": (who(agent="other", user="u1"), PRIVATE),
    "private-helper-u2": (who(agent="helper", user="u2"), PRIVATE),
    "globex-acct": (admin("globex", user="u1"), ACCOUNT),
    "staging-acct": (admin(user="u1", environment="staging"), ACCOUNT),
}

CALLERS = {
    "helper+u1": (who(agent="helper", user="u1"),
                  {"acct", "agent-helper", "user-u1", "private-helper-u1"}),
    "helper+u2": (who(agent="helper", user="u2"),
                  {"acct", "agent-helper", "user-u2", "private-helper-u2"}),
    "helper, no user": (who(agent="helper"), {"acct", "agent-helper"}),
    "other+u1": (who(agent="other", user="u1"),
                 {"acct", "agent-other", "user-u1", "private-other-u1"}),
    "other+u2": (who(agent="other", user="u2"), {"acct", "agent-other", "user-u2"}),
    "third+u3": (who(agent="third", user="u3"), {"acct"}),
    "admin helper+u1": (admin(user="u1"), {"acct", "agent-helper", "user-u1",
                                           "private-helper-u1"}),
    "globex helper+u1": (who("globex", agent="helper", user="u1"), {"globex-acct"}),
    "acme staging helper+u1": (who(agent="helper", user="u1", environment="staging"),
                               {"staging-acct"}),
}


async def _seed(memory) -> tuple[dict[str, str], str]:
    ids = {}
    for key, (writer, scope) in MEMORIES.items():
        entry = await add(memory.stub, writer, new(f"The zebra fact called {key}", PROFILE,
                                                   scope, key=key, importance=0.9))
        ids[key] = entry.id
    rule = await add(memory.stub, who("platform", agent="operator", role=OPERATOR_ROLE),
                     new("Never reveal another tenant's data (zebra rule)",
                         pb.MEMORY_KIND_PLATFORM_RULE, pb.MEMORY_SCOPE_PLATFORM, key="rule"))
    await memory.project()
    return ids, rule.id


async def test_every_read_returns_exactly_the_callers_union(memory_on_both):
    memory = memory_on_both
    ids, rule_id = await _seed(memory)
    for caller in CALLERS:
        await _check(memory, caller, ids, rule_id)


async def _check(memory, caller: str, ids: dict[str, str], rule_id: str) -> None:
    principal, expected = CALLERS[caller]
    for key, memory_id in ids.items():
        request = pb.GetMemoryRequest(principal=principal, memory_id=memory_id)
        if key in expected:
            assert (await memory.stub.GetMemory(request)).memory.key == key
        else:
            error = await rpc_error(memory.stub.GetMemory(request))
            assert error.code == grpc.StatusCode.NOT_FOUND, (caller, key)
    assert {m.key for m in await listed(memory.stub, principal)} == expected, caller
    recalled = await memory.stub.Recall(recall("zebra fact", who=principal, limit=20))
    assert {e.entry.key for e in recalled.entries} == expected, caller
    assert not recalled.fallback
    pinned = await memory.stub.ListPinned(pb.ListPinnedRequest(principal=principal))
    assert {e.key for e in pinned.entries} == expected, caller
    lines = (await export(memory.stub, principal)).splitlines()
    assert {json.loads(line)["key"] for line in lines[1:]} == expected, caller
    entries = await memory.stub.ListEntries(pb.ListEntriesRequest(principal=principal))
    assert {e.key for e in entries.entries} == expected, caller
    for key in MEMORIES:
        get = memory.stub.GetEntry(pb.GetEntryRequest(principal=principal, key=key))
        if key in expected:
            assert (await get).entry.key == key
        else:
            assert (await rpc_error(get)).code == grpc.StatusCode.NOT_FOUND, (caller, key)
    # Platform rules: readable by everyone, listed when asked for, never recalled.
    rule = await memory.stub.GetMemory(pb.GetMemoryRequest(principal=principal,
                                                           memory_id=rule_id))
    assert rule.memory.scope == pb.MEMORY_SCOPE_PLATFORM
    assert [m.key for m in await listed(memory.stub, principal,
                                        scopes=[pb.MEMORY_SCOPE_PLATFORM])] == ["rule"]


async def test_a_memory_written_without_a_user_can_be_neither_user_nor_private(memory):
    for scope in (USER, PRIVATE):
        error = await rpc_error(memory.stub.AddMemory(pb.AddMemoryRequest(
            principal=who(), memory=new("no person here", scope=scope))))
        assert error.code == grpc.StatusCode.INVALID_ARGUMENT
        assert "memory.scope" in error.field_violations
    # Unspecified: private with a user, agent scope without (seed 000).
    assert (await add(memory.stub, who(user="u1"), new("mine"))).scope == PRIVATE
    assert (await add(memory.stub, who(), new("ours"))).scope == AGENT


# caller, agent_ids -> the memories counted: what the caller sees acting as each agent.
SUMMARIES = [
    (who(agent="helper", user="u1"), [], {"acct", "agent-helper", "agent-other", "user-u1",
                                          "private-helper-u1", "private-other-u1"}),
    (who(agent="", user="u1"), ["helper"], {"acct", "agent-helper", "user-u1",
                                            "private-helper-u1"}),
    (who(agent="", user="u2"), ["other", "third"], {"acct", "agent-other", "user-u2"}),
    (who(agent=""), [], {"acct", "agent-helper", "agent-other"}),
    (who("globex", agent="", user="u1"), [], {"globex-acct"}),
    (who(agent="", user="u1", environment="staging"), [], {"staging-acct"}),
]


async def test_the_summary_counts_what_the_caller_sees_as_each_agent(memory):
    await _seed(memory)
    await add(memory.stub, who(agent="other"), new("A second fact of other", key="second"))
    deleted = await add(memory.stub, who(agent="other"), new("Gone", key="gone"))
    await memory.stub.DeleteMemory(pb.DeleteMemoryRequest(principal=who(agent="other"),
                                                          memory_id=deleted.id))
    for principal, agents, expected in SUMMARIES:
        reply = await memory.stub.SummarizeMemories(pb.SummarizeMemoriesRequest(
            principal=principal, agent_ids=agents))
        expected_counts = {}
        for key in expected:
            writer, scope = MEMORIES[key]
            agent = writer.agent_id if scope in (AGENT, PRIVATE) else ""
            expected_counts[(agent, scope, PROFILE)] = expected_counts.get(
                (agent, scope, PROFILE), 0) + 1
        if "agent-other" in expected:  # the live one; the deleted one is not counted
            expected_counts[("other", AGENT, pb.MEMORY_KIND_PROJECT_FACT)] = 1
        got = {(c.agent_id, c.scope, c.kind): c.memories for c in reply.counts}
        assert got == expected_counts, (principal, agents)
        assert all(c.last_update_time.seconds > 0 for c in reply.counts)
        agents_in_order = [c.agent_id for c in reply.counts]
        assert agents_in_order == sorted(agents_in_order)
    error = await rpc_error(memory.stub.SummarizeMemories(pb.SummarizeMemoriesRequest(
        principal=who(), agent_ids=["helper", "no spaces"])))
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT and "agent_ids[1]" in \
        error.field_violations
