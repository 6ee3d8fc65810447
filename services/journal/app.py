"""Wiring: open the journal (or stand by for its shards), serve it over gRPC, watch for
fencing, shut down.

Health: the process reports SERVING under the empty name and the service's name
while it can answer (a standby does too), and SERVING under each shard's name
(``libs.clients.journal.shard_health_name``) while it holds that shard: clients
route by the latter. Without leases, a fenced or failed shard turns the whole
process NOT_SERVING for good (it must be restarted); with leases, the shard
alone stops and the process stands by for it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator

from agentmemory.journal.v1 import journal_service_pb2, journal_service_pb2_grpc

from libs import tasks
from libs.clients.journal import shard_health_name
from libs.server import GrpcServer, ServiceBinding, wait_for_stop_signal
from libs.tracing import Tracing
from services.journal.journal import Journal, ShardOpener
from services.journal.lease import ShardLease, build_lease_store
from services.journal.ownership import ShardOwnership
from services.journal.servicer import JournalServicer
from services.journal.settings import JournalConfig

logger = logging.getLogger(__name__)

SERVICE_NAME = journal_service_pb2.DESCRIPTOR.services_by_name["JournalService"].full_name
# SlateDB notices a newer writer when it reads its manifest, once a second; looking at its
# status four times as often would report it at most 0.75 s sooner.
FENCING_POLL_SECONDS = 1.0
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
    """Without leases: turn NOT_SERVING as soon as a shard fails (or, fenced, once SlateDB
    has noticed it)."""
    watches = [asyncio.create_task(shard.until_failed(FENCING_POLL_SECONDS))
               for shard in journal.shards]
    try:
        await asyncio.wait(watches, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for watch in watches:
            watch.cancel()
        await asyncio.gather(*watches, return_exceptions=True)
    logger.error("journal no longer writable: health is NOT_SERVING")
    await server.set_serving(False)
    for index in journal.served:
        await server.set_component_health(shard_health_name(index), False)


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
    """A serving journal; on exit (in reverse order of what was built): end feeds,
    drain calls, close the shards (releasing their leases), stop."""
    shards = config.shards
    logger.info("journal serving shard(s) %s of %d on %s%s",
                ",".join(map(str, shards.served())), shards.shard_count, config.store.describe(),
                f", under {shards.lease_seconds:g} s leases" if shards.lease_seconds else "")
    async with contextlib.AsyncExitStack() as stack:
        tracing = Tracing(config.process.tracing, "journal")
        stack.callback(tracing.close)
        if shards.lease_seconds:
            await Journal.prepare()
            journal = Journal(shards.shard_count, shards.served())
        else:
            journal = await Journal.open(config.store, shards)
        stack.push_async_callback(journal.close)
        server = GrpcServer(config.server, [binding(journal)], tracing=tracing,
                            internal_token=config.process.internal.token)
        observe_commits(journal, server)
        await server.start()
        async with contextlib.AsyncExitStack() as started:
            started.push_async_callback(server.stop)  # if the shards' holding fails to start
            await stack.enter_async_context(
                _standing_by(journal, server, config) if shards.lease_seconds
                else _watched(journal, server))
            # Started: move the stop above the holding, so calls drain before shards close.
            await stack.enter_async_context(started.pop_all())
        stack.callback(journal.begin_shutdown)
        yield journal, server


@contextlib.asynccontextmanager
async def _watched(journal: Journal, server: GrpcServer) -> AsyncIterator[None]:
    """Without leases: every shard is held from the start until it fails."""
    for index in journal.served:
        await server.set_component_health(shard_health_name(index), True)
    async with tasks.background() as loops:
        loops.start(watch_health(journal, server))
        yield


@contextlib.asynccontextmanager
async def _standing_by(journal: Journal, server: GrpcServer,
                       config: JournalConfig) -> AsyncIterator[None]:
    """With leases: one ownership per served shard, each waiting for its lease and then
    writing the shard; on exit each closes what it holds and releases the lease."""
    shards = config.shards
    holder = f"{socket.gethostname()}:{server.port}/pid-{os.getpid()}"

    async def report(index: int, serving: bool) -> None:
        await server.set_component_health(shard_health_name(index), serving)

    async with contextlib.AsyncExitStack() as stack:
        leases = build_lease_store(config.store, shards.lease_seconds)
        stack.push_async_callback(leases.close)
        opener = ShardOpener(config.store, shards)
        # No grace: a held shard must be closed and its lease released, however long it takes.
        loops = await stack.enter_async_context(tasks.background(grace_seconds=None))
        for index in journal.served:
            ownership = ShardOwnership(journal, opener, ShardLease(
                leases, index, holder, shards.lease_seconds), report)
            loops.start(ownership.run_forever(), stop=ownership.stop)
        yield


async def serve(config: JournalConfig) -> None:
    async with running(config) as (_, server):
        logger.info("journal serving on %s:%d", config.server.host, server.port)
        await wait_for_stop_signal()
