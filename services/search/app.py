"""Wiring: ClickHouse (chDB or a server), the projector, the searcher, the server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agentmemory.search.v1 import search_service_pb2, search_service_pb2_grpc

from libs.journal_client import JournalReader
from libs.model import chat_model
from libs.server import GrpcServer, ServiceBinding, wait_for_stop_signal
from libs.tracing import Tracing
from services.search import schema
from services.search.clickhouse import ChdbClickHouse, ClickHouse, ServerClickHouse
from services.search.projector import Projector
from services.search.search import Searcher
from services.search.servicer import SearchServicer
from services.search.settings import ClickHouseSettings, SearchConfig

logger = logging.getLogger(__name__)

SERVICE_NAME = search_service_pb2.DESCRIPTOR.services_by_name["SearchService"].full_name
PROJECTION_HEALTH = f"{SERVICE_NAME}/projection"
MAX_HEALTHY_LAG = 10_000


def build_clickhouse(settings: ClickHouseSettings) -> ClickHouse:
    if settings.backend == "chdb":
        return ChdbClickHouse(settings.chdb_path.resolve())
    return ServerClickHouse(host=settings.host, port=settings.port, user=settings.user,
                            password=settings.password)


async def report_projection_health(projector: Projector, server: GrpcServer) -> None:
    while True:
        lag = sum(s.lag for s in projector.lag())
        await server.set_component_health(PROJECTION_HEALTH, lag <= MAX_HEALTHY_LAG)
        await asyncio.sleep(5)


@dataclass
class Running:
    server: GrpcServer
    projector: Projector
    clickhouse: ClickHouse


@contextlib.asynccontextmanager
async def running(config: SearchConfig) -> AsyncIterator[Running]:
    tracing = Tracing(config.process.tracing, "search")
    clickhouse = build_clickhouse(config.clickhouse)
    journal = JournalReader(config.dependencies.journal_address,
                            internal_token=config.process.internal.token,
                            interceptors=tracing.client_interceptors())
    model = chat_model(config.model)
    if model is None:
        logger.warning("no model configured (MODEL_BASE_URL): match summaries use the labelled "
                       "offline fallback")
    database = config.clickhouse.database
    tasks: list[asyncio.Task] = []
    projector = Projector(journal, clickhouse, database)
    try:
        await schema.create(clickhouse, database)
        servicer = SearchServicer(Searcher(clickhouse, database, model), journal, projector,
                                  clickhouse.name)
        server = GrpcServer(config.server, [ServiceBinding(
            SERVICE_NAME,
            lambda s: search_service_pb2_grpc.add_SearchServiceServicer_to_server(servicer, s),
        )], tracing=tracing, internal_token=config.process.internal.token)
        server.metrics.gauge("search.projection.lag", lambda: sum(s.lag for s in projector.lag()),
                             unit="{message}", description="Journal messages not yet projected.")
        await server.start()
        if config.dependencies.project_feed:
            tasks = [asyncio.create_task(projector.run_forever()),
                     asyncio.create_task(report_projection_health(projector, server))]
        try:
            yield Running(server, projector, clickhouse)
        finally:
            await server.stop()
            projector.stop()
            if tasks:
                await asyncio.wait(tasks[:1], timeout=10)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        await journal.close()
        if model is not None:
            await model.close()
        await clickhouse.close()
        tracing.close()


async def serve(config: SearchConfig) -> None:
    async with running(config) as service:
        logger.info("search serving on %s:%d (ClickHouse: %s)", config.server.host,
                    service.server.port, service.clickhouse.name)
        await wait_for_stop_signal()
