"""The memory library page at ``/a/<account>/memory``: server-rendered HTML, plain forms.

Every action is one request: a GET renders a page, a POST does one thing and
redirects (303) back to a page that says what happened. A page acts with the
signed-in session's API key, as the agent (and user) chosen in its header, by
calling the gateway's gRPC servicers (``calls.invoke``): the library, learning
and settings calls, their authentication, validation and rules are exactly
those of gRPC. An error of a call is shown on the page with its reason.

Refusals: no session -> the sign-in page; a session of another account (the
path names an account the key is not of) -> 404, as for an account that does
not exist; a POST from another origin, or without the session's CSRF token ->
403 and nothing done. Every value is escaped by the templates (autoescape);
memory content is shown as text, never as markup.
"""

from __future__ import annotations

import json
import urllib.parse
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import jinja2
from agentmemory.agent_memory.v1 import learning_service_pb2 as learning_memory_pb
from agentmemory.gateway.v1 import gateway_service_pb2 as gateway_pb
from agentmemory.gateway.v1 import learning_service_pb2 as learning_pb
from agentmemory.gateway.v1 import memory_library_service_pb2 as library_pb
from google.protobuf import field_mask_pb2
from google.protobuf.message import Message
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from libs.errors import DomainError, InvalidArgument, ResourceExhausted, shown
from libs.identity import ID_PATTERN
from libs.server import REQUEST_ID_HEADER
from services.gateway import callers
from services.gateway.http import calls, errors
from services.gateway.http.web import forms
from services.gateway.http.web.sessions import Session, Sessions
from services.gateway.keys import ApiKeys, Credential

HERE = Path(__file__).parent
COOKIE, SIGN_IN_COOKIE = "am_session", "am_signin"
SIGN_IN_SECONDS = 3600
MAX_FORM_FIELDS = 100
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
}


_ENUM_PREFIXES = ("MEMORY_SCOPE_", "MEMORY_KIND_", "SOURCE_KIND_", "AUDIT_ACTION_",
                  "EXTRACTION_MODE_", "SUGGESTION_KIND_", "SUGGESTION_STATUS_", "KEY_ROLE_",
                  "SKILL_STATE_", "TOOL_CALL_STATUS_", "CATEGORY_", "VISIBILITY_")


def option(value: Any) -> str:
    """An enum value's short name, as the forms send it: ``MEMORY_KIND_PROJECT_FACT`` ->
    ``project_fact``."""
    text = str(value)
    prefix = next((p for p in _ENUM_PREFIXES if text.startswith(p)), None)
    return text.removeprefix(prefix).lower() if prefix else text


def short(value: Any) -> str:
    """For display: ``MEMORY_KIND_PROJECT_FACT`` -> ``project fact``."""
    return option(value).replace("_", " ")


def when(value: str | None) -> str:
    """An RFC 3339 timestamp as ``2026-11-30 10:33:05 UTC``."""
    if not value:
        return ""
    return value.replace("T", " ").split(".")[0].removesuffix("Z") + " UTC"


def _shown(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def changes(record: dict[str, Any]) -> list[tuple[str, str | None, str | None]]:
    """The fields an audit record changed: (name, before, after), values as text."""
    before, after = record.get("before") or {}, record.get("after") or {}
    noise = {"version", "updated_at", "author", "content_hash"}
    return [(name, _shown(before.get(name)), _shown(after.get(name)))
            for name in sorted({*before, *after})
            if name not in noise and before.get(name) != after.get(name)]


def templates() -> Jinja2Templates:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
        undefined=jinja2.StrictUndefined)
    environment.filters.update(short=short, option=option, when=when, tags_text=forms.tags_text)
    environment.globals.update(changes=changes, static=STATIC)
    return Jinja2Templates(env=environment)


@dataclass
class Page:
    """One request to a page of a signed-in session."""

    request: Request
    account: str
    session: Session
    form: dict[str, str] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return f"/a/{self.account}/memory"


