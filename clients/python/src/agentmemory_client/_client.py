"""The sync and asyncio clients: one channel each, the calls of ``_calls.py`` bound to the
caller the client acts as, run with the key, a deadline and retries."""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

import grpc

from agentmemory_client import _calls, _errors
from agentmemory_client._calls import Call, Caller, Pages
from agentmemory_client._proto.agentmemory.common.v1 import principal_pb2
from agentmemory_client._proto.agentmemory.gateway.v1 import gateway_service_pb2_grpc as gateway_grpc
from agentmemory_client._proto.agentmemory.gateway.v1 import key_service_pb2_grpc as key_grpc
from agentmemory_client._proto.agentmemory.gateway.v1 import memory_library_service_pb2_grpc as library_grpc
from agentmemory_client._proto.agentmemory.gateway.v1 import retrieval_service_pb2_grpc as retrieval_grpc
from agentmemory_client._proto.agentmemory.gateway.v1 import run_service_pb2_grpc as run_grpc
from agentmemory_client._types import RetryPolicy
from agentmemory_client._version import __version__

API_KEY_VARIABLE, ADDRESS_VARIABLE = "AGENTMEMORY_API_KEY", "AGENTMEMORY_ADDRESS"
DEFAULT_ADDRESS = "localhost:50051"
DEFAULT_RETRY = RetryPolicy()
_STUBS = {"gateway": gateway_grpc.GatewayServiceStub,
          "library": library_grpc.MemoryLibraryServiceStub,
          "retrieval": retrieval_grpc.RetrievalServiceStub,
          "runs": run_grpc.RunServiceStub, "keys": key_grpc.KeyServiceStub}

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True)
class _Settings:
    address: str
    api_key: str
    tls: bool
    #: Seconds a call may take, its retries included.
    timeout: float
    retry: RetryPolicy

    @classmethod
    def resolve(cls, api_key: str | None, address: str | None, tls: bool, timeout: float,
                retry: RetryPolicy) -> _Settings:
        api_key = api_key or os.environ.get(API_KEY_VARIABLE, "")
        if not api_key:
            raise _errors.error("UNAUTHENTICATED", f"no API key: pass api_key or set "
                                f"{API_KEY_VARIABLE}", "API_KEY_MISSING")
        return cls(address or os.environ.get(ADDRESS_VARIABLE) or DEFAULT_ADDRESS, api_key,
                   tls, timeout, retry)

    def channel_arguments(self) -> dict[str, Any]:
        return {"target": self.address,
                "options": [("grpc.primary_user_agent", f"agentmemory-client-python/{__version__}")]}

    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.api_key}"),)


def _retry_delay(call: Call[Any], error: _errors.AgentMemoryError, attempt: int,
                 settings: _Settings, deadline: float) -> float | None:
    """Seconds to wait before the next attempt, or None: raise ``error``."""
    policy = settings.retry
    if not (call.retry and isinstance(error, _errors.UnavailableError)
            and attempt < policy.attempts):
        return None
    delay = random.uniform(0, min(policy.max_backoff, policy.initial_backoff * 2 ** (attempt - 1)))
    return delay if time.monotonic() + delay < deadline else None


def _signature(builder: Callable[..., Any]) -> inspect.Signature:
    """The builder's signature with ``self`` for its caller (what help() shows)."""
    signature = inspect.signature(builder)
    _, *parameters = signature.parameters.values()
    return signature.replace(return_annotation=inspect.Signature.empty, parameters=[
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *parameters])


def _method(builder: Callable[Concatenate[Caller, P], Call[T]]) -> Callable[Concatenate[Any, P], T]:
    @functools.wraps(builder)
    def method(self: Any, *args: P.args, **kwargs: P.kwargs) -> T:
        client = self._client
        return client._run(builder(client._caller, *args, **kwargs))
    method.__signature__ = _signature(builder)  # type: ignore[attr-defined]
    return method


