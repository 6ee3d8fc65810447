"""Wiring: open the journal, serve it over gRPC, watch for fencing, shut down."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from agentmemory.journal.v1 import journal_service_pb2, journal_service_pb2_grpc

from libs.server import GrpcServer, ServiceBinding, wait_for_stop_signal
from libs.tracing import Tracing
from services.journal.journal import Journal
from services.journal.servicer import JournalServicer
from services.journal.settings import JournalConfig

logger = logging.getLogger(__name__)

SERVICE_NAME = journal_service_pb2.DESCRIPTOR.services_by_name["JournalService"].full_name
HEALTH_POLL_SECONDS = 0.25
COMMIT_BUCKETS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def binding(journal: Journal) -> ServiceBinding:
    servicer = JournalServicer(journal)
    return ServiceBinding(
        SERVICE_NAME,
        lambda server: journal_service_pb2_grpc.add_JournalServiceServicer_to_server(
            servicer, server
        ),
    )


async def watch_health(journal: Journal, server: GrpcServer) -> None:
    """Turn NOT_SERVING as soon as a shard is fenced or fails."""
    while journal.serving():
        await asyncio.sleep(HEALTH_POLL_SECONDS)
    logger.error("journal no longer writable: health is NOT_SERVING")
    await server.set_serving(False)


def observe_commits(journal: Journal, server: GrpcServer) -> None:
    appends = server.metrics.histogram(
        "journal.commit.appends", unit="{append}", buckets=COMMIT_BUCKETS,
        description="Appends written together by one group commit (one durable flush).")
    messages = server.metrics.histogram(
        "journal.commit.messages", unit="{message}", buckets=COMMIT_BUCKETS,
        description="New messages written by one group commit.")

    def record(append_count: int, message_count: int) -> None:
        appends(append_count)
        messages(message_count)

    journal.observe_commits(record)


@contextlib.asynccontextmanager
async def running(config: JournalConfig) -> AsyncIterator[tuple[Journal, GrpcServer]]:
    """A serving journal; on exit: end feeds, drain calls, flush and close."""
    tracing = Tracing(config.process.tracing, "journal")
    logger.info(
        "opening journal: %d shard(s) on %s", config.shards.shard_count, config.store.describe()
    )
    journal = await Journal.open(config.store, config.shards)
    try:
        server = GrpcServer(config.server, [binding(journal)], tracing=tracing,
                            internal_token=config.process.internal.token)
        observe_commits(journal, server)
        await server.start()
        watcher = asyncio.create_task(watch_health(journal, server))
        try:
            yield journal, server
        finally:
            journal.begin_shutdown()
            await server.stop()
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
    finally:
        await journal.close()
        tracing.close()


async def serve(config: JournalConfig) -> None:
    async with running(config) as (_, server):
        logger.info("journal serving on %s:%d", config.server.host, server.port)
        await wait_for_stop_signal()
