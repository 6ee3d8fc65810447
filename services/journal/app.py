"""Wiring: open the journal (or stand by for its shards), serve it over gRPC, watch for
fencing, shut down.

Health: the process reports SERVING under the empty name and the service's name
while it can answer (a standby does too), and SERVING under each shard's name
(``libs.journal_client.shard_health_name``) while it holds that shard: clients
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

from libs.journal_client import shard_health_name
from libs.server import GrpcServer, ServiceBinding, wait_for_stop_signal
from libs.tracing import Tracing
from services.journal.journal import Journal, ShardOpener
from services.journal.lease import ShardLease, build_lease_store
from services.journal.ownership import ShardOwnership
from services.journal.servicer import JournalServicer
from services.journal.settings import JournalConfig

logger = logging.getLogger(__name__)

SERVICE_NAME = journal_service_pb2.DESCRIPTOR.services_by_name["JournalService"].full_name
HEALTH_POLL_SECONDS = 0.25


def binding(journal: Journal) -> ServiceBinding:
    servicer = JournalServicer(journal)
    return ServiceBinding(
        SERVICE_NAME,
        lambda server: journal_service_pb2_grpc.add_JournalServiceServicer_to_server(
            servicer, server
        ),
    )


async def watch_health(journal: Journal, server: GrpcServer) -> None:
    """Without leases: turn NOT_SERVING as soon as a shard is fenced or fails."""
    while journal.serving():
        await asyncio.sleep(HEALTH_POLL_SECONDS)
    logger.error("journal no longer writable: health is NOT_SERVING")
    await server.set_serving(False)
    for index in journal.served:
        await server.set_component_health(shard_health_name(index), False)


@contextlib.asynccontextmanager
async def running(config: JournalConfig) -> AsyncIterator[tuple[Journal, GrpcServer]]:
    """A serving journal; on exit: end feeds, drain calls, close the shards (releasing
    their leases), stop."""
    tracing = Tracing(config.process.tracing, "journal")
    shards = config.shards
    logger.info("journal serving shard(s) %s of %d on %s%s",
                ",".join(map(str, shards.served())), shards.shard_count, config.store.describe(),
                f", under {shards.lease_seconds:g} s leases" if shards.lease_seconds else "")
    try:
        if shards.lease_seconds:
            await Journal.prepare()
            journal = Journal(shards.shard_count, shards.served())
        else:
            journal = await Journal.open(config.store, shards)
        try:
            server = GrpcServer(config.server, [binding(journal)], tracing=tracing,
                                internal_token=config.process.internal.token)
            await server.start()
            if shards.lease_seconds:
                tasks, stop = await _stand_by(journal, server, config)
            else:
                for index in journal.served:
                    await server.set_component_health(shard_health_name(index), True)
                tasks, stop = [asyncio.create_task(watch_health(journal, server))], _cancel
            try:
                yield journal, server
            finally:
                journal.begin_shutdown()
                await server.stop()
                await stop(tasks)
        finally:
            await journal.close()
    finally:
        tracing.close()


async def _stand_by(journal: Journal, server: GrpcServer, config: JournalConfig):
    """One ownership per served shard: each waits for its lease, then writes the shard."""
    shards = config.shards
    leases = build_lease_store(config.store, shards.lease_seconds)
    holder = f"{socket.gethostname()}:{server.port}/pid-{os.getpid()}"
    opener = ShardOpener(config.store, shards)

    async def report(index: int, serving: bool) -> None:
        await server.set_component_health(shard_health_name(index), serving)

    ownerships = [ShardOwnership(journal, opener, ShardLease(leases, index, holder,
                                                             shards.lease_seconds), report)
                  for index in journal.served]
    tasks = [asyncio.create_task(o.run_forever()) for o in ownerships]

    async def stop(running_tasks: list[asyncio.Task]) -> None:
        for ownership in ownerships:
            await ownership.stop()
        await asyncio.gather(*running_tasks, return_exceptions=True)
        await leases.close()

    return tasks, stop


async def _cancel(tasks: list[asyncio.Task]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def serve(config: JournalConfig) -> None:
    async with running(config) as (_, server):
        logger.info("journal serving on %s:%d", config.server.host, server.port)
        await wait_for_stop_signal()
