"""The gateway's wire relay to agent memory, and the servicers built on it.

The memory library, the Learning tab and retrieval relay each call of the
gateway's service to agent memory's call of the same name, with the caller's
principal. Their messages mirror agent memory's field for field (same names,
numbers and types; ``caller`` in place of ``principal``), which
``tests/gateway/test_library_shapes.py`` and ``test_retrieval_shapes.py`` check,
so a request relays by its wire form and nothing is defined or converted twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from types import ModuleType
from typing import Any

from google.protobuf.message import Message

from libs.clients.agent_memory import AgentMemoryClient
from libs.identity import Principal


class Mirror:
    """A gateway service whose messages are in ``gateway`` (a ``_pb2`` module), mirroring
    agent memory's ``service`` (its messages in ``internal``)."""

    def __init__(self, client: AgentMemoryClient, service: str, gateway: ModuleType,
                 internal: ModuleType) -> None:
        self._client = client
        self._service = service
        self._gateway = gateway
        self._internal = internal

    # The messages are looked up by name, so their types are Any here; the shape tests
    # check that each pair mirrors the other.
    def request(self, method: str, principal: Principal, request: Message) -> Any:
        """Agent memory's request for a gateway one: its ``caller`` ignored, the principal
        standing for it."""
        body = type(request)()
        body.CopyFrom(request)
        body.ClearField("caller")
        relayed = getattr(self._internal, f"{method}Request").FromString(
            body.SerializeToString())
        relayed.principal.CopyFrom(principal.to_proto())
        return relayed

    async def send(self, method: str, relayed: Message) -> Any:
        """Agent memory's answer to ``relayed``, as the gateway's response."""
        reply = await self._client.call(self._service, method, relayed)
        return getattr(self._gateway, f"{method}Response").FromString(reply.SerializeToString())

    async def call(self, method: str, principal: Principal, request: Message) -> Any:
        return await self.send(method, self.request(method, principal, request))


# (servicer, method, request, context): the servicer's own type, and its request's, vary.
Handle = Callable[[Any, str, Any, Any], Awaitable[Message]]


def add_handlers(servicer: type, methods: Iterable[str], handle: Handle) -> None:
    """Give ``servicer`` each of ``methods`` it does not define itself, as
    ``handle(self, method, request, context)``."""
    for method in methods:
        if method not in vars(servicer):
            setattr(servicer, method, _handler(method, handle))


def _handler(method: str, handle: Handle):
    async def handler(self, request, context):
        return await handle(self, method, request, context)

    handler.__name__ = method
    return handler
