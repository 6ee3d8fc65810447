"""Store request ids belong to their caller (account, agent, user) and to the
request's content: a retry answers the same, anyone else's reuse is a new store,
and the same id with other content is refused."""

from __future__ import annotations

import grpc

from testkit.journal_client import rpc_error
from testkit.memory_client import pb, principal, store

U1, U2 = principal(user="u1"), principal(user="u2")


async def test_another_user_reusing_a_request_id_never_gets_the_first_users_entry(memory):
    first = await memory.stub.Store(store("diary", "U1 keeps a diary in Lisbon", who=U1,
                                          request_id="req-7"))
    second = await memory.stub.Store(store("diary", "U2 keeps a diary in Porto", who=U2,
                                           request_id="req-7"))
    assert second.entry.id != first.entry.id
    assert second.entry.user_id == "u2" and second.entry.content == "U2 keeps a diary in Porto"
    # The same content too: still u2's own entry.
    third = await memory.stub.Store(store("diary2", "U1 keeps a diary in Lisbon",
                                          who=principal(user="u3"), request_id="req-7"))
    assert third.entry.user_id == "u3" and third.entry.id != first.entry.id
    other_agent = await memory.stub.Store(store("diary", "U1 keeps a diary in Lisbon",
                                                who=principal(agent="other", user="u1"),
                                                request_id="req-7"))
    assert other_agent.entry.id != first.entry.id


async def test_a_retry_from_the_same_caller_answers_the_same(memory):
    first = await memory.stub.Store(store("city", "Lives in Lisbon", who=U1, request_id="r1"))
    again = await memory.stub.Store(store("city", "Lives in Lisbon", who=U1, request_id="r1"))
    assert again.entry.id == first.entry.id and again.entry.version == 1


async def test_the_same_request_id_with_other_content_is_already_exists(memory):
    await memory.stub.Store(store("city", "Lives in Lisbon", who=U1, request_id="r1"))
    for changed in (store("city", "Lives in Porto", who=U1, request_id="r1"),
                    store("town", "Lives in Lisbon", who=U1, request_id="r1"),
                    store("city", "Lives in Lisbon", who=U1, request_id="r1", importance=0.9)):
        error = await rpc_error(memory.stub.Store(changed))
        assert error.code == grpc.StatusCode.ALREADY_EXISTS
        assert error.reason == "REQUEST_ID_REUSED"
    listed = await memory.stub.ListEntries(pb.ListEntriesRequest(principal=U1))
    assert [(e.key, e.content) for e in listed.entries] == [("city", "Lives in Lisbon")]
