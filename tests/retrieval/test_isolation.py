"""Tenant isolation through every leg (graph and entity included), on both index adapters:
no leg returns another account's memories, another agent's, or another user's private
ones; episodes and the sections obey the same predicate."""

from __future__ import annotations

import pytest
from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from agentmemory.common.v1 import principal_pb2, run_pb2

from tests.retrieval.conftest import who

ADMIN = principal_pb2.KEY_ROLE_ADMIN
TEXT = "Zephyr deployment notes reviewed by Kowalski: {}"

# key -> (principal, scope)
MEMORIES = {
    "acme-agent": (who(), "agent"),
    "acme-account": (who(role=ADMIN), "account"),
    "acme-ana-private": (who(user="ana"), "private"),
    "acme-ana-user": (who(user="ana"), "user"),
    "acme-other-agent": (who(agent="other"), "agent"),
    "globex-agent": (who(account="globex"), "agent"),
    "globex-ana-private": (who(account="globex", user="ana"), "private"),
}
CALLERS = {
    "acme, no user": (who(), {"acme-agent", "acme-account"}),
    "acme, ana": (who(user="ana"), {"acme-agent", "acme-account", "acme-ana-private",
                                    "acme-ana-user"}),
    "acme, bob": (who(user="bob"), {"acme-agent", "acme-account"}),
    "acme, other agent": (who(agent="other", user="ana"), {"acme-account", "acme-other-agent",
                                                           "acme-ana-user"}),
    "globex, ana": (who(account="globex", user="ana"), {"globex-agent", "globex-ana-private"}),
}


async def _seed(retrieval) -> None:
    for key, (principal, scope) in MEMORIES.items():
        await retrieval.add(TEXT.format(key), key=key, scope=scope, principal=principal,
                            run_id=f"run-{key}", thread_id=f"thread-{key}")
        await retrieval.stub.RecordEpisode(pb.RecordEpisodeRequest(
            principal=principal, thread_id=f"thread-{key}", run_id=f"run-{key}",
            outcome=run_pb2.RUN_OUTCOME_SUCCEEDED, task=f"Zephyr rollout for {key}",
            summary="Kowalski rolled out Zephyr. Everything went fine."))
    await retrieval.project()


@pytest.mark.parametrize("leg", ["vector", "fulltext", "entity", "episode", "graph"])
async def test_no_leg_crosses_accounts_agents_or_users(retrieval_on_both, leg):
    await _seed(retrieval_on_both)
    for name, (principal, allowed) in CALLERS.items():
        weights = {n: 1.0 if n == leg else 0.0
                   for n in ("vector", "fulltext", "entity", "episode", "graph", "type")}
        found = await retrieval_on_both.retrieve(
            "zephyr kowalski deployment notes", principal=principal, raw=True, min_score=0.0,
            include_superseded=True, overrides=pb.RetrievalOverrides(leg_weights=weights))
        keys = {r.memory.key for r in found.results}
        assert keys <= allowed, (name, keys - allowed)
        if leg == "episode":  # through the caller's own episodes only
            assert keys == {k for k in allowed if _episode_visible(MEMORIES[k][0], principal)}
        elif leg == "graph":  # neighbours (through shared names) of the top vector hits
            assert keys, name
        else:
            assert keys == allowed, (name, allowed - keys)


async def test_sections_episodes_and_run_memories_stay_with_their_owner(retrieval):
    await _seed(retrieval)
    for name, (principal, allowed) in CALLERS.items():
        found = await retrieval.retrieve("zephyr rollout", principal=principal)
        episodes = {e.run_id.removeprefix("run-") for e in found.relevant_episodes}
        assert episodes <= allowed, (name, episodes - allowed)
        for key in MEMORIES:
            run = await retrieval.retrieve("", principal=principal, run_id=f"run-{key}")
            delivered = {m.memory.key for m in run.session_entries}
            assert delivered == ({key} & allowed), (name, key, delivered)
            owner = MEMORIES[key][0]
            assert (run.session_summary.source == "episode") == _episode_visible(
                owner, principal), (name, key)


def _episode_visible(owner, caller) -> bool:
    """An episode belongs to its run's agent, and to its user when the run had one."""
    return (owner.account_id, owner.agent_id) == (caller.account_id, caller.agent_id) \
        and owner.user_id in ("", caller.user_id)
