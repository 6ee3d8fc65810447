"""Wiring: Redis, the summary store, the journal and agent-memory clients, the model,
the feed counter, the job scheduler and the gRPC server."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agentmemory.thread_memory.v1 import thread_memory_service_pb2, thread_memory_service_pb2_grpc

from libs import tasks
from libs.clients.agent_memory import AgentMemoryClient
from libs.clients.journal import JournalClient
from libs.model import chat_model
from libs.object_store import ObjectStore, build_object_store
from libs.server import GrpcServer, ServiceBinding, wait_for_stop_signal
from libs.tracing import Tracing
from services.thread_memory.cached_summaries import CachedSummaries
from services.thread_memory.context import ThreadContext
from services.thread_memory.coordination import Coordination
from services.thread_memory.counting import FeedCounter
from services.thread_memory.facts import ModelFactExtractor, OfflineFactExtractor
from services.thread_memory.jobs import Scheduler, Summarization
from services.thread_memory.servicer import ThreadMemoryServicer
from services.thread_memory.settings import ThreadMemoryConfig
from services.thread_memory.summaries import SummaryStore, unavailable
from services.thread_memory.summarizer import ModelSummarizer, OfflineSummarizer

logger = logging.getLogger(__name__)

SERVICE_NAME = (thread_memory_service_pb2.DESCRIPTOR
                .services_by_name["ThreadMemoryService"].full_name)


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
    """Everything built is released in reverse order, also when a later step fails:
    the server stops first, then the feed (which saves its cursor and the jobs it
    leaves outstanding), then the running jobs, then the clients."""
    dependencies = config.dependencies
    token = config.process.internal.token
    async with contextlib.AsyncExitStack() as stack:
        tracing = Tracing(config.process.tracing, "thread_memory")
        stack.callback(tracing.close)
        model = chat_model(config.model)
        if model is None:
            logger.warning("no model configured (MODEL_BASE_URL): summaries and flushed facts "
                           "use the labelled offline fallback (%s)", OfflineSummarizer.generator)
        else:
            stack.push_async_callback(model.close)
        objects = build_object_store(config.store, unavailable=unavailable)
        stack.push_async_callback(objects.close)
        coordination = Coordination.connect(dependencies.redis_url)
        stack.push_async_callback(coordination.close)
        journal = JournalClient(dependencies.journal_address, internal_token=token,
                                interceptors=tracing.client_interceptors())
        stack.push_async_callback(journal.close)
        memory = None
        if dependencies.agent_memory_address:
            memory = AgentMemoryClient(dependencies.agent_memory_address, internal_token=token,
                                       interceptors=tracing.client_interceptors())
            stack.push_async_callback(memory.close)
        summarization = Summarization(
            journal=journal, summaries=SummaryStore(objects), coordination=coordination,
            summarizer=ModelSummarizer(model) if model else OfflineSummarizer(),
            facts=ModelFactExtractor(model) if model else OfflineFactExtractor(),
            memory=memory,
        )
        scheduler = Scheduler(summarization, workers=dependencies.workers)
        summaries = CachedSummaries(SummaryStore(objects), coordination)
        counter = FeedCounter(journal, coordination, summaries, objects, scheduler)
        servicer = ThreadMemoryServicer(
            ThreadContext(journal, summaries, coordination, scheduler), summarization)
        scheduler.start()
        stack.push_async_callback(scheduler.close)
        if dependencies.follow_feed:
            loops = await stack.enter_async_context(tasks.background())
            loops.start(counter.run_forever(), stop=counter.stop)
        server = GrpcServer(config.server, [ServiceBinding(
            SERVICE_NAME,
            lambda s: thread_memory_service_pb2_grpc.add_ThreadMemoryServiceServicer_to_server(
                servicer, s),
        )], tracing=tracing, internal_token=token)
        server.metrics.gauge("thread_memory.jobs.queued", lambda: scheduler.queue_depth,
                             unit="{job}",
                             description="Summarization jobs queued or waiting to retry.")
        await server.start()
        stack.push_async_callback(server.stop)
        yield Running(server, scheduler, counter, coordination, objects, summarization)


async def serve(config: ThreadMemoryConfig) -> None:
    async with running(config) as service:
        logger.info("thread memory serving on %s:%d (summaries: %s)", config.server.host,
                    service.server.port, config.store.describe())
        await wait_for_stop_signal()
