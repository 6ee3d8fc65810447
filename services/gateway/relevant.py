"""The relevant memories of a turn (seed 004: "At the start of a run, the dispatcher
retrieves the most relevant memories for the querying agent and injects them into the
prompt").

When the agent setting ``relevant_memories_enabled`` holds, BuildContext asks agent
memory's RetrieveRelevantMemories for the thread's latest user message, naming the
pinned facts the turn shows so that none is repeated. Agent memory runs
RetrieveContext's search under the caller's principal, compiles the block into the
agent's ``relevant_memories_token_budget`` and writes the receipt of what it
delivered; the gateway places the block as it comes.

Once per BuildContext call and never cached: each call's receipt is its own, and
the block is frozen for the turn it builds, like the pinned set. The call has a
deadline of its own (``GATEWAY_RELEVANT_MEMORIES_TIMEOUT_SECONDS``); a timeout, the
account's ``receipts_per_day`` quota or any failure leaves the block out of the turn,
never the turn, and the response's ``relevant_memories_status`` says which.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

import grpc
from agentmemory.agent_memory.v1 import retrieval_pb2 as memory_pb
from agentmemory.gateway.v1 import gateway_service_pb2 as pb

from libs.clients.agent_memory import AgentMemoryClient
from libs.errors import DomainError
from libs.identity import Principal

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 2000  # agent memory's bound on a semantic query


@dataclass(frozen=True)
class Relevant:
    status: pb.RelevantMemoriesStatus.ValueType
    block: str = ""  # the system message's content, when delivered
    receipt_id: str = ""


OFF = Relevant(pb.RELEVANT_MEMORIES_STATUS_OFF)
NONE = Relevant(pb.RELEVANT_MEMORIES_STATUS_NONE)


async def retrieve(agent_memory: AgentMemoryClient, principal: Principal,
                   query: str, *, budget: int, timeout: float, run_id: str,
                   thread_id: str | None, shown: Iterable[str]) -> Relevant:
    """``shown``: the ids of the memories the turn shows already."""
    if not query:
        return NONE
    request = memory_pb.RetrieveRelevantMemoriesRequest(
        principal=principal.to_proto(), semantic_query=query[:MAX_QUERY_CHARS],
        token_budget=budget, run_id=run_id, thread_id=thread_id or "",
        exclude_memory_ids=shown)
    try:
        reply = await agent_memory.retrieve_relevant_memories(request, timeout)
    except DomainError as exc:
        return _left_out(exc)
    if not reply.receipt_id:
        return NONE
    return Relevant(pb.RELEVANT_MEMORIES_STATUS_DELIVERED, reply.rendered, reply.receipt_id)


def _left_out(exc: DomainError) -> Relevant:
    """A timeout is told apart by the gRPC error the client mapped (its cause)."""
    cause = exc.__cause__
    if isinstance(cause, grpc.aio.AioRpcError) and \
            cause.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
        status = pb.RELEVANT_MEMORIES_STATUS_TIMED_OUT
    elif exc.code == grpc.StatusCode.RESOURCE_EXHAUSTED and exc.reason == "QUOTA_EXCEEDED":
        status = pb.RELEVANT_MEMORIES_STATUS_QUOTA_EXCEEDED
    else:
        status = pb.RELEVANT_MEMORIES_STATUS_FAILED
    logger.warning("relevant memories left out of a turn (%s %s: %s)", exc.code.name,
                   exc.reason, exc.message)
    return Relevant(status)
