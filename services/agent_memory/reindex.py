"""``python -m services.agent_memory.reindex --account ACME``: rebuild an account's
collection from PostgreSQL, with a progress display.

Calls the running service's Reindex RPC (``AGENT_MEMORY_ADDRESS``, default
127.0.0.1:50054; ``INTERNAL_AUTH_TOKEN`` when the service requires it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

import grpc
from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from agentmemory.common.v1 import principal_pb2

from libs.clients.agent_memory import AgentMemoryClient
from libs.errors import error_details
from libs.settings import Secret

BAR = 40


def bar(done: int, total: int) -> str:
    filled = BAR if total == 0 else BAR * done // total
    percent = 100 if total == 0 else 100 * done // total
    return f"[{'#' * filled}{'.' * (BAR - filled)}] {done:,}/{total:,} ({percent}%)"


async def reindex(address: str, account: str, environment: str) -> int:
    token = Secret(os.environ.get("INTERNAL_AUTH_TOKEN", ""))
    agent_memory = AgentMemoryClient(address, timeout=5.0, internal_token=token)
    # The agent id is not part of a collection; any valid one names the caller.
    principal = principal_pb2.Principal(account_id=account, agent_id="reindex",
                                        environment=environment)
    try:
        async for progress in agent_memory.reindex(pb.ReindexRequest(principal=principal),
                                                   timeout=3600):
            print(f"\r{progress.collection} {bar(progress.indexed, progress.total)}",
                  end="", flush=True)
    except grpc.aio.AioRpcError as exc:
        print(f"\nreindex failed: {error_details(exc).message}", file=sys.stderr)
        return 1
    finally:
        await agent_memory.close()
    print()
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m services.agent_memory.reindex",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--account", required=True)
    parser.add_argument("--environment", default="default")
    parser.add_argument("--address", default=os.environ.get("AGENT_MEMORY_ADDRESS",
                                                            "127.0.0.1:50054"))
    args = parser.parse_args()
    sys.exit(asyncio.run(reindex(args.address, args.account, args.environment)))


if __name__ == "__main__":
    main()
