"""Every change to memory, and the rules that decide it.

Each change runs in one short transaction and is exactly one mutation: the
memory's row moves to a new version, that version's snapshot is kept, one
audit record is written and the projection is queued (``Transaction.record``),
all or nothing. Invariants:

- a key names at most one live memory per scope owner (a tombstoned or
  superseded memory frees it);
- an edit names the version it edits: of two edits of one version exactly one
  wins, the other gets VERSION_CONFLICT (the row is locked, then compared);
- capacity is counted under an advisory lock per scope owner, taken before any
  row lock, so concurrent writers neither overfill a bucket nor deadlock;
- a disabled account accepts no new content (MEMORY_DISABLED); deleting stays
  possible.

Seed 000's rules hold for Store and Forget: same key and content is a no-op,
new content replaces (a new version, no capacity check), private without a
user becomes shared, sensitive content becomes private.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from uuid import UUID

from libs.errors import (
    AlreadyExists,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
)
from libs.identity import require_id
from libs.quotas import quota_exceeded
from services.agent_memory.memories import exchange, permissions, rules, validation
from services.agent_memory.memories.clock import Clock
from services.agent_memory.memories.model import (
    HYGIENE,
    AccountSettings,
    Action,
    Actor,
    AgentSettings,
    Author,
    Edit,
    Entry,
    ImportResult,
    NewMemory,
    Role,
    Source,
    StoreOutcome,
    StoreResult,
    Version,
    content_hash,
)
from services.agent_memory.memories.rules import Kind, Scope, Visibility
from services.agent_memory.memories.store.entries import Repository, Transaction


def request_hash(operation: str, **fields) -> str:
    body = json.dumps([operation, fields], sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def lock_name(account_id: str, environment: str, scope: Scope, agent_id: str,
              owner_user_id: str) -> str:
    """The capacity lock of a scope owner: one agent (agent and private scopes),
    one person (user scope), the account, or the platform."""
    if scope in (Scope.AGENT, Scope.PRIVATE):
        owner = f"agent:{agent_id}"
    elif scope == Scope.USER:
        owner = f"user:{owner_user_id}"
    else:
        owner = str(scope)
    return f"{account_id}/{environment}/{owner}"


def _lock_of(entry: Entry) -> str:
    return lock_name(entry.account_id, entry.environment, entry.scope, entry.agent_id,
                     entry.owner_user_id or "")


def _enabled(settings: AccountSettings) -> None:
    if not settings.memory_enabled:
        raise FailedPrecondition("memory is disabled for this account",
                                 reason="MEMORY_DISABLED")


def _not_found(memory_id: UUID) -> NotFound:
    return NotFound(f"memory {memory_id} not found", reason="MEMORY_NOT_FOUND")


def _expect(entry: Entry, expected: int) -> None:
    if expected and entry.version != expected:
        raise FailedPrecondition(
            f"memory {entry.id} is at version {entry.version}, not {expected}",
            reason="VERSION_CONFLICT", metadata={"current_version": str(entry.version)})


def _modifiable(entry: Entry) -> None:
    if entry.deleted_at is not None:
        raise FailedPrecondition(f"memory {entry.id} is deleted", reason="MEMORY_DELETED")
    if entry.superseded_by is not None:
        raise FailedPrecondition(f"memory {entry.id} is superseded by {entry.superseded_by}",
                                 reason="MEMORY_SUPERSEDED")


def _capacity_error(kind: Kind, per: str, limit: int) -> ResourceExhausted:
    return ResourceExhausted(
        f"{kind} entries are limited to {limit} per {per}", reason="CAPACITY_EXCEEDED",
        metadata={"category": str(kind), "per": per, "limit": str(limit)})


def _private_only(sensitive: dict[str, list[str]]) -> InvalidArgument:
    return validation.sensitive_error(
        sensitive, "such memories are kept only in the user or private scope",
        "SENSITIVE_CONTENT_NOT_PRIVATE")


class Writes:
    def __init__(self, repository: Repository, clock: Clock) -> None:
        self._repository = repository
        self._clock = clock

    # -- the bookkeeping of one change -----------------------------------------------

    @staticmethod
    async def _create(tx: Transaction, entry: Entry, action: Action, author: Author,
                      now: datetime) -> Entry:
        return await tx.write(entry, new=True, action=action, author=author, before=None,
                              after=exchange.snapshot(entry), now=now)

    @staticmethod
    async def _change(tx: Transaction, before: Entry, after: Entry, action: Action,
                      author: Author, now: datetime) -> Entry:
        after = replace(after, version=before.version + 1, author=author, updated_at=now)
        return await tx.write(after, new=False, action=action, author=author,
                              before=exchange.snapshot(before), after=exchange.snapshot(after),
                              now=now)

    @staticmethod
    async def _check_capacity(tx: Transaction, entry: Entry, now: datetime) -> None:
        buckets = rules.buckets(entry.kind, entry.scope, entry.agent_id, entry.owner_user_id or "")
        counts = await tx.count_live(entry.account_id, entry.environment, buckets, entry.kind, now)
        for bucket, count in zip(buckets, counts, strict=True):
            if count >= bucket.limit:
                raise _capacity_error(entry.kind, bucket.per, bucket.limit)

    async def _locked(self, tx: Transaction, actor: Actor, memory_id: UUID, *,
                      enabled: bool) -> tuple[Entry, AccountSettings]:
        """The memory, row-locked after its scope owner's capacity lock."""
        seen = await tx.get(actor, memory_id, lock=False)
        if seen is None:
            raise _not_found(memory_id)
        settings = await tx.lock(_lock_of(seen), actor.account_id)
        if enabled:
            _enabled(settings)
        entry = await tx.get(actor, memory_id)
        if entry is None:
            raise _not_found(memory_id)
        return entry, settings

    # -- seed 000: memory_store and memory_forget ------------------------------------------

    async def store(self, actor: Actor, *, key: str, content: str, kind: Kind,
                    visibility: Visibility | None, importance: float | None, source: Source,
                    request_id: str | None = None) -> StoreResult:
        validation.text(key, "key", rules.MAX_KEY_CHARS)
        validation.text(content, "content", rules.RULES[kind].max_content_chars)
        importance = (rules.DEFAULT_IMPORTANCE if importance is None
                      else validation.unit(importance, "importance"))
        sensitive = validation.screen({"key": key, "content": content})
        user = actor.user_id
        if visibility is None:
            visibility = Visibility.PRIVATE if user else Visibility.SHARED
        if sensitive:
            if not user:
                raise validation.sensitive_error(
                    sensitive, "such entries are kept private, which needs an authenticated user",
                    "SENSITIVE_CONTENT_WITHOUT_USER")
            visibility = Visibility.PRIVATE
        if visibility == Visibility.PRIVATE and not user:
            visibility = Visibility.SHARED  # the seed's rule: no user, no private entry
        scope = Scope.PRIVATE if visibility == Visibility.PRIVATE else Scope.AGENT
        owner = (user or "") if scope == Scope.PRIVATE else ""  # (private has a user)
        fingerprint = request_hash("store", key=key, content=content, kind=kind,
                                   scope=scope, importance=importance, source=source)
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            settings = await tx.lock(lock_name(actor.account_id, actor.environment, scope,
                                               actor.agent_id, owner), actor.account_id)
            _enabled(settings)
            if request_id:
                replayed = await self._replay(tx, actor, request_id, fingerprint, now)
                if replayed is not None:
                    return StoreResult(*replayed)
            current = await tx.live_by_key(actor.account_id, actor.environment, scope,
                                           actor.agent_id, owner, key)
            if current is not None and current.expired(now):
                await self._change(tx, current, replace(current, deleted_at=now), Action.EXPIRE,
                                   HYGIENE, now)
                current = None
            author = Author.of(actor)
            if current is not None and current.content == content:
                result = StoreResult(current, StoreOutcome.UNCHANGED)
            elif current is not None:
                replaced = replace(
                    current, content=content, content_hash=content_hash(content), kind=kind,
                    importance=importance, confidence=rules.DEFAULT_CONFIDENCE[source.kind],
                    source=source, expires_at=rules.expiry(kind, current.created_at))
                result = StoreResult(await self._change(tx, current, replaced, Action.UPDATE,
                                                        author, now), StoreOutcome.REPLACED)
            else:
                entry = Entry(
                    id=uuid.uuid4(), account_id=actor.account_id, environment=actor.environment,
                    scope=scope, agent_id=actor.agent_id, owner_user_id=owner or None, key=key,
                    content=content, kind=kind, importance=importance,
                    confidence=rules.DEFAULT_CONFIDENCE[source.kind], tags={},
                    content_hash=content_hash(content), source=source,
                    expires_at=rules.expiry(kind, now), created_at=now, updated_at=now,
                    author=author)
                await self._check_capacity(tx, entry, now)
                await tx.check_memory_quota(actor.account_id, settings.quotas, 1)
                result = StoreResult(await self._create(tx, entry, Action.CREATE, author, now),
                                     StoreOutcome.CREATED)
            if request_id:
                await tx.save_request(actor, request_id, fingerprint, result.entry.id,
                                      result.outcome, now)
            return result

    @staticmethod
    async def _replay(tx: Transaction, actor: Actor, request_id: str, fingerprint: str,
                      now: datetime) -> tuple[Entry, StoreOutcome] | None:
        """The first answer to a retried request id of this caller, if its memory lives."""
        prior = await tx.prior_request(actor, request_id)
        if prior is None:
            return None
        if prior.request_hash is not None and prior.request_hash != fingerprint:
            raise AlreadyExists("this request_id was used for a different request",
                                reason="REQUEST_ID_REUSED", metadata={"request_id": request_id})
        entry = await tx.get(actor, prior.entry_id)
        if entry is None or not entry.live(now):  # stored, then forgotten: a new store
            return None
        return entry, StoreOutcome(prior.outcome)

    async def forget(self, actor: Actor, key: str) -> bool:
        validation.text(key, "key", rules.MAX_KEY_CHARS)
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            entry = await tx.forgettable(actor, key)
            if entry is None or entry.expired(now):
                return False
            await self._change(tx, entry, replace(entry, deleted_at=now), Action.DELETE,
                               Author.of(actor), now)
            return True

    # -- the library -----------------------------------------------------------------

    async def add(self, actor: Actor, new: NewMemory, request_id: str | None) -> Entry:
        scope, kind = new.scope, new.kind
        if scope not in rules.scopes_of(kind):
            allowed = ", ".join(sorted(rules.scopes_of(kind)))
            raise InvalidArgument("memory.scope", f"{kind} memories live in: {allowed}")
        if scope in rules.PERSONAL_SCOPES and not actor.user_id:
            raise InvalidArgument("memory.scope",
                                  f"{scope} memories need the caller's user (caller.user_id)")
        permissions.check_write(actor, scope, kind)
        if new.source.kind == rules.SourceKind.FLUSH or (
                new.source.kind == rules.SourceKind.ADMIN
                and actor.role not in (Role.ADMIN, Role.OPERATOR)):
            raise InvalidArgument("memory.source.kind", f"{new.source.kind} is not a source "
                                  "this caller can state")
        if new.key is not None:
            validation.text(new.key, "memory.key", rules.MAX_KEY_CHARS)
        validation.text(new.content, "memory.content", rules.RULES[kind].max_content_chars)
        validation.unit(new.importance, "memory.importance")
        validation.unit(new.confidence, "memory.confidence")
        validation.tags(new.tags, "memory.tags")
        sensitive = validation.screen({"memory.key": new.key or "", "memory.content": new.content},
                                      kind)
        if sensitive and scope not in rules.PERSONAL_SCOPES:
            raise _private_only(sensitive)
        agent = actor.agent_id if scope in (Scope.AGENT, Scope.PRIVATE) else ""
        owner = actor.user_id if scope in rules.PERSONAL_SCOPES else ""
        if scope == Scope.PLATFORM:
            account, environment = "", ""
        else:
            account, environment = actor.account_id, actor.environment
        fingerprint = request_hash("add", **{k: getattr(new, k) for k in (
            "scope", "kind", "key", "content", "importance", "confidence", "tags", "source")})
        now = self._clock.now()
        memory_id = uuid.uuid4()
        author = Author.of(actor)
        entry = Entry(
            id=memory_id, account_id=account, environment=environment, scope=scope,
            agent_id=agent, owner_user_id=owner or None,
            key=new.key or f"{kind}-{memory_id.hex[:12]}", content=new.content, kind=kind,
            importance=new.importance, confidence=new.confidence, tags=new.tags,
            content_hash=content_hash(new.content), source=new.source,
            expires_at=rules.expiry(kind, now), created_at=now, updated_at=now, author=author)
        async with self._repository.transaction() as tx:
            settings = await tx.lock(_lock_of(entry), actor.account_id)
            _enabled(settings)
            if request_id:
                replayed = await self._replay(tx, actor, request_id, fingerprint, now)
                if replayed is not None:
                    return replayed[0]
            await self._check_capacity(tx, entry, now)
            if scope != Scope.PLATFORM:
                await tx.check_memory_quota(account, settings.quotas, 1)
            created = await self._create(tx, entry, Action.CREATE, author, now)
            if request_id:
                await tx.save_request(actor, request_id, fingerprint, created.id,
                                      StoreOutcome.CREATED, now)
            return created

    async def edit(self, actor: Actor, memory_id: UUID, expected: int, edit: Edit) -> Entry:
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            current, _ = await self._locked(tx, actor, memory_id, enabled=True)
            permissions.check_write(actor, current.scope, current.kind)
            _expect(current, expected)
            _modifiable(current)
            kind = edit.kind or current.kind
            if kind != current.kind:
                permissions.check_write(actor, current.scope, kind)
                if current.scope not in rules.scopes_of(kind):
                    raise InvalidArgument("edit.kind", f"{kind} memories cannot live in the "
                                                       f"{current.scope} scope")
            content = current.content if edit.content is None else edit.content
            key = current.key if edit.key is None else edit.key
            validation.text(key, "edit.key", rules.MAX_KEY_CHARS)
            validation.text(content, "edit.content", rules.RULES[kind].max_content_chars)
            for name in ("importance", "confidence"):
                if getattr(edit, name) is not None:
                    validation.unit(getattr(edit, name), f"edit.{name}")
            if edit.tags is not None:
                validation.tags(edit.tags, "edit.tags")
            sensitive = validation.screen({"edit.key": key, "edit.content": content}, kind)
            if sensitive and current.scope not in rules.PERSONAL_SCOPES:
                raise _private_only(sensitive)
            changed = replace(
                current, key=key, content=content, content_hash=content_hash(content), kind=kind,
                importance=current.importance if edit.importance is None else edit.importance,
                confidence=current.confidence if edit.confidence is None else edit.confidence,
                tags=current.tags if edit.tags is None else edit.tags,
                expires_at=rules.expiry(kind, current.created_at))
            if changed.expired(now):
                raise FailedPrecondition("as that kind, the memory would already have expired",
                                         reason="MEMORY_EXPIRED")
            if kind != current.kind:
                await self._check_capacity(tx, changed, now)
            return await self._change(tx, current, changed, Action.UPDATE, Author.of(actor), now)

    async def delete(self, actor: Actor, memory_id: UUID, expected: int) -> Entry:
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            current = await tx.get(actor, memory_id)
            if current is None:
                raise _not_found(memory_id)
            permissions.check_write(actor, current.scope, current.kind)
            _expect(current, expected)
            if current.deleted_at is not None:
                raise FailedPrecondition(f"memory {memory_id} is already deleted",
                                         reason="MEMORY_DELETED")
            return await self._change(tx, current, replace(current, deleted_at=now),
                                      Action.DELETE, Author.of(actor), now)

    async def _revive(self, tx: Transaction, actor: Actor, current: Entry, revived: Entry,
                      action: Action, now: datetime) -> Entry:
        """Make ``revived`` (a deleted or superseded memory, or an old version) live."""
        revived = replace(revived, deleted_at=None, superseded_by=None, superseded_at=None,
                          expires_at=rules.expiry(revived.kind, current.created_at))
        if revived.expired(now):
            raise FailedPrecondition(f"memory {current.id} has expired", reason="MEMORY_EXPIRED")
        if not current.live(now) or revived.kind != current.kind:
            await self._check_capacity(tx, revived, now)
        holder = await tx.live_by_key(revived.account_id, revived.environment, revived.scope,
                                      revived.agent_id, revived.owner_user_id or "", revived.key)
        if holder is not None and holder.id != current.id:
            raise AlreadyExists(f"memory {holder.id} now has the key {revived.key!r}",
                                reason="KEY_IN_USE", metadata={"memory_id": str(holder.id)})
        return await self._change(tx, current, revived, action, Author.of(actor), now)

    async def restore(self, actor: Actor, memory_id: UUID, expected: int) -> Entry:
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            current, settings = await self._locked(tx, actor, memory_id, enabled=True)
            permissions.check_write(actor, current.scope, current.kind)
            _expect(current, expected)
            if current.deleted_at is None:
                raise FailedPrecondition(f"memory {memory_id} is not deleted",
                                         reason="MEMORY_NOT_DELETED")
            _within_retention(current.deleted_at, settings, now)
            return await self._revive(tx, actor, current, current, Action.RESTORE, now)

    async def rollback(self, actor: Actor, memory_id: UUID, version: int,
                       expected: int) -> Entry:
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            current, settings = await self._locked(tx, actor, memory_id, enabled=True)
            permissions.check_write(actor, current.scope, current.kind)
            _expect(current, expected)
            target = await tx.version(current, version)
            if target is None:
                raise NotFound(f"memory {memory_id} has no version {version}",
                               reason="VERSION_NOT_FOUND")
            if target.recorded_until is not None:
                _within_retention(target.recorded_until, settings, now)
            old = target.entry
            permissions.check_write(actor, current.scope, old.kind)
            restored = replace(current, key=old.key, content=old.content,
                               content_hash=old.content_hash, kind=old.kind,
                               importance=old.importance, confidence=old.confidence,
                               tags=old.tags, source=old.source)
            return await self._revive(tx, actor, current, restored, Action.ROLLBACK, now)

    async def supersede(self, actor: Actor, memory_id: UUID, replacement_id: UUID,
                        expected: int) -> tuple[Entry, Entry]:
        if memory_id == replacement_id:
            raise InvalidArgument("superseded_by", "a memory cannot supersede itself")
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            current, _ = await self._locked(tx, actor, memory_id, enabled=True)
            permissions.check_write(actor, current.scope, current.kind)
            _expect(current, expected)
            _modifiable(current)
            # Not locked: two supersedes in opposite directions must not deadlock.
            replacement = await tx.get(actor, replacement_id, lock=False)
            if replacement is None:
                raise NotFound(f"memory {replacement_id} not found", reason="MEMORY_NOT_FOUND")
            if not replacement.live(now):
                raise FailedPrecondition(f"memory {replacement_id} is not live",
                                         reason="REPLACEMENT_NOT_LIVE")
            old = await self._change(
                tx, current, replace(current, superseded_by=replacement_id, superseded_at=now),
                Action.SUPERSEDE, Author.of(actor), now)
            return old, replacement

    async def import_memories(self, actor: Actor, text: str) -> ImportResult:
        """Write the memories of an export that are not there yet, in one transaction.
        Already there identically: unchanged; there otherwise, or its key taken by
        another live memory: a conflict, left alone."""
        permissions.require_admin(actor, "importing memories")
        memories = exchange.parse(text, actor.account_id, actor.environment)
        if len(memories) > 1000:
            raise InvalidArgument("jsonl", "at most 1,000 memories a call")
        for field, entry, versions in memories:
            _importable(actor, entry, versions, field)
        now = self._clock.now()
        unchanged, conflicts, accepted = 0, [], []
        async with self._repository.transaction() as tx:
            settings = await tx.settings(actor.account_id)
            _enabled(settings)
            for name in sorted({_lock_of(e) for _, e, _ in memories}):
                await tx.lock(name, actor.account_id)
            ids = [e.id for _, e, _ in memories]
            existing = await tx.get_many(actor, ids)
            history = await tx.versions_of(actor.account_id, actor.environment, list(existing))
            taken = await tx.live_keys(actor.account_id, actor.environment,
                                       [_key_of(e) for _, e, _ in memories])
            counts: dict[tuple, int] = {}
            for _, entry, versions in memories:
                if entry.id in existing:
                    same = exchange.comparable(existing[entry.id], history[entry.id]) == \
                        exchange.comparable(entry, versions)
                    unchanged += same
                    if not same:
                        conflicts.append(entry.id)
                    continue
                if entry.live(now):
                    if _key_of(entry) in taken:
                        conflicts.append(entry.id)
                        continue
                    await self._count_in(tx, counts, entry, now)
                    taken.add(_key_of(entry))
                existing[entry.id], history[entry.id] = entry, versions  # repeated in the file
                accepted.append((entry, versions, exchange.snapshot(entry)))
            await tx.check_memory_quota(actor.account_id, settings.quotas, len(accepted))
            await tx.insert_imported(accepted, Author.of(actor), now)
        return ImportResult(len(accepted), unchanged, conflicts)

    @staticmethod
    async def _count_in(tx: Transaction, counts: dict[tuple, int], entry: Entry,
                        now: datetime) -> None:
        """Capacity for a batch: each bucket counted once, then kept up to date."""
        for bucket in rules.buckets(entry.kind, entry.scope, entry.agent_id,
                                    entry.owner_user_id or ""):
            key = (bucket, entry.kind)
            if key not in counts:
                counts[key], = await tx.count_live(entry.account_id, entry.environment, [bucket],
                                                   entry.kind, now)
            if counts[key] >= bucket.limit:
                raise _capacity_error(entry.kind, bucket.per, bucket.limit)
            counts[key] += 1

    # -- hygiene ---------------------------------------------------------------------

    async def expire(self, account_id: str, environment: str, memory_id: UUID) -> bool:
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            entry = await tx.by_id(account_id, environment, memory_id)
            if entry is None or entry.deleted_at is not None or not entry.expired(now):
                return False
            await self._change(tx, entry, replace(entry, deleted_at=now), Action.EXPIRE,
                               HYGIENE, now)
            return True

    async def purge(self, account_id: str, environment: str, memory_id: UUID) -> bool:
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            entry = await tx.by_id(account_id, environment, memory_id)
            if entry is None or entry.deleted_at is None:
                return False
            settings = await tx.settings(account_id)
            if entry.deleted_at > now - timedelta(days=settings.retention_days):
                return False
            await tx.purge(entry)
            kept = {k: v for k, v in exchange.snapshot(entry).items()
                    if k not in ("key", "content", "tags", "content_hash")}
            await tx.audit_only(account_id, environment, entry.scope, entry.agent_id,
                                entry.owner_user_id or "", entry.id, entry.version, Action.PURGE,
                                HYGIENE, kept, None, now)
            await tx.enqueue(entry, now)
            return True

    # -- settings --------------------------------------------------------------------

    async def update_account_settings(self, actor: Actor, values: AccountSettings,
                                      fields: Sequence[str]) -> AccountSettings:
        permissions.require_admin(actor, "changing account settings")
        low, high = rules.SETTINGS_RETENTION_RANGE
        if "retention_days" in fields and not low <= values.retention_days <= high:
            raise InvalidArgument("settings.retention_days", f"must be {low}-{high}")
        low, high = rules.SETTINGS_TOKEN_BUDGET_RANGE
        if "default_token_budget" in fields and not low <= values.default_token_budget <= high:
            raise InvalidArgument("settings.default_token_budget", f"must be {low}-{high}")
        quotas = [f.removeprefix("quotas.") for f in fields if f.startswith("quotas.")]
        if quotas and actor.role != Role.OPERATOR:
            raise PermissionDenied("an account's quotas are set by the platform operator",
                                   reason="OPERATOR_REQUIRED",
                                   metadata={"field": f"settings.quotas.{quotas[0]}"})
        for name in quotas:
            if not 0 < getattr(values.quotas, name) <= rules.QUOTA_MAXIMUM:
                raise InvalidArgument(f"settings.quotas.{name}", "must be positive (0: the "
                                      "platform default)")
        if "environments" in fields:
            _check_environments(values.environments)
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            before = await tx.locked_account_settings(actor.account_id, now)
            plain = {f: getattr(values, f) for f in fields if not f.startswith("quotas.")}
            after = replace(before, **plain, updated_at=now, quotas=replace(
                before.quotas, **{name: getattr(values.quotas, name) for name in quotas}))
            if len(after.environments) > after.quotas.environments:
                raise quota_exceeded("environments", after.quotas.environments,
                                     f"{len(after.environments)} environments")
            await tx.save_account_settings(actor.account_id, after)
            await tx.audit_only(actor.account_id, actor.environment, Scope.ACCOUNT, "", "", None,
                                None, Action.ACCOUNT_SETTINGS, Author.of(actor),
                                _settings_json(before), _settings_json(after), now)
            return after

    async def update_agent_settings(self, actor: Actor, values: AgentSettings,
                                    fields: Sequence[str]) -> AgentSettings:
        permissions.require_admin(actor, "changing agent settings")
        low, high = rules.SETTINGS_RELEVANT_BUDGET_RANGE
        budget = values.relevant_memories_token_budget
        if "relevant_memories_token_budget" in fields and not low <= budget <= high:
            raise InvalidArgument("settings.relevant_memories_token_budget",
                                  f"must be {low}-{high} (0: {rules.SETTINGS_RELEVANT_BUDGET})")
        now = self._clock.now()
        async with self._repository.transaction() as tx:
            before = await tx.agent_settings(actor)
            after = replace(before, **{f: getattr(values, f) for f in fields}, updated_at=now)
            await tx.save_agent_settings(actor, after)
            await tx.audit_only(actor.account_id, actor.environment, Scope.AGENT, actor.agent_id,
                                "", None, None, Action.AGENT_SETTINGS, Author.of(actor),
                                _settings_json(before), _settings_json(after), now)
            return after