def _pages(builder: Callable[Concatenate[Caller, P], Pages[T]]
           ) -> Callable[Concatenate[Any, P], Iterator[T]]:
    @functools.wraps(builder)
    def method(self: Any, *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        client = self._client
        return client._iterate(builder(client._caller, *args, **kwargs))
    method.__signature__ = _signature(builder)  # type: ignore[attr-defined]
    return method


def _async_method(builder: Callable[Concatenate[Caller, P], Call[T]]
                  ) -> Callable[Concatenate[Any, P], Awaitable[T]]:
    @functools.wraps(builder)
    async def method(self: Any, *args: P.args, **kwargs: P.kwargs) -> T:
        client = self._client
        return await client._run(builder(client._caller, *args, **kwargs))
    method.__signature__ = _signature(builder)  # type: ignore[attr-defined]
    return method


def _async_pages(builder: Callable[Concatenate[Caller, P], Pages[T]]
                 ) -> Callable[Concatenate[Any, P], AsyncIterator[T]]:
    @functools.wraps(builder)
    def method(self: Any, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[T]:
        client = self._client
        return client._iterate(builder(client._caller, *args, **kwargs))
    method.__signature__ = _signature(builder)  # type: ignore[attr-defined]
    return method


class _Part:
    def __init__(self, client: Any) -> None:
        self._client = client


# The sync and asyncio parts list the same calls, spelled out rather than derived from one
# table: a type checker (and an editor's completion) sees each method, its signature, and
# whether it is awaited.


class Memory(_Part):
    """Seed 002's search, seed 000's memory tools, and the memory library."""

    search = _method(_calls.search)
    store = _method(_calls.store)
    recall = _method(_calls.recall)
    forget = _method(_calls.forget)
    add = _method(_calls.add)
    get = _method(_calls.get)
    list = _pages(_calls.list_memories)
    edit = _method(_calls.edit)
    delete = _method(_calls.delete)
    restore = _method(_calls.restore)
    rollback = _method(_calls.rollback)
    explain = _method(_calls.explain)


class Threads(_Part):
    append = _method(_calls.append)


class Context(_Part):
    build = _method(_calls.build_context)


class Runs(_Part):
    start = _method(_calls.start_run)
    finish = _method(_calls.finish_run)
    get = _method(_calls.get_run)


class Keys(_Part):
    """The account's credentials (an admin key; mint_user_token: a key that may act for
    users)."""

    create = _method(_calls.create_key)
    list = _method(_calls.list_keys)
    rotate = _method(_calls.rotate_key)
    revoke = _method(_calls.revoke_key)
    mint_user_token = _method(_calls.mint_user_token)


class AsyncMemory(_Part):
    """Seed 002's search, seed 000's memory tools, and the memory library."""

    search = _async_method(_calls.search)
    store = _async_method(_calls.store)
    recall = _async_method(_calls.recall)
    forget = _async_method(_calls.forget)
    add = _async_method(_calls.add)
    get = _async_method(_calls.get)
    list = _async_pages(_calls.list_memories)
    edit = _async_method(_calls.edit)
    delete = _async_method(_calls.delete)
    restore = _async_method(_calls.restore)
    rollback = _async_method(_calls.rollback)
    explain = _async_method(_calls.explain)


class AsyncThreads(_Part):
    append = _async_method(_calls.append)


class AsyncContext(_Part):
    build = _async_method(_calls.build_context)


class AsyncRuns(_Part):
    start = _async_method(_calls.start_run)
    finish = _async_method(_calls.finish_run)
    get = _async_method(_calls.get_run)


class AsyncKeys(_Part):
    """The account's credentials (an admin key; mint_user_token: a key that may act for
    users)."""

    create = _async_method(_calls.create_key)
    list = _async_method(_calls.list_keys)
    rotate = _async_method(_calls.rotate_key)
    revoke = _async_method(_calls.revoke_key)
    mint_user_token = _async_method(_calls.mint_user_token)


class _Base:
    _settings: _Settings
    _caller: Caller
    _stubs: dict[str, Any]

    def _bind(self, settings: _Settings, caller: Caller, stubs: dict[str, Any]) -> None:
        self._client, self._settings, self._caller, self._stubs = self, settings, caller, stubs
        self._make_parts()

    def _make_parts(self) -> None:
        raise NotImplementedError

    def with_options(self, *, agent_id: str | None = None, user_id: str | None = None,
                     environment: str | None = None, timeout: float | None = None) -> Self:
        """The same connection acting as another agent or user, or with another deadline
        (seconds per call, retries included)."""
        caller = Caller()
        caller.CopyFrom(self._caller)
        for name, value in (("agent_id", agent_id), ("user_id", user_id),
                            ("environment", environment)):
            if value is not None:
                setattr(caller, name, value)
        view = object.__new__(type(self))
        view._channel = self._channel  # type: ignore[attr-defined]
        view._bind(replace(self._settings, timeout=timeout or self._settings.timeout), caller,
                   self._stubs)
        return view


def _caller(agent_id: str | None, user_id: str | None, environment: str | None) -> Caller:
    return Caller(agent_id=agent_id or "", user_id=user_id or "", environment=environment or "",
                  surface=principal_pb2.SURFACE_AGENT)


class Client(_Base):
    """The gateway's API, blocking.

    ::

        with Client(agent_id="concierge", user_id="ana") as client:
            client.memory.store("home_city", "The user lives in Lisbon.",
                                category="user_profile")

    The key comes from ``api_key`` or AGENTMEMORY_API_KEY, the address (``host:port``)
    from ``address`` or AGENTMEMORY_ADDRESS (default localhost:50051). ``agent_id`` may be
    left out with a credential bound to one agent; ``user_id`` needs a key that may act
    for users (or the key's own user). ``timeout``: seconds each call may take, retries
    included.
    """

    def __init__(self, *, agent_id: str | None = None, user_id: str | None = None,
                 environment: str | None = None, api_key: str | None = None,
                 address: str | None = None, tls: bool = False, timeout: float = 30.0,
                 retry: RetryPolicy = DEFAULT_RETRY) -> None:
        settings = _Settings.resolve(api_key, address, tls, timeout, retry)
        arguments = settings.channel_arguments()
        self._channel = (grpc.secure_channel(credentials=grpc.ssl_channel_credentials(),
                                             **arguments)
                         if tls else grpc.insecure_channel(**arguments))
        self._bind(settings, _caller(agent_id, user_id, environment),
                   {name: stub(self._channel) for name, stub in _STUBS.items()})

    def _make_parts(self) -> None:
        self.memory, self.threads, self.context = Memory(self), Threads(self), Context(self)
        self.runs, self.keys = Runs(self), Keys(self)

    feedback = _method(_calls.feedback)
    outcome = _method(_calls.outcome)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _run(self, call: Call[T]) -> T:
        method = getattr(self._stubs[call.service], call.method)
        deadline = time.monotonic() + self._settings.timeout
        attempt = 0
        while True:
            attempt += 1
            try:
                reply = method(call.request, timeout=max(deadline - time.monotonic(), 0),
                               metadata=self._settings.metadata())
            except grpc.RpcError as failure:
                error = _errors.from_rpc_error(failure)
                delay = _retry_delay(call, error, attempt, self._settings, deadline)
                if delay is None:
                    raise error from failure
                time.sleep(delay)
            else:
                return call.convert(reply)

    def _iterate(self, pages: Pages[T] | None) -> Iterator[T]:
        while pages is not None:
            reply = self._run(pages.call)
            yield from pages.items(reply)
            pages = pages.next(reply)


class AsyncClient(_Base):
    """The gateway's API, for asyncio: as :class:`Client`, every call awaited, ``list``
    an async iterator. ``async with AsyncClient(...) as client: ...``"""

    def __init__(self, *, agent_id: str | None = None, user_id: str | None = None,
                 environment: str | None = None, api_key: str | None = None,
                 address: str | None = None, tls: bool = False, timeout: float = 30.0,
                 retry: RetryPolicy = DEFAULT_RETRY) -> None:
        settings = _Settings.resolve(api_key, address, tls, timeout, retry)
        arguments = settings.channel_arguments()
        self._channel = (grpc.aio.secure_channel(credentials=grpc.ssl_channel_credentials(),
                                                 **arguments)
                         if tls else grpc.aio.insecure_channel(**arguments))
        self._bind(settings, _caller(agent_id, user_id, environment),
                   {name: stub(self._channel) for name, stub in _STUBS.items()})

    def _make_parts(self) -> None:
        self.memory, self.threads = AsyncMemory(self), AsyncThreads(self)
        self.context, self.runs, self.keys = AsyncContext(self), AsyncRuns(self), AsyncKeys(self)

    feedback = _async_method(_calls.feedback)
    outcome = _async_method(_calls.outcome)

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def _run(self, call: Call[T]) -> T:
        method = getattr(self._stubs[call.service], call.method)
        deadline = time.monotonic() + self._settings.timeout
        attempt = 0
        while True:
            attempt += 1
            try:
                reply = await method(call.request, timeout=max(deadline - time.monotonic(), 0),
                                     metadata=self._settings.metadata())
            except grpc.RpcError as failure:
                error = _errors.from_rpc_error(failure)
                delay = _retry_delay(call, error, attempt, self._settings, deadline)
                if delay is None:
                    raise error from failure
                await asyncio.sleep(delay)
            else:
                return call.convert(reply)

    async def _iterate(self, pages: Pages[T] | None) -> AsyncIterator[T]:
        while pages is not None:
            reply = await self._run(pages.call)
            for item in pages.items(reply):
                yield item
            pages = pages.next(reply)
