"""Wiring: Redis, the summary store, the journal and agent-memory clients, the model,
the feed counter, the job scheduler and the gRPC server."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agentmemory.thread_memory.v1 import thread_memory_service_pb2, thread_memory_service_pb2_grpc

from libs.journal_client import JournalReader
from libs.model import chat_model
from libs.server import GrpcServer, ServiceBinding, wait_for_stop_signal
from libs.tracing import Tracing
from services.thread_memory.context import ThreadContext
from services.thread_memory.coordination import Coordination
from services.thread_memory.counting import FeedCounter
from services.thread_memory.facts import ModelFactExtractor, OfflineFactExtractor
from services.thread_memory.jobs import Scheduler, Summarization
from services.thread_memory.servicer import ThreadMemoryServicer
from services.thread_memory.settings import SummaryStoreSettings, ThreadMemoryConfig
from services.thread_memory.summaries import LocalObjectStore, ObjectStore, S3ObjectStore, SummaryStore
from services.thread_memory.summarizer import ModelSummarizer, OfflineSummarizer
from services.thread_memory.upstreams import AgentMemoryWriter

logger = logging.getLogger(__name__)

SERVICE_NAME = (thread_memory_service_pb2.DESCRIPTOR
                .services_by_name["ThreadMemoryService"].full_name)


def build_object_store(settings: SummaryStoreSettings) -> ObjectStore:
    if settings.kind == "local":
        return LocalObjectStore(settings.local_path)
    return S3ObjectStore(bucket=settings.s3_bucket, prefix=settings.s3_prefix,
                         endpoint=settings.s3_endpoint, region=settings.s3_region,
                         access_key_id=settings.s3_access_key_id,
                         secret_access_key=settings.s3_secret_access_key)


@dataclass
class Running:
    server: GrpcServer
    scheduler: Scheduler
    counter: FeedCounter
    coordination: Coordination
    objects: ObjectStore
    summarization: Summarization


@contextlib.asynccontextmanager
async def running(config: ThreadMemoryConfig) -> AsyncIterator[Running]:
    tracing = Tracing(config.process.tracing, "thread_memory")
    dependencies = config.dependencies
    model = chat_model(config.model)
    if model is None:
        logger.warning("no model configured (MODEL_BASE_URL): summaries and flushed facts use "
                       "the labelled offline fallback (%s)", OfflineSummarizer.generator)
    objects = build_object_store(config.store)
    coordination = Coordination.connect(dependencies.redis_url)
    token = config.process.internal.token
    journal = JournalReader(dependencies.journal_address, internal_token=token,
                            interceptors=tracing.client_interceptors())
    memory = (AgentMemoryWriter(dependencies.agent_memory_address, internal_token=token,
                                interceptors=tracing.client_interceptors())
              if dependencies.agent_memory_address else None)
    summarization = Summarization(
        journal=journal, summaries=SummaryStore(objects), coordination=coordination,
        summarizer=ModelSummarizer(model) if model else OfflineSummarizer(),
        facts=ModelFactExtractor(model) if model else OfflineFactExtractor(),
        memory=memory,
    )
    scheduler = Scheduler(summarization, workers=dependencies.workers)
    counter = FeedCounter(journal, coordination, objects, scheduler)
    servicer = ThreadMemoryServicer(ThreadContext(journal, SummaryStore(objects), coordination),
                                    summarization)
    server = GrpcServer(config.server, [ServiceBinding(
        SERVICE_NAME,
        lambda s: thread_memory_service_pb2_grpc.add_ThreadMemoryServiceServicer_to_server(
            servicer, s),
    )], tracing=tracing, internal_token=config.process.internal.token)
    server.metrics.gauge("thread_memory.jobs.queued", scheduler._queue.qsize, unit="{job}",
                         description="Summarization jobs waiting for a worker.")
    tasks: list[asyncio.Task] = []
    try:
        await server.start()
        scheduler.start()
        if dependencies.follow_feed:
            tasks.append(asyncio.create_task(counter.run_forever()))
        yield Running(server, scheduler, counter, coordination, objects, summarization)
    finally:
        await server.stop()
        counter.stop()
        await asyncio.wait(tasks, timeout=10)
        await scheduler.close()
        await journal.close()
        if memory is not None:
            await memory.close()
        if model is not None:
            await model.close()
        await coordination.close()
        await objects.close()
        tracing.close()


async def serve(config: ThreadMemoryConfig) -> None:
    async with running(config) as service:
        logger.info("thread memory serving on %s:%d (summaries: %s)", config.server.host,
                    service.server.port, config.store.describe())
        await wait_for_stop_signal()