def _key_of(entry: Entry) -> tuple[str, str, str, str]:
    return entry.scope, entry.agent_id, entry.owner_user_id or "", entry.key


def _within_retention(since: datetime, settings: AccountSettings, now: datetime) -> None:
    if since <= now - timedelta(days=settings.retention_days):
        raise FailedPrecondition(
            f"outside the account's {settings.retention_days}-day retention window",
            reason="VERSION_OUTSIDE_RETENTION")


def _importable(actor: Actor, entry: Entry, versions: Sequence[Version], field: str) -> None:
    """A caller imports exactly what it could have exported and written itself."""
    if entry.scope == Scope.PLATFORM:
        raise InvalidArgument(f"{field}.scope", "platform rules are not imported")
    owner = actor.user_id or ""
    personal = entry.scope in rules.PERSONAL_SCOPES
    if (entry.scope in (Scope.AGENT, Scope.PRIVATE) and entry.agent_id != actor.agent_id) or \
            (personal and entry.owner_user_id != owner) or \
            (not personal and entry.owner_user_id) or \
            (entry.scope in (Scope.ACCOUNT, Scope.USER) and entry.agent_id):
        raise InvalidArgument(f"{field}.scope", "belongs to another agent or user than the "
                                                "caller's")
    if entry.kind not in rules.RULES or entry.scope not in rules.scopes_of(entry.kind):
        raise InvalidArgument(f"{field}.kind", f"{entry.kind} cannot live in {entry.scope}")
    permissions.check_write(actor, entry.scope, entry.kind)
    numbers = [v.entry.version for v in versions]
    if not versions or numbers[-1] != entry.version or numbers[0] < 1 or \
            numbers != sorted(set(numbers)):
        raise InvalidArgument(f"{field}.versions", "must list the versions in order, ending "
                                                   "with the current one")
    last = versions[-1].entry
    if (entry.key, entry.content, entry.content_hash, entry.kind, entry.tags) != \
            (last.key, last.content, last.content_hash, last.kind, last.tags):
        raise InvalidArgument(f"{field}.content", "must be the current version's")
    screened: set[tuple[str, str]] = set()  # versions repeat key and content: screen once
    for index, version in enumerate(versions):
        snapshot = version.entry
        if (snapshot.id, snapshot.scope, snapshot.agent_id, snapshot.owner_user_id) != \
                (entry.id, entry.scope, entry.agent_id, entry.owner_user_id):
            raise InvalidArgument(f"{field}.versions[{index}]", "belongs to another memory")
        name = f"{field}.versions[{index}]"
        validation.text(snapshot.key, f"{name}.key", rules.MAX_KEY_CHARS)
        validation.text(snapshot.content, f"{name}.content",
                        rules.RULES[snapshot.kind].max_content_chars)
        validation.unit(snapshot.importance, f"{name}.importance")
        validation.unit(snapshot.confidence, f"{name}.confidence")
        validation.tags(snapshot.tags, f"{name}.tags")
        if content_hash(snapshot.content) != snapshot.content_hash:
            raise InvalidArgument(f"{name}.content_hash", "does not match the content")
        if (snapshot.key, snapshot.content) in screened:
            continue
        screened.add((snapshot.key, snapshot.content))
        sensitive = validation.screen({f"{name}.key": snapshot.key,
                                       f"{name}.content": snapshot.content}, snapshot.kind)
        if sensitive and entry.scope not in rules.PERSONAL_SCOPES:
            raise _private_only(sensitive)
    validation.unit(entry.importance, f"{field}.importance")
    validation.unit(entry.confidence, f"{field}.confidence")


def _settings_json(settings: AccountSettings | AgentSettings) -> dict:
    values = {k: v for k, v in dataclasses.asdict(settings).items() if k != "updated_at"}
    return {k: v if isinstance(v, bool | int | float | dict | list) else
            list(v) if isinstance(v, tuple) else str(v) for k, v in values.items()}


def _check_environments(environments: tuple[str, ...]) -> None:
    if not environments:
        raise InvalidArgument("settings.environments", "at least one environment")
    for index, environment in enumerate(environments):
        require_id(environment, f"settings.environments[{index}]")
    if len(set(environments)) != len(environments):
        raise InvalidArgument("settings.environments", "each environment at most once")
