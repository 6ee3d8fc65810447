"""Wiring: PostgreSQL (migrated), the index, the embedder, the projector, the server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

from agentmemory.agent_memory.v1 import (
    agent_memory_service_pb2,
    agent_memory_service_pb2_grpc,
    retrieval_pb2,
    retrieval_pb2_grpc,
)

from libs import migrations, tasks
from libs.embeddings import LocalEmbedder, build_embedder
from libs.model import chat_model
from libs.reranker import local_reranking
from libs.server import GrpcServer, ServiceBinding, wait_for_stop_signal
from libs.tracing import Tracing
from services.agent_memory import safety
from services.agent_memory.index import VectorIndex
from services.agent_memory.index.edge import EdgeIndex
from services.agent_memory.index.optimizer import IndexOptimizer
from services.agent_memory.index.server import QdrantServerIndex
from services.agent_memory.learning import bridge
from services.agent_memory.learning import wiring as learning_wiring
from services.agent_memory.learning.episodes import EpisodeSink
from services.agent_memory.memories.clock import Clock, SystemClock
from services.agent_memory.memories.projector import Projector
from services.agent_memory.memories.service import AgentMemory
from services.agent_memory.memories.servicer import AgentMemoryServicer
from services.agent_memory.memories.store.entries import Repository
from services.agent_memory.memories.store.pinned_changes import PinnedChanges
from services.agent_memory.retrieval.procedures import ProcedureSource
from services.agent_memory.retrieval.service import Retrieval
from services.agent_memory.retrieval.servicer import RetrievalServicer
from services.agent_memory.retrieval.store import RetrievalStore
from services.agent_memory.settings import AgentMemoryConfig, StorageSettings

logger = logging.getLogger(__name__)

SERVICE_NAME = agent_memory_service_pb2.DESCRIPTOR.services_by_name["AgentMemoryService"].full_name
RETRIEVAL_NAME = retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"].full_name
MIGRATIONS = Path(__file__).parent / "migrations"


def build_index(settings: StorageSettings) -> VectorIndex:
    if settings.index == "edge":
        return EdgeIndex(settings.index_path.resolve(), settings.index_optimize_after_changes)
    return QdrantServerIndex.connect(settings.qdrant_url, settings.qdrant_api_key.reveal())


async def run_hygiene_daily(memory: AgentMemory, interval_hours: float) -> None:
    while True:
        try:
            await memory.run_hygiene()
        except Exception:
            logger.exception("hygiene pass failed; next one in %.1f h", interval_hours)
        await asyncio.sleep(interval_hours * 3600)


@dataclass
class Running:
    memory: AgentMemory
    server: GrpcServer
    projector: Projector
    repository: Repository
    index: VectorIndex
    learning: learning_wiring.LearningParts | None = None
    retrieval: Retrieval | None = None


@contextlib.asynccontextmanager
async def running(config: AgentMemoryConfig, *, clock: Clock | None = None,
                  index: VectorIndex | None = None, background: bool = True,
                  procedures: ProcedureSource | None = None,
                  episodes: EpisodeSink | None = None) -> AsyncIterator[Running]:
    """A serving agent memory. ``background=False`` leaves projection, hygiene and
    learning to the caller (tests drive them by hand). Learned procedures fill the
    compiled context and finished runs' episodes are recorded for retrieval, unless
    ``procedures`` or ``episodes`` stand in for them. What is built is released in
    reverse order, also when a later step fails: on exit the server drains first, then
    the loops end, then the clients, the index and the pool close."""
    clock = clock or SystemClock()
    async with contextlib.AsyncExitStack() as stack:
        tracing = Tracing(config.process.tracing, "agent_memory")
        stack.callback(tracing.close)
        repository = await Repository.connect(config.storage.postgres_dsn.reveal())
        stack.push_async_callback(repository.close)
        index = index or build_index(config.storage)
        stack.push_async_callback(index.close)
        embedder = build_embedder(config.embeddings)
        stack.push_async_callback(embedder.close)
        model = chat_model(config.model)
        if model is not None:
            stack.push_async_callback(model.close)
        await migrations.apply(repository.pool, "agent_memory", MIGRATIONS)
        if isinstance(embedder, LocalEmbedder):
            await embedder.warm_up()
        safety.warm_up()
        projector = Projector(repository, index, embedder, clock,
                              batch=config.storage.projector_batch, entity_model=model)
        reranking = await local_reranking(config.rerank, stack)
        memory = AgentMemory(repository, index, embedder, clock, projector, reranking)
        # Assisted mode reranks with the utility model when there is one.
        retrieval = Retrieval(repository, RetrievalStore(repository.pool), index, embedder,
                              clock, model, procedures, reranking if model is None else None)
        learning = await stack.enter_async_context(learning_wiring.learning(
            config, repository, memory, index, embedder, clock, tracing,
            episodes or bridge.episode_sink(retrieval, clock)))
        if procedures is None:
            retrieval.use_procedures(bridge.LearnedProcedures(learning.service))
        pinned_changes = await stack.enter_async_context(
            PinnedChanges(config.storage.postgres_dsn.reveal()).listening())
        servicer = AgentMemoryServicer(memory, learning.service.recallable, pinned_changes)
        retrieval_servicer = RetrievalServicer(retrieval, clock)
        server = GrpcServer(config.server, [
            ServiceBinding(
                SERVICE_NAME,
                lambda s: agent_memory_service_pb2_grpc.add_AgentMemoryServiceServicer_to_server(
                    servicer, s)),
            ServiceBinding(
                RETRIEVAL_NAME,
                lambda s: retrieval_pb2_grpc.add_RetrievalServiceServicer_to_server(
                    retrieval_servicer, s)),
            learning.binding,
        ], tracing=tracing, internal_token=config.process.internal.token)
        server.metrics.gauge(
            "agent_memory.outbox.size", repository.outbox_size,
            unit="{row}", description="Entry changes not yet projected into the vector index.")
        optimizer = IndexOptimizer(index) if isinstance(index, EdgeIndex) else None
        if optimizer is not None:
            server.metrics.gauge(
                "agent_memory.index.optimizations_pending", lambda: optimizer.pending,
                unit="{shard}", description="Embedded-index shards whose HNSW graphs are being"
                " built or wait for it.")
            if background:
                await optimizer.queue_startup()
        # The loops end after the server has drained its calls.
        loops = await stack.enter_async_context(tasks.background())
        await server.start()
        stack.push_async_callback(server.stop)
        stack.callback(pinned_changes.close)  # open watches would hold the drain for its grace
        if background:
            loops.start(projector.run_forever())
            loops.start(run_hygiene_daily(memory, config.storage.hygiene_interval_hours))
            learning.start(loops, config.storage.hygiene_interval_hours)
            if optimizer is not None:
                loops.start(optimizer.run_forever())
        yield Running(memory, server, projector, repository, index, learning, retrieval)


async def serve(config: AgentMemoryConfig) -> None:
    async with running(config) as service:
        logger.info("agent memory serving on %s:%d (index: %s)", config.server.host,
                    service.server.port, config.storage.index)
        await wait_for_stop_signal()
