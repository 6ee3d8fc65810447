"""A thin test client for the journal, with message builders."""

from __future__ import annotations

from typing import Any

import grpc
from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.journal.v1 import journal_service_pb2 as pb
from agentmemory.journal.v1 import journal_service_pb2_grpc as pb_grpc

from libs.errors import ErrorDetails, error_details

USER = message_pb2.ROLE_USER
ASSISTANT = message_pb2.ROLE_ASSISTANT
TOOL = message_pb2.ROLE_TOOL


def principal(account="acme", agent="helper", user="", environment="") -> principal_pb2.Principal:
    return principal_pb2.Principal(
        account_id=account, agent_id=agent, user_id=user, environment=environment
    )


def message(id: str, content: str = "", role: int = USER, **fields: Any) -> message_pb2.Message:
    return message_pb2.Message(id=id, role=role, content=content or f"text of {id}", **fields)


class JournalClient:
    def __init__(self, channel: grpc.aio.Channel, journal=None, address: str = "") -> None:
        self.channel = channel
        self.stub = pb_grpc.JournalServiceStub(channel)
        self.journal = journal  # the in-process Journal, when there is one
        self.address = address

    async def append(self, thread: str, messages, who=None) -> pb.AppendResponse:
        return await self.stub.Append(
            pb.AppendRequest(principal=who or principal(), thread_id=thread, messages=messages)
        )

    async def recent(self, thread: str, limit: int = 20, who=None) -> list[message_pb2.Message]:
        reply = await self.stub.ReadRecent(
            pb.ReadRecentRequest(principal=who or principal(), thread_id=thread, limit=limit)
        )
        return list(reply.messages)

    async def read_all(self, thread: str, page_size: int = 100, who=None) -> list[message_pb2.Message]:
        messages, token = [], ""
        while True:
            reply = await self.stub.ReadRange(
                pb.ReadRangeRequest(
                    principal=who or principal(), thread_id=thread, page_size=page_size,
                    page_token=token,
                )
            )
            messages += reply.messages
            token = reply.next_page_token
            if not token:
                return messages

    async def stats(self, thread: str, who=None) -> pb.GetThreadStatsResponse:
        return await self.stub.GetThreadStats(
            pb.GetThreadStatsRequest(principal=who or principal(), thread_id=thread)
        )


async def rpc_error(awaitable) -> ErrorDetails:
    """The decoded error of a call that must fail."""
    try:
        await awaitable
    except grpc.aio.AioRpcError as exc:
        return error_details(exc)
    raise AssertionError("the call succeeded but was expected to fail")