def _acting_as(credential: Credential, agent_id: str, user_id: str) -> dict[str, str]:
    """The agent and user the page acts as: what the person chose, as far as the
    credential allows (a user token or a bound key fills in its own)."""
    return {"agent_id": callers.agent_of(credential, agent_id, "agent"),
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


async def _form(request: Request, max_bytes: int) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body (the only kind these forms send)."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > max_bytes:
            raise ResourceExhausted(f"form larger than {max_bytes} bytes",
                                    reason="REQUEST_TOO_LARGE")
    try:
        pairs = urllib.parse.parse_qsl(data.decode(), keep_blank_values=True,
                                       max_num_fields=MAX_FORM_FIELDS, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        raise InvalidArgument("form", "not a form this page sends") from None
    return dict(pairs)


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
        return [
            Mount(STATIC, StaticFiles(directory=HERE / "static"), name="library-static"),
            Route(f"{base}/sign-in", self._sign_in_form, methods=["GET"]),
            Route(f"{base}/sign-in", self._sign_in, methods=["POST"]),
            Route(f"{base}/sign-out", post(self._sign_out), methods=["POST"]),
            Route(f"{base}/view", post(self._set_view), methods=["POST"]),
            Route(base, get(self._list), methods=["GET"]),
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
            context = {"base": page.base, "account": page.account,
                       "agent_id": page.session.agent_id, "user_id": page.session.user_id,
                       "csrf": self._sessions.csrf_token(page.session),
                       "notice": NOTICES.get(request.query_params.get("done", "")), **context}
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

    def _wrap(self, handler: Callable[[Page], Awaitable[Response]], *, post: bool) -> Callable:
        async def endpoint(request: Request) -> Response:
            found = await self._session(request)
            if isinstance(found, Response):
                return found
            account, session = found
            if session is None:
                return _redirect(f"/a/{account}/memory/sign-in")
            page = Page(request, account, session)
            try:
                if post:
                    if not _same_origin(request):
                        return self._refusal(request, 403, "Refused",
                                             "This form was sent from another site.")
                    page.form = await _form(request, self._max_body_bytes)
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

    def _page(self, handler: Callable[[Page], Awaitable[Response]]) -> Callable:
        return self._wrap(handler, post=False)

    def _action(self, handler: Callable[[Page], Awaitable[Response]]) -> Callable:
        return self._wrap(handler, post=True)

    async def _call(self, page: Page, service: str, rpc: str, request: Message) -> Any:
        """One gateway call with the session's key, as the agent and user it acts as."""
        request.caller.CopyFrom(gateway_pb.Caller(agent_id=page.session.agent_id,
                                                  user_id=page.session.user_id))
        headers = {"authorization": page.session.authorization,
                   REQUEST_ID_HEADER: page.request.headers.get(REQUEST_ID_HEADER)
                   or uuid.uuid4().hex}
        return await calls.invoke(self._servicers.method(service, rpc), request, headers)

    @staticmethod
    def _done(page: Page, path: str, code: str) -> Response:
        return _redirect(f"{page.base}{path}?done={code}")

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
            form = await _form(request, self._max_body_bytes)
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
        credential = await self._keys.authenticate(page.session.authorization)
        values = _acting_as(credential, page.form.get("agent_id", "").strip(),
                            page.form.get("user_id", "").strip())
        await self._sessions.set_view(page.session, values["agent_id"], values["user_id"])
        return self._done(page, "", "view")

    # -- memories ------------------------------------------------------------------

    async def _list(self, page: Page) -> Response:
        query = dict(page.request.query_params)
        filters = {name: query.get(name, "") for name in
                   ("scope", "kind", "source", "tag", "text", "deleted", "superseded")}
        try:
            request = library_pb.ListMemoriesRequest(
                filter=forms.memory_filter(query), page_size=forms.PAGE_SIZE,
                page_token=query.get("page", ""))
            reply = await self._call(page, "library", "ListMemories", request)
        except DomainError as exc:  # a filter the form or the library refuses: say so, keep it
            if exc.code != grpc.StatusCode.INVALID_ARGUMENT:
                raise
            return self._render(page.request, "list.html", {
                "memories": [], "next_url": "", "filters": filters, "error": errors.body(exc),
                **self._choices()}, page=page, status=400)
        next_url = ""
        if reply.next_page_token:
            kept = {k: v for k, v in filters.items() if v}
            next_url = "?" + urllib.parse.urlencode({**kept, "page": reply.next_page_token})
        return self._render(page.request, "list.html", {
            "memories": [forms.view(m) for m in reply.memories], "next_url": next_url,
            "filters": filters, "first_page": bool(query.get("page")), "error": None,
            **self._choices()}, page=page)

    @staticmethod
    def _choices() -> dict[str, list[str]]:
        return {"scopes": forms.SCOPES, "kinds": forms.KINDS, "sources": forms.SOURCES,
                "writable_scopes": forms.WRITABLE_SCOPES, "writable_kinds": forms.WRITABLE_KINDS}

    async def _new_form(self, page: Page) -> Response:
        return self._render(page.request, "new.html", {"values": {}, "error": None,
                                                       **self._choices()}, page=page)

    async def _add(self, page: Page) -> Response:
        try:
            reply = await self._call(page, "library", "AddMemory", library_pb.AddMemoryRequest(
                memory=forms.new_memory(page.form), request_id=str(uuid.uuid4())))
        except DomainError as exc:
            if exc.code == grpc.StatusCode.UNAUTHENTICATED:
                raise
            return self._render(page.request, "new.html", {
                "values": page.form, "error": errors.body(exc), **self._choices()},
                page=page, status=errors.status(exc))
        return self._done(page, f"/{reply.memory.id}", "added")

    async def _memory(self, page: Page, *, error: DomainError | None = None,
                      values: dict[str, str] | None = None) -> Response:
        memory_id = page.request.path_params["memory_id"]
        reply = await self._call(page, "library", "ExplainMemory",
                                 library_pb.ExplainMemoryRequest(memory_id=memory_id))
        return self._render(page.request, "memory.html", {
            "memory": forms.view(reply.memory),
            "versions": [forms.view(v) for v in sorted(reply.versions, key=lambda v: -v.version)],
            "audit": [forms.view(a) for a in sorted(reply.audit, key=lambda a: -a.id)],
            "supersedes": list(reply.supersedes),
            "error": errors.body(error) if error else None, "values": values,
            **self._choices()}, page=page, status=errors.status(error) if error else 200)

    async def _memory_action(self, page: Page, rpc: str, request: Message, done: str,
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
        status = page.request.query_params.get("status", "pending")
        reply = await self._call(page, "learning", "ListSuggestions",
                                 learning_pb.ListSuggestionsRequest(
                                     status=forms.enum_value(
                                         learning_memory_pb.SuggestionStatus.DESCRIPTOR, status,
                                         "status"), page_size=forms.PAGE_SIZE * 2))
        return self._render(page.request, "suggestions.html", {
            "suggestions": [forms.view(s) for s in reply.suggestions], "status": status,
            "statuses": forms.SUGGESTION_STATUSES}, page=page)

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
        reply = await self._call(page, "learning", "ListProcedures",
                                 learning_pb.ListProceduresRequest(page_size=forms.PAGE_SIZE * 2))
        return self._render(page.request, "procedures.html", {
            "procedures": [forms.view(p) for p in reply.procedures]}, page=page)

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
        credential = await self._keys.authenticate(page.session.authorization)
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

