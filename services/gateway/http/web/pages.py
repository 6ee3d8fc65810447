"""The memory library page at ``/a/<account>/memory``: server-rendered HTML, plain forms.

Every action is one request: a GET renders a page, a POST does one thing and
redirects (303) back to a page that says what happened. A page acts with the
signed-in session's credential, as the agent (and user) chosen in its header, by
calling the gateway's gRPC servicers (``calls.invoke``): the library, learning
and settings calls, their authentication, validation and rules are exactly
those of gRPC. An error of a call is shown on the page with its reason.

``/a/<account>/memory`` itself is the overview a person lands on after signing
in: the agents with their memories counted by scope and kind (so nobody needs
to know an agent id first), recent changes, pending suggestions, export and
import. The other pages act as one agent; without one chosen they lead back
to the overview.

Refusals: no session -> the sign-in page; a session of another account (the
path names an account the key is not of) -> 404, as for an account that does
not exist; a POST from another origin, or without the session's CSRF token ->
403 and nothing done. Every value is escaped by the templates (autoescape);
memory content is shown as text, never as markup.
"""

from __future__ import annotations

import asyncio
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import grpc
import jinja2
from agentmemory.agent_memory.v1 import learning_service_pb2 as learning_memory_pb
from agentmemory.gateway.v1 import gateway_service_pb2 as gateway_pb
from agentmemory.gateway.v1 import learning_service_pb2 as learning_pb
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from google.protobuf import field_mask_pb2
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from libs.errors import DomainError, InvalidArgument, shown
from libs.identity import ID_PATTERN
from libs.server import REQUEST_ID_HEADER
from services.gateway import callers
from services.gateway.http import calls, errors
from services.gateway.http.web import bodies, display, forms, paging
from services.gateway.http.web.sessions import Session, Sessions
from services.gateway.keys import ApiKeys, Credential

HERE = Path(__file__).parent
COOKIE, SIGN_IN_COOKIE = "am_session", "am_signin"
SIGN_IN_SECONDS = 3600
STATIC = "/static/library"
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; style-src 'self'; script-src 'self'; "
                               "img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
                               "base-uri 'none'",
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}
#: What a ``?done=`` code after a redirect says (fixed texts: nothing is reflected).
NOTICES = {
    "added": "Memory added.", "edited": "Memory saved as a new version.",
    "unchanged": "Nothing changed.", "deleted": "Memory deleted (restorable until it is purged).",
    "restored": "Memory restored.", "rolled_back": "Rolled back: the old version is current again.",
    "superseded": "Memory marked superseded.", "accepted": "Suggestion accepted.",
    "rejected": "Suggestion rejected.", "procedure_deleted": "Procedure deleted.",
    "settings": "Settings saved.", "view": "Now acting as the agent and user shown above.",
    "signed_out": "Signed out.",
    "choose_agent": "Choose the agent the page acts as first (below, or in the header).",
}
IMPORT_COUNTS = ("created", "unchanged", "conflicts")
EXPORT_PAGE = 1000
OVERVIEW_CHANGES, OVERVIEW_SUGGESTIONS = 8, 3
SUPERSEDE_CANDIDATES = 50
MAX_RELATED = 10  # memories a memory's page names by key (those it superseded)


def _import_notice(query: dict[str, str]) -> str:
    """``?done=imported&created=3...``: numbers only, so nothing is reflected."""
    count = {name: int(v) if (v := query.get(name, "0")).isdigit() and len(v) < 10 else 0
             for name in IMPORT_COUNTS}
    return (f"Imported: {count['created']} created, {count['unchanged']} already here, "
            f"{count['conflicts']} left alone (already here with other content).")


def templates() -> Jinja2Templates:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
        undefined=jinja2.StrictUndefined)
    environment.filters.update(short=display.short, option=display.option, when=display.when,
                               tags_text=display.tags_text, number=display.number)
    environment.globals.update(changes=display.changes, subject=display.subject, static=STATIC)
    return Jinja2Templates(env=environment)


class CallerRequest(Protocol):
    """A gateway request: each names its caller."""

    @property
    def caller(self) -> gateway_pb.Caller: ...


class MemoryRequest(CallerRequest, Protocol):
    """A library request about one memory."""

    memory_id: str


