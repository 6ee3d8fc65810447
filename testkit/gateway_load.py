"""Load through the gateway replicas, as a client sees it, and the check of what it wrote.

Clients balance over both gateways (round robin) without gRPC's retry policy, so
every error reaches them: each is counted by method and code; UNAVAILABLE is
retried with the same request (an append with the same message ids, which the
journal answers with the offsets it gave the first time), anything else is
recorded as unexpected.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field

import grpc
from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.gateway.v1 import gateway_service_pb2 as pb
from agentmemory.gateway.v1 import gateway_service_pb2_grpc as pb_grpc
from google.protobuf import struct_pb2

from libs import clients
from libs.clients.journal import JournalClient, shard_of
from libs.identity import Principal
from libs.settings import Secret
from tools.topology import ACCOUNT, SHARDS, Topology

AGENT = "load-agent"
USER = "ana"
GIVE_UP_AFTER_SECONDS = 60.0


def owner() -> Principal:
    return Principal(ACCOUNT, AGENT, USER, "default")


def threads_on(shard: int, prefix: str, count: int) -> list[str]:
    """``count`` thread ids that live in ``shard``."""
    found, i = [], 0
    while len(found) < count:
        name = f"{prefix}-{i}"
        if shard_of(ACCOUNT, name, SHARDS) == shard:
            found.append(name)
        i += 1
    return found


@dataclass
class Seen:
    calls: Counter = field(default_factory=Counter)  # method -> answered
    errors: Counter = field(default_factory=Counter)  # (method, code) -> times
    unexpected: list[str] = field(default_factory=list)
    acked: dict[tuple[str, str], int] = field(default_factory=dict)  # (thread, id) -> offset
    outages: list[tuple[str, float, float]] = field(default_factory=list)  # thread, from, to
    errors_by_thread: Counter = field(default_factory=Counter)

    def codes(self) -> set[str]:
        return {code for _, code in self.errors}

    def report(self) -> str:
        errors = ", ".join(f"{m} {c}: {n}" for (m, c), n in sorted(self.errors.items())) or "none"
        longest = max((end - start for _, start, end in self.outages), default=0.0)
        return (f"calls answered {dict(self.calls)}; errors seen by clients {errors}; "
                f"acknowledged messages {len(self.acked)}; longest wait through errors "
                f"{longest:.2f} s")


class GatewayLoad:
    def __init__(self, topology: Topology, threads: list[str], *, tools: bool) -> None:
        self._channel = clients.channel(topology.addresses("gateway"), default_timeout=20,
                                        retry=False)
        self._stub = pb_grpc.GatewayServiceStub(self._channel)
        self._metadata = (("authorization", f"Bearer {topology.api_key}"),)
        self._caller = pb.Caller(agent_id=AGENT, user_id=USER,
                                 surface=principal_pb2.SURFACE_AGENT)
        self._threads = threads
        self._tools = tools
        self.seen = Seen()
        self.stop = asyncio.Event()

    async def close(self) -> None:
        await self._channel.close()

    async def run(self) -> None:
        await asyncio.gather(*(self._worker(i, thread) for i, thread in enumerate(self._threads)))

    def answered(self) -> int:
        return sum(self.seen.calls.values())

    async def _worker(self, index: int, thread: str) -> None:
        n = 0
        while not self.stop.is_set():
            message_id = f"{thread}-m{n}"
            reply = await self.append(thread, message_pb2.Message(
                id=message_id, role=message_pb2.ROLE_USER,
                content=f"turn {n} of {thread}: the invoice for order {n} ships to Lisbon"))
            if reply is None:
                return
            self.seen.acked[(thread, message_id)] = reply.offsets[0]
            await self._call("BuildContext", thread, self._stub.BuildContext,
                             pb.BuildContextRequest(caller=self._caller, thread_id=thread))
            if self._tools:
                await self._tool(index, thread, n)
            n += 1
            await asyncio.sleep(0.01)

    async def append(self, thread: str, message: message_pb2.Message):
        """One append, as a worker makes it."""
        return await self._call("AppendMessages", thread, self._stub.AppendMessages,
                                pb.AppendMessagesRequest(caller=self._caller, thread_id=thread,
                                                         messages=[message]))

    async def tool(self, name: str, arguments: dict, thread: str = ""):
        structured = struct_pb2.Struct()
        structured.update(arguments)
        return await self._call(f"CallTool {name}", thread, self._stub.CallTool, pb.CallToolRequest(
            caller=self._caller, thread_id=thread, tool_name=name, arguments=structured))

    async def _tool(self, index: int, thread: str, n: int) -> None:
        name, arguments = [
            ("memory_store", {"key": f"fact_{index}_{n % 4}", "category": "project_fact",
                              "content": f"Order {n % 4} of worker {index} ships to Lisbon."}),
            ("journal_message_search", {"query": f"invoice order {n}"}),
            ("memory_recall", {"query": "where do orders ship"}),
        ][n % 3]
        await self.tool(name, arguments, thread)

    async def _call(self, method: str, thread: str, rpc, request):
        failing_since = None
        while True:
            try:
                reply = await rpc(request, metadata=self._metadata)
            except grpc.aio.AioRpcError as exc:
                now = time.monotonic()
                self.seen.errors[(method, exc.code().name)] += 1
                self.seen.errors_by_thread[thread] += 1
                if exc.code() != grpc.StatusCode.UNAVAILABLE:
                    self.seen.unexpected.append(f"{method}: {exc.code().name} {exc.details()}")
                    return None
                failing_since = failing_since or now
                if now - failing_since > GIVE_UP_AFTER_SECONDS:
                    self.seen.unexpected.append(f"{method}: still UNAVAILABLE after "
                                                f"{GIVE_UP_AFTER_SECONDS:.0f} s")
                    return None
                await asyncio.sleep(0.1)
                continue
            self.seen.calls[method] += 1
            if failing_since is not None:
                self.seen.outages.append((thread, failing_since, time.monotonic()))
            return reply


async def check_acknowledged(topology: Topology, acked: dict[tuple[str, str], int]) -> int:
    """Every acknowledged message is in the journal at its offset; offsets are dense and
    no message id appears twice. Returns how many messages were checked."""
    reader = JournalClient(topology.addresses("journal"), timeout=20,
                           internal_token=Secret(topology.token))
    try:
        for thread in sorted({t for t, _ in acked}):
            stats = await reader.thread_stats(owner(), thread)
            messages = await reader.between(owner(), thread, 0, stats.last_offset)
            assert [m.offset for m in messages] == list(range(1, len(messages) + 1)), thread
            stored = {m.id: m.offset for m in messages}
            assert len(stored) == len(messages), f"{thread}: a message id appears twice"
            mine = {i: offset for (t, i), offset in acked.items() if t == thread}
            assert mine.items() <= stored.items(), f"{thread}: an acknowledged message is missing"
    finally:
        await reader.close()
    return len(acked)
