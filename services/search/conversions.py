"""Proto <-> domain conversions of the search service, all in one place."""

from __future__ import annotations

from agentmemory.common.v1 import message_pb2, principal_pb2
from agentmemory.search.v1 import search_service_pb2 as pb

from libs import limits
from libs.conversions import from_milliseconds
from libs.errors import InvalidArgument, PermissionDenied
from libs.identity import require_id
from services.search.search import Mode, Result, Scope, ThreadSummary

_ROLES = {"user": message_pb2.ROLE_USER, "assistant": message_pb2.ROLE_ASSISTANT}
_SCOPES = {pb.SCOPE_UNSPECIFIED: Scope.ALL_THREADS, pb.SCOPE_ALL_THREADS: Scope.ALL_THREADS,
           pb.SCOPE_CURRENT_THREAD: Scope.CURRENT_THREAD}
_MODES: dict[int, Mode | None] = {pb.SEARCH_MODE_UNSPECIFIED: None, pb.SEARCH_MODE_KEYWORD: Mode.KEYWORD,
          pb.SEARCH_MODE_HYBRID: Mode.HYBRID}
DEFAULT_LIMIT, MAX_LIMIT = 10, 50
MAX_QUERY_CHARS = 1000


def check_surface(surface: int) -> None:
    """The journal tools exist on agent surfaces only, never for MCP-gateway callers."""
    if surface == principal_pb2.SURFACE_MCP_GATEWAY:
        raise PermissionDenied("transcript search is not available to MCP-gateway callers",
                               reason="SURFACE_NOT_ALLOWED")
    if surface != principal_pb2.SURFACE_AGENT:
        raise InvalidArgument("surface", "required: SURFACE_AGENT")


def query(value: str) -> str:
    if not value.strip():
        raise InvalidArgument("query", "required")
    if len(value) > MAX_QUERY_CHARS:
        raise InvalidArgument("query", f"at most {MAX_QUERY_CHARS} characters")
    return value


def scope(request: pb.SearchMessagesRequest) -> tuple[Scope, str | None]:
    if request.scope not in _SCOPES:
        raise InvalidArgument("scope", "must be current_thread or all_threads")
    chosen = _SCOPES[request.scope]
    if chosen == Scope.CURRENT_THREAD:
        if not request.thread_id:
            raise InvalidArgument("thread_id", "required with scope current_thread")
        return chosen, require_id(request.thread_id, "thread_id")
    return chosen, None


def mode(value: int) -> Mode | None:
    """The requested ranking; None for the service's default."""
    if value not in _MODES:
        raise InvalidArgument("mode", "must be SEARCH_MODE_KEYWORD or SEARCH_MODE_HYBRID")
    return _MODES[value]


def limit(value: int) -> int:
    return limits.count(value, "limit", default=DEFAULT_LIMIT, maximum=MAX_LIMIT)


def summarize(request: pb.SearchMessagesRequest) -> bool:
    return request.summarize if request.HasField("summarize") else True


def response(result: Result, summaries: list[ThreadSummary]) -> pb.SearchMessagesResponse:
    return pb.SearchMessagesResponse(
        hits=[pb.SearchHit(thread_id=h.thread_id, message_id=h.message_id, offset=h.offset,
                           role=_ROLES[h.role], snippet=h.snippet,
                           created_at=from_milliseconds(h.created_at_ms), score=h.score)
              for h in result.hits],
        summaries=[pb.ThreadMatchSummary(thread_id=s.thread_id, summary=s.summary,
                                         generator=s.generator) for s in summaries],
        fallback=result.fallback, reranked=result.reranked,
    )


