"""Agent memory's client: its three services (memories, learning, retrieval) on one channel.

The gateway, thread memory and the admin CLIs call agent memory through it. The
named methods are the calls the platform makes itself; :meth:`AgentMemoryClient.call`
sends any call by name, for the gateway's relays, whose requests mirror agent
memory's own (``services/gateway/relay.py``).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Sequence
from typing import Any

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as memory_pb
from agentmemory.agent_memory.v1 import agent_memory_service_pb2_grpc as memory_grpc
from agentmemory.agent_memory.v1 import learning_service_pb2 as learning_pb
from agentmemory.agent_memory.v1 import learning_service_pb2_grpc as learning_grpc
from agentmemory.agent_memory.v1 import retrieval_pb2 as retrieval_pb
from agentmemory.agent_memory.v1 import retrieval_pb2_grpc as retrieval_grpc
from google.protobuf.message import Message

from libs.clients import ServiceClient
from libs.settings import Secret

MEMORIES = "AgentMemoryService"
LEARNING = "LearningService"
RETRIEVAL = "RetrievalService"


class AgentMemoryClient(ServiceClient):
    def __init__(self, target: str, *, timeout: float = 10.0,
                 internal_token: Secret | None = None, interceptors: Sequence = ()) -> None:
        super().__init__("agent_memory", target, timeout=timeout,
                         internal_token=internal_token, interceptors=interceptors)
        self._memories = memory_grpc.AgentMemoryServiceStub(self.channel)
        self._learning = learning_grpc.LearningServiceStub(self.channel)
        self._retrieval = retrieval_grpc.RetrievalServiceStub(self.channel)
        # By name, for the gateway's relay (``call``): each stub's own type is kept above.
        self._stubs: dict[str, Any] = {MEMORIES: self._memories, LEARNING: self._learning,
                                       RETRIEVAL: self._retrieval}

    async def call(self, service: str, method: str, request: Message) -> Message:
        """``service``'s ``method`` (one of this module's service names)."""
        return await getattr(self._stubs[service], method)(request)

    # -- AgentMemoryService -----------------------------------------------------------

    async def store(self, request: memory_pb.StoreRequest) -> memory_pb.StoreResponse:
        return await self._memories.Store(request)

    async def recall(self, request: memory_pb.RecallRequest) -> memory_pb.RecallResponse:
        return await self._memories.Recall(request)

    async def forget(self, request: memory_pb.ForgetRequest) -> memory_pb.ForgetResponse:
        return await self._memories.Forget(request)

    async def explain_memory(self, request: memory_pb.ExplainMemoryRequest
                             ) -> memory_pb.ExplainMemoryResponse:
        return await self._memories.ExplainMemory(request)

    async def list_pinned(self, request: memory_pb.ListPinnedRequest
                          ) -> memory_pb.ListPinnedResponse:
        return await self._memories.ListPinned(request)

    def watch_pinned_changes(self, timeout: float
                             ) -> AsyncIterable[memory_pb.WatchPinnedChangesResponse]:
        """A stream: its errors are gRPC's (``libs.clients.ErrorMapping``)."""
        return self._memories.WatchPinnedChanges(memory_pb.WatchPinnedChangesRequest(),
                                                 timeout=timeout)

    async def get_agent_settings(self, request: memory_pb.GetAgentSettingsRequest
                                 ) -> memory_pb.GetAgentSettingsResponse:
        return await self._memories.GetAgentSettings(request)

    async def update_agent_settings(self, request: memory_pb.UpdateAgentSettingsRequest
                                    ) -> memory_pb.UpdateAgentSettingsResponse:
        return await self._memories.UpdateAgentSettings(request)

    async def get_account_settings(self, request: memory_pb.GetAccountSettingsRequest
                                   ) -> memory_pb.GetAccountSettingsResponse:
        return await self._memories.GetAccountSettings(request)

    async def update_account_settings(self, request: memory_pb.UpdateAccountSettingsRequest
                                      ) -> memory_pb.UpdateAccountSettingsResponse:
        return await self._memories.UpdateAccountSettings(request)

    async def add_memory(self, request: memory_pb.AddMemoryRequest
                         ) -> memory_pb.AddMemoryResponse:
        return await self._memories.AddMemory(request)

    async def delete_memory(self, request: memory_pb.DeleteMemoryRequest
                            ) -> memory_pb.DeleteMemoryResponse:
        return await self._memories.DeleteMemory(request)

    async def list_memories(self, request: memory_pb.ListMemoriesRequest
                            ) -> memory_pb.ListMemoriesResponse:
        return await self._memories.ListMemories(request)

    def reindex(self, request: memory_pb.ReindexRequest, timeout: float
                ) -> AsyncIterable[memory_pb.ReindexResponse]:
        """A stream of progress: its errors are gRPC's (``libs.clients.ErrorMapping``)."""
        return self._memories.Reindex(request, timeout=timeout)

    # -- LearningService ---------------------------------------------------------------

    async def hold_run_credentials(self, request: learning_pb.HoldRunCredentialsRequest
                                   ) -> learning_pb.HoldRunCredentialsResponse:
        return await self._learning.HoldRunCredentials(request)

    async def record_run_feedback(self, request: learning_pb.RecordRunFeedbackRequest
                                  ) -> learning_pb.RecordRunFeedbackResponse:
        return await self._learning.RecordRunFeedback(request)

    async def recall_procedures(self, request: learning_pb.RecallProceduresRequest
                                ) -> learning_pb.RecallProceduresResponse:
        return await self._learning.RecallProcedures(request)

    # -- RetrievalService ----------------------------------------------------------------

    async def retrieve_context(self, request: retrieval_pb.RetrieveContextRequest
                               ) -> retrieval_pb.RetrieveContextResponse:
        return await self._retrieval.RetrieveContext(request)

    async def retrieve_relevant_memories(
            self, request: retrieval_pb.RetrieveRelevantMemoriesRequest, timeout: float
    ) -> retrieval_pb.RetrieveRelevantMemoriesResponse:
        return await self._retrieval.RetrieveRelevantMemories(request, timeout=timeout)
