"""Supersede and time: superseded memories hidden and counted (or returned when asked),
as-of reads on the recorded and the valid axis, temporal filters."""

from __future__ import annotations

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import retrieval_pb2 as pb
from google.protobuf import field_mask_pb2, timestamp_pb2

from libs.tokens import count_tokens
from tests.retrieval.conftest import who


def stamp(value) -> timestamp_pb2.Timestamp:
    found = timestamp_pb2.Timestamp()
    found.FromDatetime(value)
    return found


async def _supersede(retrieval, old, new) -> None:
    await retrieval.memory.stub.SupersedeMemory(memory_pb.SupersedeMemoryRequest(
        principal=who(), memory_id=old.id, superseded_by=new.id))


async def test_superseded_memories_are_hidden_and_counted(retrieval):
    old = await retrieval.add("Deploys to production happen on Fridays", key="deploy-day")
    retrieval.clock.advance(days=1)
    new = await retrieval.add("Deploys to production happen on Tuesdays", key="deploy-day-v2")
    await _supersede(retrieval, old, new)
    await retrieval.project()
    found = await retrieval.retrieve("when do production deploys happen")
    assert [m.memory.id for m in found.workspace_entries] == [new.id]
    assert found.superseded_hidden_count == 1
    shown = await retrieval.retrieve("when do production deploys happen",
                                     include_superseded=True)
    by_id = {m.memory.id: m for m in shown.workspace_entries}
    assert set(by_id) == {old.id, new.id} and shown.superseded_hidden_count == 0
    assert by_id[old.id].superseded and by_id[old.id].trust.contradiction_risk == 1.0
    assert by_id[old.id].trust.composite == 0.0


async def test_the_graph_leg_follows_supersede_links(retrieval):
    old = await retrieval.add("Backups are kept for 7 days", key="backups")
    new = await retrieval.add("Backups are kept for 30 days in cold storage", key="backups-v2")
    await _supersede(retrieval, old, new)
    await retrieval.project()
    found = await retrieval.retrieve(
        "how long are backups retained", raw=True, min_score=0.0, explain=True,
        include_superseded=True, overrides=pb.RetrievalOverrides(leg_weights={
            "vector": 0.0, "fulltext": 0.0, "entity": 0.0, "episode": 0.0, "graph": 1.0}))
    assert [r.memory.id for r in found.results] == [old.id]
    assert [leg.leg for leg in found.results[0].explanation.legs] == ["Graph"]


async def test_as_of_returns_the_version_current_then(retrieval):
    created = retrieval.clock.now()
    memory = await retrieval.add("The billing team lead is Marta", key="billing-lead")
    retrieval.clock.advance(days=2)
    await retrieval.memory.stub.EditMemory(memory_pb.EditMemoryRequest(
        principal=who(), memory_id=memory.id, expected_version=1,
        edit=memory_pb.MemoryEdit(content="The billing team lead is Jonas"),
        update_mask=field_mask_pb2.FieldMask(paths=["content"])))
    await retrieval.project()
    retrieval.clock.advance(days=1)
    now = await retrieval.retrieve("who leads the billing team")
    assert [m.memory.content for m in now.workspace_entries] == ["The billing team lead is Jonas"]
    then = await retrieval.retrieve("who leads the billing team Marta",
                                    as_of=stamp(created.replace(hour=13)))
    assert [(m.memory.content, m.memory.version) for m in then.workspace_entries] == [
        ("The billing team lead is Marta", 1)]
    before = await retrieval.retrieve("who leads the billing team",
                                      as_of=stamp(created.replace(hour=11)))
    assert list(before.workspace_entries) == []


async def test_valid_axis_shows_what_held_then_with_todays_content(retrieval):
    start = retrieval.clock.now()
    old = await retrieval.add("The on-call rotation is weekly", key="on-call")
    retrieval.clock.advance(days=5)
    new = await retrieval.add("The on-call rotation is every two weeks", key="on-call-v2")
    await _supersede(retrieval, old, new)
    await retrieval.project()
    query = "how often does the on-call rotation change"
    then = await retrieval.retrieve(query, as_of=stamp(start.replace(day=start.day + 1)),
                                    as_of_axis=pb.AS_OF_AXIS_VALID)
    assert [m.memory.id for m in then.workspace_entries] == [old.id]
    assert then.superseded_hidden_count == 0
    later = await retrieval.retrieve(query, as_of=stamp(start.replace(day=start.day + 6)),
                                     as_of_axis=pb.AS_OF_AXIS_VALID)
    assert [m.memory.id for m in later.workspace_entries] == [new.id]
    assert later.superseded_hidden_count == 1


async def test_temporal_filters_work_on_creation_time(retrieval):
    first = retrieval.clock.now()
    await retrieval.add("Sprint 1 retro: too many meetings", key="retro-1")
    retrieval.clock.advance(days=14)
    await retrieval.add("Sprint 2 retro: flaky tests", key="retro-2")
    retrieval.clock.advance(days=14)
    await retrieval.add("Sprint 3 retro: good velocity", key="retro-3")
    query = "sprint retro notes"

    async def keys(**fields) -> list[str]:
        found = await retrieval.retrieve(query, raw=True, min_score=0.0, **fields)
        return sorted(r.memory.key for r in found.results)

    day = 86400
    assert await keys(temporal_after=stamp(first)) == ["retro-2", "retro-3"]
    assert await keys(temporal_before=timestamp_pb2.Timestamp(
        seconds=int(first.timestamp()) + 20 * day)) == ["retro-1", "retro-2"]
    anchored = await retrieval.retrieve(query, raw=True, min_score=0.0, explain=True,
                                        temporal_anchor=stamp(first))
    recency = {r.memory.key: next(f.value for f in r.explanation.factors if f.name == "recency")
               for r in anchored.results}
    assert recency["retro-1"] == 1.0 and recency["retro-3"] < recency["retro-2"] < 1.0


async def test_an_edited_memory_is_counted_by_its_new_line(retrieval):
    memory = await retrieval.add("The billing team lead is Marta", key="billing-lead")
    await retrieval.project()

    async def counted() -> tuple[int, int]:
        found = await retrieval.retrieve("who leads the billing team")
        [item] = found.workspace_entries
        [line] = [line for line in found.rendered.splitlines() if item.memory.content in line]
        return item.tokens, count_tokens(line + "\n")

    before = await counted()
    await retrieval.memory.stub.EditMemory(memory_pb.EditMemoryRequest(
        principal=who(), memory_id=memory.id, expected_version=1,
        edit=memory_pb.MemoryEdit(content="The billing team lead is Jonas Oliveira-Fernandes,"
                                          " acting until the spring reorganisation"),
        update_mask=field_mask_pb2.FieldMask(paths=["content"])))
    await retrieval.project()
    after = await counted()
    assert before[0] == before[1] and after[0] == after[1] and after[0] > before[0]
