"""Builders for agent-memory requests."""

from __future__ import annotations

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb

from testkit.journal_client import principal

__all__ = ["principal", "store", "recall", "pb"]


def store(key: str, content: str, category=pb.CATEGORY_USER_PROFILE, *, who=None,
          visibility=pb.VISIBILITY_UNSPECIFIED, importance: float | None = None,
          request_id: str = "") -> pb.StoreRequest:
    request = pb.StoreRequest(principal=who or principal(), key=key, content=content,
                              category=category, visibility=visibility, request_id=request_id)
    if importance is not None:
        request.importance = importance
    return request


def recall(query: str, *, who=None, limit: int = 0, categories=(),
           rerank: bool = False) -> pb.RecallRequest:
    return pb.RecallRequest(principal=who or principal(), query=query, limit=limit,
                            categories=list(categories), rerank=rerank)
