"""Wiring: ClickHouse (chDB or a server), the embedder, the projections, the searcher,
the server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from agentmemory.search.v1 import search_service_pb2, search_service_pb2_grpc

from libs import tasks
from libs.clients.journal import JournalClient
from libs.embeddings import LocalEmbedder, build_embedder
from libs.model import chat_model
from libs.reranker import local_reranking
from libs.server import GrpcServer, ServiceBinding, wait_for_stop_signal
from libs.tracing import Tracing
from services.search import cells, schema
from services.search.clickhouse import ChdbClickHouse, ClickHouse, ServerClickHouse
from services.search.dense import DenseIndex, DenseProjector, spelling
from services.search.lag import JournalSequences, ShardLag
from services.search.projector import Projector
from services.search.search import Searcher
from services.search.servicer import SearchServicer
from services.search.settings import ClickHouseSettings, SearchConfig

logger = logging.getLogger(__name__)

SERVICE_NAME = search_service_pb2.DESCRIPTOR.services_by_name["SearchService"].full_name
PROJECTION_HEALTH = f"{SERVICE_NAME}/projection"
EMBEDDINGS_HEALTH = f"{SERVICE_NAME}/embeddings"
MAX_HEALTHY_LAG = 10_000
HEALTH_SECONDS = 5.0


def build_clickhouse(settings: ClickHouseSettings) -> ClickHouse:
    if settings.backend == "chdb":
        return ChdbClickHouse(settings.chdb_path.resolve())
    return ServerClickHouse(host=settings.host, port=settings.port, user=settings.user,
                            password=settings.password)


async def report_health(server: GrpcServer, components: dict[str, Callable[[], list[ShardLag]]],
                        ) -> None:
    """Each projection is SERVING while at most MAX_HEALTHY_LAG messages behind."""
    while True:
        for name, lag in components.items():
            behind = sum(s.lag for s in lag())
            if behind:
                logger.info("%s is %d messages behind the journal", name, behind)
            await server.set_component_health(name, behind <= MAX_HEALTHY_LAG)
        await asyncio.sleep(HEALTH_SECONDS)


@dataclass
class Running:
    server: GrpcServer
    searcher: Searcher
    projector: Projector
    dense: DenseProjector | None
    journal_sequences: JournalSequences
    clickhouse: ClickHouse


@contextlib.asynccontextmanager
async def running(config: SearchConfig) -> AsyncIterator[Running]:
    async with contextlib.AsyncExitStack() as stack:
        tracing = Tracing(config.process.tracing, "search")
        stack.callback(tracing.close)
        clickhouse = build_clickhouse(config.clickhouse)
        stack.push_async_callback(clickhouse.close)
        journal = JournalClient(config.dependencies.journal_address,
                                internal_token=config.process.internal.token,
                                interceptors=tracing.client_interceptors())
        stack.push_async_callback(journal.close)
        model = chat_model(config.model)
        if model is None:
            logger.warning("no model configured (MODEL_BASE_URL): match summaries use the "
                           "labelled offline fallback")
        else:
            stack.push_async_callback(model.close)
        database = config.clickhouse.database
        index = await _dense_index(config, clickhouse, stack)
        await schema.create(clickhouse, database, index.table if index is not None else None)
        sequences = JournalSequences(journal)
        searcher = Searcher(clickhouse, database, model, index, config.hot_scopes.messages,
                            config.hot_scopes.vector_messages, config.dependencies.project_feed,
                            await local_reranking(config.rerank, stack))
        stack.push_async_callback(searcher.close)
        projector = Projector(journal, clickhouse, database, sequences, searcher.projected)
        dense = (DenseProjector(journal, clickhouse, database, index, sequences,
                                config.dense.embed_batch, searcher.embedded)
                 if index is not None else None)
        servicer = SearchServicer(searcher, journal, projector, dense, clickhouse.name, sequences)
        server = GrpcServer(config.server, [ServiceBinding(
            SERVICE_NAME,
            lambda s: search_service_pb2_grpc.add_SearchServiceServicer_to_server(servicer, s),
        )], tracing=tracing, internal_token=config.process.internal.token)
        server.metrics.gauge("search.projection.lag", lambda: sum(s.lag for s in projector.lag()),
                             unit="{message}", description="Journal messages not yet projected.")
        if dense is not None:
            server.metrics.gauge("search.embedding.lag", lambda: sum(s.lag for s in dense.lag()),
                                 unit="{message}",
                                 description="Projected messages not yet embedded (BM25 finds"
                                             " them meanwhile).")
        await server.start()
        stack.push_async_callback(server.stop)
        if config.dependencies.project_feed:
            await stack.enter_async_context(_following(server, projector, dense, sequences))
        yield Running(server, searcher, projector, dense, sequences, clickhouse)


async def _dense_index(config: SearchConfig, clickhouse: ClickHouse,
                       stack: contextlib.AsyncExitStack) -> DenseIndex | None:
    if not config.dense.enabled:
        logger.info("dense leg off (SEARCH_DENSE=false): keyword search only")
        return None
    embedder = build_embedder(config.embeddings)
    stack.push_async_callback(embedder.close)
    if isinstance(embedder, LocalEmbedder):
        await embedder.warm_up()
    return DenseIndex(embedder, cells.for_embedder(embedder), clickhouse,
                      config.clickhouse.database, await spelling(clickhouse),
                      config.dense.rows_budget)


@contextlib.asynccontextmanager
async def _following(server: GrpcServer, projector: Projector, dense: DenseProjector | None,
                     sequences: JournalSequences) -> AsyncIterator[None]:
    """The followers of the change feed and their lag reports, stopped cooperatively."""
    followers = [projector] + ([dense] if dense is not None else [])
    health = {PROJECTION_HEALTH: projector.lag}
    if dense is not None:
        health[EMBEDDINGS_HEALTH] = dense.lag
    async with tasks.background() as loops:
        for follower in followers:
            loops.start(follower.run_forever(), stop=follower.stop)
        loops.start(sequences.run_forever())
        loops.start(report_health(server, health))
        yield


async def serve(config: SearchConfig) -> None:
    async with running(config) as service:
        logger.info("search serving on %s:%d (ClickHouse: %s, dense leg: %s)",
                    config.server.host, service.server.port, service.clickhouse.name,
                    service.dense.embedder if service.dense is not None else "off")
        await wait_for_stop_signal()
