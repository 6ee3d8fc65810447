"""Wiring: PostgreSQL (migrated), API keys, thread records, upstreams, the server."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
from agentmemory.gateway.v1 import (
    gateway_service_pb2,
    gateway_service_pb2_grpc,
    key_service_pb2,
    key_service_pb2_grpc,
    learning_service_pb2,
    learning_service_pb2_grpc,
    memory_library_service_pb2,
    memory_library_service_pb2_grpc,
    retrieval_service_pb2,
    retrieval_service_pb2_grpc,
    run_service_pb2,
    run_service_pb2_grpc,
)

from libs import migrations, postgres
from libs.errors import Unavailable
from libs.invalidations import Invalidations
from libs.server import GrpcServer, ServiceBinding, wait_for_stop_signal
from libs.tracing import Tracing
from services.gateway.accounts import Accounts
from services.gateway.bindings import MemoryBindings
from services.gateway.callers import Callers
from services.gateway.context import ContextBuilder
from services.gateway.http.calls import Servicers
from services.gateway.http.server import listening
from services.gateway.key_servicer import KeyServicer
from services.gateway.keys import ApiKeys
from services.gateway.learning import LearningServicer
from services.gateway.library import MemoryLibrary
from services.gateway.library_servicer import MemoryLibraryServicer
from services.gateway.pinned import ForgetOnWrite, PinnedCache
from services.gateway.retrieval import Retrieval
from services.gateway.retrieval_servicer import RetrievalServicer
from services.gateway.runs import RunServicer
from services.gateway.servicer import GatewayServicer
from services.gateway.settings import GatewayConfig
from services.gateway.threads import Threads
from services.gateway.tokens import UserTokens
from services.gateway.upstreams import Upstreams

logger = logging.getLogger(__name__)

SERVICE_NAME = gateway_service_pb2.DESCRIPTOR.services_by_name["GatewayService"].full_name
LIBRARY_NAME = memory_library_service_pb2.DESCRIPTOR.services_by_name[
    "MemoryLibraryService"].full_name
RUNS_NAME = run_service_pb2.DESCRIPTOR.services_by_name["RunService"].full_name
LEARNING_NAME = learning_service_pb2.DESCRIPTOR.services_by_name["LearningService"].full_name
RETRIEVAL_NAME = retrieval_service_pb2.DESCRIPTOR.services_by_name["RetrievalService"].full_name
KEYS_NAME = key_service_pb2.DESCRIPTOR.services_by_name["KeyService"].full_name
MIGRATIONS = Path(__file__).parent / "migrations"


async def connect(dsn: str) -> asyncpg.Pool:
    try:
        pool = await postgres.create_pool(dsn, min_size=2, max_size=10)
    except (OSError, asyncpg.PostgresError) as exc:
        raise Unavailable(f"PostgreSQL unreachable: {exc}", reason="POSTGRES_UNAVAILABLE") from exc
    try:
        await migrations.apply(pool, "gateway", MIGRATIONS)
    except BaseException:
        await pool.close()
        raise
    return pool


@dataclass
class Running:
    server: GrpcServer
    keys: ApiKeys
    http_port: int


@contextlib.asynccontextmanager
async def running(config: GatewayConfig) -> AsyncIterator[Running]:
    """A serving gateway. What is built is released in reverse order, also when a later
    step fails: on exit gRPC drains, then HTTP, then the caches stop listening, then the
    upstream channels and the pool close."""
    async with contextlib.AsyncExitStack() as stack:
        tracing = Tracing(config.process.tracing, "gateway")
        stack.callback(tracing.close)
        dependencies = config.dependencies
        pool = await connect(dependencies.postgres_dsn.reveal())
        stack.push_async_callback(pool.close)
        pinned = PinnedCache(max_age_seconds=dependencies.pinned_cache_seconds)
        upstreams = Upstreams.connect(dependencies, config.process.internal.token,
                                      tracing.client_interceptors(),
                                      agent_memory_interceptors=[ForgetOnWrite(pinned)])
        stack.push_async_callback(upstreams.close)
        invalidations = Invalidations(dependencies.postgres_dsn.reveal())
        keys = ApiKeys(pool, invalidations, tokens=UserTokens(config.credentials.token_secret),
                       cache_seconds=dependencies.key_cache_seconds)
        bindings = MemoryBindings(upstreams, cache_seconds=dependencies.settings_cache_seconds)
        accounts = Accounts(upstreams, pool, cache_seconds=dependencies.settings_cache_seconds)
        callers = Callers(keys, accounts)
        threads = Threads(pool, invalidations, cache_seconds=dependencies.thread_cache_seconds)
        contexts = ContextBuilder(upstreams, pinned,
                                  relevant_timeout=dependencies.relevant_memories_timeout_seconds)
        servicer = GatewayServicer(callers, threads, upstreams, bindings, contexts)
        library = MemoryLibraryServicer(callers, MemoryLibrary(upstreams, bindings, accounts))
        runs = RunServicer(callers, threads, upstreams)
        learning = LearningServicer(callers, upstreams)
        retrieval = RetrievalServicer(callers, Retrieval(upstreams, threads))
        key_servicer = KeyServicer(callers)
        server = GrpcServer(config.server, [
            ServiceBinding(SERVICE_NAME, lambda s: gateway_service_pb2_grpc
                           .add_GatewayServiceServicer_to_server(servicer, s)),
            ServiceBinding(LIBRARY_NAME, lambda s: memory_library_service_pb2_grpc
                           .add_MemoryLibraryServiceServicer_to_server(library, s)),
            ServiceBinding(RUNS_NAME, lambda s: run_service_pb2_grpc
                           .add_RunServiceServicer_to_server(runs, s)),
            ServiceBinding(LEARNING_NAME, lambda s: learning_service_pb2_grpc
                           .add_LearningServiceServicer_to_server(learning, s)),
            ServiceBinding(RETRIEVAL_NAME, lambda s: retrieval_service_pb2_grpc
                           .add_RetrievalServiceServicer_to_server(retrieval, s)),
            ServiceBinding(KEYS_NAME, lambda s: key_service_pb2_grpc
                           .add_KeyServiceServicer_to_server(key_servicer, s)),
        ], tracing=tracing)
        await stack.enter_async_context(invalidations.listening())
        await stack.enter_async_context(pinned.watching(upstreams.agent_memory))
        # HTTP first: once gRPC health says SERVING, both listeners answer.
        handlers = Servicers(gateway=servicer, library=library, retrieval=retrieval, runs=runs,
                             learning=learning, keys=key_servicer)
        http_port = await stack.enter_async_context(listening(
            handlers, keys, pool, config.http, host=config.server.host,
            grace_seconds=config.server.shutdown_grace_seconds,
            max_body_bytes=config.server.max_message_bytes))
        await server.start()
        stack.push_async_callback(server.stop)
        yield Running(server, keys, http_port)


async def serve(config: GatewayConfig) -> None:
    async with running(config) as service:
        logger.info("gateway serving gRPC on %s:%d, HTTP on %s:%d", config.server.host,
                    service.server.port, config.server.host, service.http_port)
        await wait_for_stop_signal()