@dataclass
class Page:
    """One request to a page of a signed-in session."""

    request: Request
    account: str
    session: Session
    form: dict[str, str] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"/a/{self.account}/memory"

    @property
    def query(self) -> dict[str, str]:
        return dict(self.request.query_params)


def _acting_as(credential: Credential, agent_id: str, user_id: str) -> dict[str, str]:
    """The agent and user the page acts as: what the person chose, as far as the
    credential allows (a user token or a bound key fills in its own; no agent chosen,
    the overview offers them)."""
    return {"agent_id": callers.agent_of(credential, agent_id, "agent", required=False),
            "user_id": callers.user_of(credential, user_id, "user")}


def _redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _same_origin(request: Request) -> bool:
    """A browser's POST says where its page came from; it must be this site. Hosts are
    compared, not schemes: behind a TLS proxy whose forwarded headers are not trusted the
    page is https to the browser and http here."""
    origin = request.headers.get("origin")
    if origin is None:
        return True  # not sent by some browsers on same-origin POSTs; the CSRF token decides
    return urllib.parse.urlsplit(origin).netloc == request.headers.get("host", "")


class LibraryPages:
    def __init__(self, servicers: calls.Servicers, keys: ApiKeys, sessions: Sessions, *,
                 max_body_bytes: int) -> None:
        self._servicers = servicers
        self._keys = keys
        self._sessions = sessions
        self._max_body_bytes = max_body_bytes
        self._templates = templates()

    def routes(self) -> list[BaseRoute]:
        base = "/a/{account}/memory"
        get, post = self._page, self._action
        anywhere = {"needs_agent": False}
        return [
            Mount(STATIC, StaticFiles(directory=HERE / "static"), name="library-static"),
            Route(f"{base}/sign-in", self._sign_in_form, methods=["GET"]),
            Route(f"{base}/sign-in", self._sign_in, methods=["POST"]),
            Route(f"{base}/sign-out", post(self._sign_out, **anywhere), methods=["POST"]),
            Route(f"{base}/view", post(self._set_view, **anywhere), methods=["POST"]),
            Route(base, get(self._overview, **anywhere), methods=["GET"]),
            Route(f"{base}/memories", get(self._list), methods=["GET"]),
            Route(f"{base}/changes", get(self._changes), methods=["GET"]),
            Route(f"{base}/export", get(self._export), methods=["GET"]),
            Route(f"{base}/import", post(self._import), methods=["POST"]),
            Route(f"{base}/new", get(self._new_form), methods=["GET"]),
            Route(f"{base}/new", post(self._add), methods=["POST"]),
            Route(f"{base}/suggestions", get(self._suggestions), methods=["GET"]),
            Route(f"{base}/suggestions/{{suggestion_id}}/accept", post(self._accept),
                  methods=["POST"]),
            Route(f"{base}/suggestions/{{suggestion_id}}/reject", post(self._reject),
                  methods=["POST"]),
            Route(f"{base}/procedures", get(self._procedures), methods=["GET"]),
            Route(f"{base}/procedures/{{procedure_id}}/delete", post(self._delete_procedure),
                  methods=["POST"]),
            Route(f"{base}/settings", get(self._settings), methods=["GET"]),
            Route(f"{base}/settings/account", post(self._save_account), methods=["POST"]),
            Route(f"{base}/settings/agent", post(self._save_agent), methods=["POST"]),
            Route(f"{base}/{{memory_id}}", get(self._memory), methods=["GET"]),
            *(Route(f"{base}/{{memory_id}}/{name}", post(action), methods=["POST"])
              for name, action in [("edit", self._edit), ("delete", self._delete),
                                   ("restore", self._restore), ("rollback", self._rollback),
                                   ("supersede", self._supersede)]),
        ]

    # -- plumbing ------------------------------------------------------------------

    def _render(self, request: Request, name: str, context: dict[str, Any], *,
                page: Page | None = None, status: int = 200) -> Response:
        if page is not None:
            done = request.query_params.get("done", "")
            context = {"base": page.base, "account": page.account,
                       "agent_id": page.session.agent_id, "user_id": page.session.user_id,
                       "csrf": self._sessions.csrf_token(page.session),
                       "notice": _import_notice(page.query) if done == "imported"
                       else NOTICES.get(done), **context}
        response = self._templates.TemplateResponse(request, name, context, status_code=status)
        response.headers.update(SECURITY_HEADERS)
        return response

    def _refusal(self, request: Request, status: int, title: str, message: str) -> Response:
        return self._render(request, "refused.html", {
            "title": title, "message": message, "notice": None,
            "account": request.path_params.get("account", "")}, status=status)

    def _not_found(self, request: Request) -> Response:
        return self._refusal(request, 404, "Not found", "There is no such page.")

    async def _session(self, request: Request) -> tuple[str, Session | None] | Response:
        account = request.path_params["account"]
        if not ID_PATTERN.fullmatch(account):
            return self._not_found(request)
        session = await self._sessions.get(request.cookies.get(COOKIE))
        if session is not None and session.account_id != account:
            return self._not_found(request)  # the same answer as for an unknown account
        return account, session

    def _wrap(self, handler: Callable[[Page], Awaitable[Response]], *, post: bool,
              needs_agent: bool) -> Callable:
        async def endpoint(request: Request) -> Response:
            found = await self._session(request)
            if isinstance(found, Response):
                return found
            account, session = found
            if session is None:
                return _redirect(f"/a/{account}/memory/sign-in")
            page = Page(request, account, session)
            if needs_agent and not session.agent_id:
                return self._done(page, "", "choose_agent")
            try:
                if post:
                    if not _same_origin(request):
                        return self._refusal(request, 403, "Refused",
                                             "This form was sent from another site.")
                    body = await bodies.read(request, self._max_body_bytes)
                    page.form, page.files = body.fields, body.files
                    if not self._sessions.csrf_ok(session, page.form.get("csrf")):
                        return self._refusal(request, 403, "Refused",
                                             "This form is not from your current session. "
                                             "Go back, reload the page and try again.")
                return await handler(page)
            except DomainError as exc:
                if exc.code == grpc.StatusCode.UNAUTHENTICATED:  # the key was revoked
                    await self._sessions.delete(session)
                    return _redirect(f"/a/{account}/memory/sign-in")
                return self._render(request, "error.html", {"error": errors.body(exc)},
                                    page=page, status=errors.status(exc))

        return endpoint

    def _page(self, handler: Callable[[Page], Awaitable[Response]], *,
              needs_agent: bool = True) -> Callable:
        return self._wrap(handler, post=False, needs_agent=needs_agent)

    def _action(self, handler: Callable[[Page], Awaitable[Response]], *,
                needs_agent: bool = True) -> Callable:
        return self._wrap(handler, post=True, needs_agent=needs_agent)

    async def _call(self, page: Page, service: str, rpc: str, request: CallerRequest) -> Any:
        """One gateway call with the session's key, as the agent and user it acts as."""
        request.caller.CopyFrom(gateway_pb.Caller(agent_id=page.session.agent_id,
                                                  user_id=page.session.user_id))
        headers = {"authorization": page.session.authorization,
                   REQUEST_ID_HEADER: page.request.headers.get(REQUEST_ID_HEADER)
                   or uuid.uuid4().hex}
        return await calls.invoke(self._servicers.method(service, rpc), request, headers)

    async def _credential(self, page: Page) -> Credential:
        return await self._keys.authenticate(page.session.authorization)

    async def _writable(self, page: Page, scope: str = "") -> tuple[list[str], list[str]]:
        """The scopes and kinds the session's credential may write (of ``scope``)."""
        credential = await self._credential(page)
        return forms.writable(credential.role, bool(page.session.user_id), scope)

    @staticmethod
    def _done(page: Page, path: str, code: str, **counts: int) -> Response:
        query = urllib.parse.urlencode({"done": code, **counts})
        return _redirect(f"{page.base}{path}?{query}")

    # -- sign-in -------------------------------------------------------------------

    async def _sign_in_form(self, request: Request, *, error: str = "", status: int = 200,
                            values: dict[str, str] | None = None) -> Response:
        account = request.path_params["account"]
        if not ID_PATTERN.fullmatch(account):
            return self._not_found(request)
        cookie, token = self._sessions.sign_in_pair()
        response = self._render(request, "sign_in.html", {
            "account": account, "token": token, "error": error, "values": values or {},
            "notice": NOTICES.get(request.query_params.get("done", ""))}, status=status)
        response.set_cookie(SIGN_IN_COOKIE, cookie, max_age=SIGN_IN_SECONDS,
                            path=f"/a/{account}/", httponly=True, samesite="strict",
                            secure=request.url.scheme == "https")
        return response

    async def _sign_in(self, request: Request) -> Response:
        account = request.path_params["account"]
        if not ID_PATTERN.fullmatch(account):
            return self._not_found(request)
        if not _same_origin(request):
            return self._refusal(request, 403, "Refused", "This form was sent from another site.")
        try:
            form = (await bodies.read(request, self._max_body_bytes)).fields
        except DomainError as exc:
            return self._refusal(request, errors.status(exc), "Refused", shown(exc).message)
        if not self._sessions.sign_in_ok(request.cookies.get(SIGN_IN_COOKIE), form.get("token")):
            return self._refusal(request, 403, "Refused", "This sign-in form has expired or is "
                                 "not from this site. Reload the sign-in page and try again.")
        values = {"agent_id": form.get("agent_id", "").strip(),
                  "user_id": form.get("user_id", "").strip()}
        try:
            credential = await self._keys.authenticate(
                f"Bearer {form.get('api_key', '').strip()}")
            if credential.account_id != account:
                return await self._sign_in_form(
                    request, status=403, values=values,
                    error=f"This API key is not a key of the account {account}.")
            values = _acting_as(credential, values["agent_id"], values["user_id"])
        except DomainError as exc:
            return await self._sign_in_form(request, error=shown(exc).message, values=values,
                                            status=errors.status(exc))
        ends = (None if credential.expires_at is None
                else datetime.fromtimestamp(credential.expires_at, UTC))
        session = await self._sessions.create(
            account, form["api_key"].strip(), values["agent_id"], values["user_id"],
            replacing=request.cookies.get(COOKIE), not_after=ends)
        response = _redirect(f"/a/{account}/memory")
        response.set_cookie(COOKIE, self._sessions.cookie_value(session),
                            max_age=self._sessions.max_age_seconds, path=f"/a/{account}/",
                            httponly=True, samesite="strict",
                            secure=request.url.scheme == "https")
        response.delete_cookie(SIGN_IN_COOKIE, path=f"/a/{account}/", httponly=True,
                               samesite="strict")
        return response

    async def _sign_out(self, page: Page) -> Response:
        await self._sessions.delete(page.session)
        response = _redirect(f"{page.base}/sign-in?done=signed_out")
        response.delete_cookie(COOKIE, path=f"/a/{page.account}/", httponly=True,
                               samesite="strict")
        return response

    async def _set_view(self, page: Page) -> Response:
        values = _acting_as(await self._credential(page),
                            page.form.get("agent_id", "").strip(),
                            page.form.get("user_id", "").strip())
        await self._sessions.set_view(page.session, values["agent_id"], values["user_id"])
        back = page.form.get("back", "")
        return self._done(page, back if back in ("", "/memories") else "", "view")

    # -- the overview --------------------------------------------------------------

    async def _overview(self, page: Page) -> Response:
        summary = await self._call(page, "library", "SummarizeMemories",
                                   library_pb.SummarizeMemoriesRequest())
        credential = await self._credential(page)
        context = {"agents": display.agent_rows([forms.view(c) for c in summary.counts],
                                                page.session.user_id),
                   "admin": credential.role == "admin", "usage": {}, "changes": [],
                   "pending": [], "more_pending": False}
        if page.session.agent_id:  # what the other pages show, for the agent acted as
            account, audit, queued = await asyncio.gather(
                self._call(page, "library", "GetAccountSettings",
                           library_pb.GetAccountSettingsRequest()),
                self._call(page, "library", "ListAudit",
                           library_pb.ListAuditRequest(page_size=OVERVIEW_CHANGES)),
                self._call(page, "learning", "ListSuggestions",
                           learning_pb.ListSuggestionsRequest(page_size=OVERVIEW_SUGGESTIONS)))
            context.update(usage=forms.view(account.usage),
                           changes=[forms.view(r) for r in audit.records],
                           pending=[forms.view(s) for s in queued.suggestions],
                           more_pending=bool(queued.next_page_token))
        return self._render(page.request, "overview.html", context, page=page)

    async def _changes(self, page: Page) -> Response:
        at = paging.Position.of(page.query)
        reply = await self._call(page, "library", "ListAudit", library_pb.ListAuditRequest(
            page_size=forms.PAGE_SIZE, page_token=at.token))
        return self._render(page.request, "changes.html", {
            "changes": [forms.view(r) for r in reply.records],
            "pages": paging.links(f"{page.base}/changes", {}, at, reply.next_page_token)},
            page=page)

    async def _export(self, page: Page) -> Response:
        """The whole export as one JSON Lines file: the first page is asked for before
        the response starts (its error is a page), the rest as the file streams (a
        failure there cuts the download short: the file then ends mid-way)."""
        first = await self._call(page, "library", "ExportMemories",
                                 library_pb.ExportMemoriesRequest(page_size=EXPORT_PAGE))

        async def pages() -> AsyncIterator[str]:
            reply = first
            yield reply.jsonl
            while reply.next_page_token:
                reply = await self._call(page, "library", "ExportMemories",
                                         library_pb.ExportMemoriesRequest(
                                             page_size=EXPORT_PAGE,
                                             page_token=reply.next_page_token))
                yield reply.jsonl

        day = datetime.now(UTC).strftime("%Y%m%d")
        name = f"memories-{page.account}-{page.session.agent_id}-{day}.jsonl"
        return StreamingResponse(pages(), media_type="application/jsonl", headers={
            **SECURITY_HEADERS, "content-disposition": f'attachment; filename="{name}"'})

    async def _import(self, page: Page) -> Response:
        data = page.files.get("file", b"")
        if not data.strip():
            raise InvalidArgument("file", "choose an export file (JSON Lines) to import")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidArgument("file", "an export file is UTF-8 text (JSON Lines)") from None
        reply = await self._call(page, "library", "ImportMemories",
                                 library_pb.ImportMemoriesRequest(jsonl=text))
        return self._done(page, "", "imported", created=reply.created,
                          unchanged=reply.unchanged, conflicts=len(reply.conflicts))

    # -- memories ------------------------------------------------------------------

    async def _list(self, page: Page) -> Response:
        query = page.query
        filters = {name: query.get(name, "") for name in
                   ("scope", "kind", "source", "tag", "text", "deleted", "superseded")}
        at = paging.Position.of(query)
        try:
            request = library_pb.ListMemoriesRequest(
                filter=forms.memory_filter(query), page_size=forms.PAGE_SIZE,
                page_token=at.token)
            reply = await self._call(page, "library", "ListMemories", request)
        except DomainError as exc:  # a filter the form or the library refuses: say so, keep it
            if exc.code != grpc.StatusCode.INVALID_ARGUMENT:
                raise
            return self._render(page.request, "list.html", {
                "memories": [], "pages": paging.Links(), "filters": filters,
                "error": errors.body(exc), **self._choices()}, page=page, status=400)
        return self._render(page.request, "list.html", {
            "memories": [forms.view(m) for m in reply.memories],
            "pages": paging.links(f"{page.base}/memories", filters, at, reply.next_page_token),
            "filters": filters, "error": None, **self._choices()}, page=page)

    @staticmethod
    def _choices() -> dict[str, list[str]]:
        return {"scopes": forms.SCOPES, "kinds": forms.KINDS, "sources": forms.SOURCES}

    async def _new_form(self, page: Page, *, values: dict[str, str] | None = None,
                        error: DomainError | None = None) -> Response:
        scopes, kinds = await self._writable(page)
        return self._render(page.request, "new.html", {
            "values": values or {}, "error": errors.body(error) if error else None,
            "writable_scopes": scopes, "writable_kinds": kinds}, page=page,
            status=errors.status(error) if error else 200)

    async def _add(self, page: Page) -> Response:
        try:
            reply = await self._call(page, "library", "AddMemory", library_pb.AddMemoryRequest(
                memory=forms.new_memory(page.form), request_id=str(uuid.uuid4())))
        except DomainError as exc:
            if exc.code == grpc.StatusCode.UNAUTHENTICATED:
                raise
            return await self._new_form(page, values=page.form, error=exc)
        return self._done(page, f"/{reply.memory.id}", "added")

    async def _memory(self, page: Page, *, error: DomainError | None = None,
                      values: dict[str, str] | None = None) -> Response:
        memory_id = page.request.path_params["memory_id"]
        reply = await self._call(page, "library", "ExplainMemory",
                                 library_pb.ExplainMemoryRequest(memory_id=memory_id))
        memory = forms.view(reply.memory)
        scope, kind = display.option(memory["scope"]), display.option(memory["kind"])
        _, kinds = await self._writable(page, scope)
        editable = kind in kinds
        looking_for = page.query.get("replacement", "").strip()
        candidates = []
        if editable and not memory.get("deleted_at") and not memory.get("superseded_by"):
            found = await self._call(page, "library", "ListMemories", library_pb.ListMemoriesRequest(
                filter=forms.memory_filter({"text": looking_for}),
                page_size=SUPERSEDE_CANDIDATES))
            candidates = [forms.view(m) for m in found.memories if m.id != memory_id]
        related = [memory["superseded_by"]] if memory.get("superseded_by") else []
        return self._render(page.request, "memory.html", {
            "memory": memory, "titles": await self._keys_of(page, related + list(
                reply.supersedes[:MAX_RELATED])),
            "versions": [forms.view(v) for v in sorted(reply.versions, key=lambda v: -v.version)],
            "audit": [forms.view(a) for a in sorted(reply.audit, key=lambda a: -a.id)],
            "supersedes": list(reply.supersedes), "editable": editable, "kinds": kinds,
            "candidates": candidates, "looking_for": looking_for,
            "error": errors.body(error) if error else None, "values": values},
            page=page, status=errors.status(error) if error else 200)

    async def _keys_of(self, page: Page, memory_ids: list[str]) -> dict[str, str]:
        """The keys of the memories a page links to, of those the caller sees."""
        found = {}
        for memory_id in memory_ids:
            try:
                reply = await self._call(page, "library", "GetMemory",
                                         library_pb.GetMemoryRequest(memory_id=memory_id))
            except DomainError as exc:
                if exc.code != grpc.StatusCode.NOT_FOUND:
                    raise
                continue
            found[memory_id] = reply.memory.key
        return found

    async def _memory_action(self, page: Page, rpc: str, request: MemoryRequest, done: str,
                             *, keep_values: bool = False) -> Response:
        memory_id = page.request.path_params["memory_id"]
        request.memory_id = memory_id
        try:
            await self._call(page, "library", rpc, request)
        except DomainError as exc:
            if exc.code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.NOT_FOUND) \
                    and exc.reason != "VERSION_NOT_FOUND":
                raise
            return await self._memory(page, error=exc,
                                      values=page.form if keep_values else None)
        return self._done(page, f"/{memory_id}", done)

    async def _edit(self, page: Page) -> Response:
        memory_id = page.request.path_params["memory_id"]
        current = await self._call(page, "library", "GetMemory",
                                   library_pb.GetMemoryRequest(memory_id=memory_id))
        try:
            edit, mask = forms.edit(page.form, current.memory)
        except InvalidArgument as exc:
            return await self._memory(page, error=exc, values=page.form)
        if not mask.paths:
            return self._done(page, f"/{memory_id}", "unchanged")
        return await self._memory_action(page, "EditMemory", library_pb.EditMemoryRequest(
            expected_version=forms.integer(page.form, "expected_version"), edit=edit,
            update_mask=mask), "edited", keep_values=True)

    async def _delete(self, page: Page) -> Response:
        return await self._memory_action(page, "DeleteMemory", library_pb.DeleteMemoryRequest(
            expected_version=forms.integer(page.form, "expected_version")), "deleted")

    async def _restore(self, page: Page) -> Response:
        return await self._memory_action(page, "RestoreMemory", library_pb.RestoreMemoryRequest(
            expected_version=forms.integer(page.form, "expected_version")), "restored")

    async def _rollback(self, page: Page) -> Response:
        return await self._memory_action(page, "RollbackMemory", library_pb.RollbackMemoryRequest(
            version=forms.integer(page.form, "version"),
            expected_version=forms.integer(page.form, "expected_version")), "rolled_back")

    async def _supersede(self, page: Page) -> Response:
        return await self._memory_action(page, "SupersedeMemory", library_pb.SupersedeMemoryRequest(
            superseded_by=page.form.get("superseded_by", "").strip(),
            expected_version=forms.integer(page.form, "expected_version")), "superseded")

    # -- learning ------------------------------------------------------------------

    async def _suggestions(self, page: Page) -> Response:
        status = page.query.get("status", "pending")
        at = paging.Position.of(page.query)
        reply = await self._call(page, "learning", "ListSuggestions",
                                 learning_pb.ListSuggestionsRequest(
                                     status=forms.enum_value(
                                         learning_memory_pb.SuggestionStatus, status,
                                         "status"), page_size=forms.PAGE_SIZE,
                                     page_token=at.token))
        return self._render(page.request, "suggestions.html", {
            "suggestions": [forms.view(s) for s in reply.suggestions], "status": status,
            "statuses": forms.SUGGESTION_STATUSES,
            "pages": paging.links(f"{page.base}/suggestions", {"status": status}, at,
                                  reply.next_page_token)}, page=page)

    async def _accept(self, page: Page) -> Response:
        content = page.form.get("content", "")
        suggested = page.form.get("suggested", "")
        await self._call(page, "learning", "AcceptSuggestion", learning_pb.AcceptSuggestionRequest(
            suggestion_id=page.request.path_params["suggestion_id"],
            content=content if content.strip() and content != suggested else ""))
        return self._done(page, "/suggestions", "accepted")

    async def _reject(self, page: Page) -> Response:
        await self._call(page, "learning", "RejectSuggestion", learning_pb.RejectSuggestionRequest(
            suggestion_id=page.request.path_params["suggestion_id"]))
        return self._done(page, "/suggestions", "rejected")

    async def _procedures(self, page: Page) -> Response:
        at = paging.Position.of(page.query)
        reply = await self._call(page, "learning", "ListProcedures",
                                 learning_pb.ListProceduresRequest(page_size=forms.PAGE_SIZE,
                                                                   page_token=at.token))
        return self._render(page.request, "procedures.html", {
            "procedures": [forms.view(p) for p in reply.procedures],
            "pages": paging.links(f"{page.base}/procedures", {}, at, reply.next_page_token)},
            page=page)

    async def _delete_procedure(self, page: Page) -> Response:
        await self._call(page, "learning", "DeleteProcedure", learning_pb.DeleteProcedureRequest(
            procedure_id=page.request.path_params["procedure_id"]))
        return self._done(page, "/procedures", "procedure_deleted")

    # -- settings ------------------------------------------------------------------

    async def _settings(self, page: Page) -> Response:
        account = await self._call(page, "library", "GetAccountSettings",
                                   library_pb.GetAccountSettingsRequest())
        agent = await self._call(page, "library", "GetAgentSettings",
                                 library_pb.GetAgentSettingsRequest())
        credential = await self._credential(page)
        return self._render(page.request, "settings.html", {
            "account_settings": forms.view(account.settings),
            "agent_settings": forms.view(agent.settings),
            "account_memory_enabled": agent.account_memory_enabled,
            "admin": credential.role == "admin", "extraction_modes": forms.EXTRACTION_MODES}, page=page)

    async def _save_account(self, page: Page) -> Response:
        await self._call(page, "library", "UpdateAccountSettings",
                         library_pb.UpdateAccountSettingsRequest(
                             settings=forms.account_settings(page.form),
                             update_mask=field_mask_pb2.FieldMask(paths=[
                                 "memory_enabled", "retention_days", "default_token_budget"])))
        return self._done(page, "/settings", "settings")

    async def _save_agent(self, page: Page) -> Response:
        await self._call(page, "library", "UpdateAgentSettings",
                         library_pb.UpdateAgentSettingsRequest(
                             settings=forms.agent_settings(page.form),
                             update_mask=field_mask_pb2.FieldMask(paths=[
                                 "memory_bound", "extraction_mode", "procedures_enabled",
                                 "relevant_memories_enabled",
                                 "relevant_memories_token_budget"])))
        return self._done(page, "/settings", "settings")

