"""Concurrent changes of one memory: per version exactly one wins, the others are
told VERSION_CONFLICT, and no update is lost."""

from __future__ import annotations

import asyncio

import grpc

from libs.errors import error_details
from testkit.memory_client import pb
from tests.agent_memory.library import add, edit, new, who

ME = who(user="u1")
WRITERS = 12


async def _attempt(memory, memory_id: str, expected: int, content: str):
    try:
        return await edit(memory.stub, ME, memory_id, expected, content=content)
    except grpc.aio.AioRpcError as exc:
        return error_details(exc)


async def test_concurrent_edits_of_one_version_exactly_one_wins(memory):
    created = await add(memory.stub, ME, new("round 0", key="counter"))
    winners = []
    for round_ in range(1, 6):
        results = await asyncio.gather(*(
            _attempt(memory, created.id, round_, f"round {round_} by writer {w}")
            for w in range(WRITERS)))
        won = [r for r in results if isinstance(r, pb.Entry)]
        lost = [r for r in results if not isinstance(r, pb.Entry)]
        assert len(won) == 1, results
        assert won[0].version == round_ + 1
        assert len(lost) == WRITERS - 1
        assert {(e.code, e.reason) for e in lost} == {
            (grpc.StatusCode.FAILED_PRECONDITION, "VERSION_CONFLICT")}
        winners.append(won[0].content)
    reply = await memory.stub.GetMemory(pb.GetMemoryRequest(principal=ME, memory_id=created.id))
    assert reply.memory.version == 6 and reply.memory.content == winners[-1]
    # Every winning edit is in the history, in order: none was lost or overwritten.
    assert [v.entry.content for v in reply.versions] == ["round 0", *winners]


async def test_a_delete_racing_an_edit_of_the_same_version(memory):
    created = await add(memory.stub, ME, new("contested", key="contested"))

    async def delete():
        try:
            return await memory.stub.DeleteMemory(pb.DeleteMemoryRequest(
                principal=ME, memory_id=created.id, expected_version=1))
        except grpc.aio.AioRpcError as exc:
            return error_details(exc)

    edited, deleted = await asyncio.gather(_attempt(memory, created.id, 1, "edited"), delete())
    outcomes = [isinstance(edited, pb.Entry), isinstance(deleted, pb.DeleteMemoryResponse)]
    assert outcomes.count(True) == 1, (edited, deleted)
    reply = await memory.stub.GetMemory(pb.GetMemoryRequest(principal=ME, memory_id=created.id))
    assert reply.memory.version == 2 and len(reply.versions) == 2
