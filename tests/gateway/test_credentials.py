"""Credentials on a real PostgreSQL: what each kind of key and the user tokens may be
(``callers.principal_of``), rotation with a grace period, revocation ending the tokens
a key minted, no key creating a stronger one, the events recorded, and the keys of
before the permission model kept working as they did."""

from __future__ import annotations

import asyncio
import shutil
import time

import jwt
import pytest
from agentmemory.gateway.v1 import gateway_service_pb2 as pb

from libs import migrations
from libs import postgres as pools
from libs.errors import (
    InvalidArgument,
    NotFound,
    PermissionDenied,
    Unauthenticated,
    Unavailable,
)
from libs.settings import Secret
from services.gateway import callers, tokens
from services.gateway.app import MIGRATIONS, connect
from services.gateway.keys import ApiKeys, KeySpec
from services.gateway.tokens import UserTokens
from testkit.ports import free_port
from testkit.postgres import fresh_database
from tools.backends.postgres import EmbeddedPostgres

SECRET = "s" * 40


@pytest.fixture
async def keys(postgres):
    dsn = await fresh_database(postgres)
    pool = await connect(dsn)
    try:
        yield ApiKeys(pool, tokens=UserTokens(Secret(SECRET)), cache_seconds=30)
    finally:
        await pool.close()


async def credential_of(keys: ApiKeys, key: str):
    return await keys.authenticate(f"Bearer {key}")


def as_caller(credential, agent: str = "", user: str = ""):
    return callers.principal_of(credential, pb.Caller(agent_id=agent, user_id=user))


def denied(reason: str, call) -> None:
    with pytest.raises(PermissionDenied) as caught:
        call()
    assert caught.value.reason == reason, caught.value.message


async def test_a_plain_key_states_no_user(keys):
    issued = await keys.create("acme", "app", KeySpec("agent"))
    plain = await credential_of(keys, issued.key)
    assert as_caller(plain, "helper").user_id is None
    denied("ACT_FOR_USERS_REQUIRED", lambda: as_caller(plain, "helper", "ana"))
    admin = await credential_of(keys, (await keys.create("acme", "ops", KeySpec("admin"))).key)
    denied("ACT_FOR_USERS_REQUIRED", lambda: as_caller(admin, "helper", "ana"))


async def test_an_act_for_users_key_states_any_user_and_says_so_downstream(keys):
    issued = await keys.create("acme", "service", KeySpec("agent", act_for_users=True))
    service = await credential_of(keys, issued.key)
    principal = as_caller(service, "helper", "ana")
    assert (principal.user_id, principal.act_for_users) == ("ana", True)
    assert principal.to_proto().act_for_users
    assert not as_caller(await credential_of(keys, (await keys.create(
        "acme", "app", KeySpec("agent"))).key), "helper").act_for_users


async def test_a_key_bound_to_a_user_acts_as_that_user_only(keys):
    issued = await keys.create("acme", "ana's", KeySpec("agent", user_id="ana"))
    own = await credential_of(keys, issued.key)
    assert as_caller(own, "helper").user_id == "ana"  # stated or not
    assert as_caller(own, "helper", "ana").user_id == "ana"
    denied("ACT_FOR_USERS_REQUIRED", lambda: as_caller(own, "helper", "bob"))


async def test_a_key_bound_to_agents_acts_as_those_only(keys):
    one = await credential_of(keys, (await keys.create(
        "acme", "one", KeySpec("agent", agent_ids=("helper",)))).key)
    assert as_caller(one).agent_id == "helper"  # the one agent, when none is stated
    assert as_caller(one, "helper").agent_id == "helper"
    denied("AGENT_NOT_ALLOWED", lambda: as_caller(one, "other"))
    two = await credential_of(keys, (await keys.create(
        "acme", "two", KeySpec("agent", agent_ids=("b", "a")))).key)
    assert two.agent_ids == ("a", "b")
    with pytest.raises(InvalidArgument) as caught:
        as_caller(two)  # which one?
    assert caught.value.field == "caller.agent_id"
    denied("AGENT_NOT_ALLOWED", lambda: as_caller(two, "c"))


async def test_a_user_token_acts_as_its_user_and_agent_with_the_agent_role(keys):
    service = await credential_of(keys, (await keys.create(
        "acme", "service", KeySpec("admin", act_for_users=True))).key)
    minted = await keys.mint(service, "ana", "helper", 600)
    token = await credential_of(keys, minted.token)
    assert (token.account_id, token.role, token.key_id, token.is_token) == (
        "acme", "agent", service.key_id, True)
    principal = as_caller(token)
    assert (principal.agent_id, principal.user_id, principal.act_for_users) == (
        "helper", "ana", False)
    denied("ACT_FOR_USERS_REQUIRED", lambda: as_caller(token, "helper", "bob"))
    denied("AGENT_NOT_ALLOWED", lambda: as_caller(token, "other", "ana"))
    assert minted.claims.expires_at - time.time() == pytest.approx(600, abs=5)


async def test_only_an_act_for_users_key_mints_tokens_within_its_agents(keys):
    plain = await credential_of(keys, (await keys.create("acme", "a", KeySpec("admin"))).key)
    with pytest.raises(PermissionDenied) as caught:
        await keys.mint(plain, "ana", "helper")
    assert caught.value.reason == "ACT_FOR_USERS_REQUIRED"
    bound = await credential_of(keys, (await keys.create(
        "acme", "b", KeySpec("agent", act_for_users=True, agent_ids=("helper",)))).key)
    with pytest.raises(PermissionDenied) as caught:
        await keys.mint(bound, "ana", "other")
    assert caught.value.reason == "AGENT_NOT_ALLOWED"
    token = await credential_of(keys, (await keys.mint(bound, "ana", "helper")).token)
    with pytest.raises(PermissionDenied):
        await keys.mint(token, "bob", "helper")  # a token mints nothing
    for seconds in (59, tokens.MAX_SECONDS + 1):
        with pytest.raises(InvalidArgument) as bad:
            await keys.mint(bound, "ana", "helper", seconds)
        assert bad.value.field == "ttl_seconds"


async def test_revoking_a_key_ends_the_tokens_it_minted(keys):
    issued = await keys.create("acme", "service", KeySpec("agent", act_for_users=True))
    minted = await keys.mint(await credential_of(keys, issued.key), "ana", "helper")
    assert (await credential_of(keys, minted.token)).user_id == "ana"
    assert await keys.revoke("acme", issued.id)
    for value in (issued.key, minted.token):
        with pytest.raises(Unauthenticated):
            await credential_of(keys, value)


async def test_expired_forged_and_foreign_tokens_are_refused(keys):
    service = await credential_of(keys, (await keys.create(
        "acme", "service", KeySpec("agent", act_for_users=True))).key)
    now = int(time.time())
    claims = {"iss": tokens.ISSUER, "aud": tokens.AUDIENCE, "iat": now - 7200,
              "exp": now - 3600, "jti": "t1", "acc": "acme", "kid": service.key_id,
              "sub": "ana", "agt": "helper"}
    expired = jwt.encode(claims, SECRET, algorithm="HS256")
    forged = jwt.encode({**claims, "exp": now + 3600}, "x" * 40, algorithm="HS256")
    other_account = jwt.encode({**claims, "exp": now + 3600, "acc": "globex"}, SECRET,
                               algorithm="HS256")
    unsigned = jwt.encode({**claims, "exp": now + 3600}, None, algorithm="none")
    for token, reason in [(expired, "TOKEN_EXPIRED"), (forged, "TOKEN_INVALID"),
                          (other_account, "TOKEN_INVALID"), (unsigned, "TOKEN_INVALID")]:
        with pytest.raises(Unauthenticated) as caught:
            await credential_of(keys, token)
        assert caught.value.reason == reason, token


async def test_a_rotated_key_keeps_its_id_and_the_old_secret_works_only_for_the_grace(keys):
    issued = await keys.create("acme", "app", KeySpec("agent", agent_ids=("helper",)))
    rotated = await keys.rotate("acme", issued.id, grace_seconds=2)
    assert rotated.id == issued.id and rotated.key != issued.key
    assert rotated.spec == issued.spec
    old = await credential_of(keys, issued.key)
    assert old.expires_at is not None and (await credential_of(keys, rotated.key)).expires_at \
        is None
    await asyncio.sleep(2.5)
    with pytest.raises(Unauthenticated):
        await credential_of(keys, issued.key)  # cached, but the grace has ended
    assert (await credential_of(keys, rotated.key)).key_id == issued.id
    at_once = await keys.rotate("acme", issued.id)
    with pytest.raises(Unauthenticated):
        await credential_of(keys, rotated.key)
    assert (await credential_of(keys, at_once.key)).key_id == issued.id
    with pytest.raises(NotFound):
        await keys.rotate("globex", issued.id)  # another account's key: not found
    with pytest.raises(InvalidArgument):
        await keys.rotate("acme", issued.id, grace_seconds=-1)


async def test_no_key_creates_a_stronger_one(keys):
    agent = await credential_of(keys, (await keys.create("acme", "a", KeySpec("agent"))).key)
    admin = await credential_of(keys, (await keys.create("acme", "b", KeySpec("admin"))).key)
    bound = await credential_of(keys, (await keys.create(
        "acme", "c", KeySpec("admin", agent_ids=("helper",)))).key)
    cases = [(agent, KeySpec("agent"), "ADMIN_REQUIRED"),
             (admin, KeySpec("agent", act_for_users=True), "ACT_FOR_USERS_REQUIRED"),
             (bound, KeySpec("agent"), "AGENT_NOT_ALLOWED"),
             (bound, KeySpec("agent", agent_ids=("helper", "other")), "AGENT_NOT_ALLOWED")]
    for creator, spec, reason in cases:
        with pytest.raises(PermissionDenied) as caught:
            await keys.create("acme", "new", spec, by=creator)
        assert caught.value.reason == reason
    made = await keys.create("acme", "new", KeySpec("agent", agent_ids=("helper",)), by=bound)
    assert made.spec.agent_ids == ("helper",)


async def test_bad_specs_name_the_field(keys):
    for spec, field in [(KeySpec("root"), "role"),
                        (KeySpec("agent", act_for_users=True, user_id="ana"), "act_for_users"),
                        (KeySpec("agent", user_id="a b"), "user_id"),
                        (KeySpec("agent", agent_ids=("ok", "")), "agent_ids[1]"),
                        (KeySpec("agent", agent_ids=("x", "x")), "agent_ids"),
                        (KeySpec("agent", agent_ids=tuple(f"a{i}" for i in range(101))),
                         "agent_ids")]:
        with pytest.raises(InvalidArgument) as caught:
            await keys.create("acme", "k", spec)
        assert caught.value.field == field
    with pytest.raises(InvalidArgument) as caught:
        await keys.create("acme", "x" * 101, KeySpec())
    assert caught.value.field == "name"


async def test_every_change_is_an_event_and_use_is_noted(keys):
    admin = await credential_of(keys, (await keys.create(
        "acme", "ops", KeySpec("admin", act_for_users=True))).key)
    made = await keys.create("acme", "app", KeySpec("agent", user_id="ana"), by=admin)
    await keys.rotate("acme", made.id, by=admin)
    await keys.mint(admin, "bob", "helper", 120)
    await keys.revoke("acme", made.id, by=admin)
    events = await keys.events("acme")
    assert [(e.action, e.key_id) for e in events] == [
        ("revoked", made.id), ("token_minted", admin.key_id), ("rotated", made.id),
        ("created", made.id), ("created", admin.key_id)]
    assert {e.by_key_id for e in events[:4]} == {admin.key_id} and events[4].by_key_id == ""
    assert events[3].detail["user_id"] == "ana" and events[1].detail["user_id"] == "bob"
    assert await keys.events("globex") == []
    records = {r.id: r for r in await keys.list("acme")}
    assert records[admin.key_id].last_used_at is not None
    assert records[made.id].revoked_at is not None


async def test_keys_of_before_the_permission_model_keep_acting_for_users(postgres, tmp_path):
    """The migration: a key made when the caller stated any user keeps that permission."""
    dsn = await fresh_database(postgres)
    earlier = tmp_path / "migrations"
    earlier.mkdir()
    for path in sorted(MIGRATIONS.glob("000[1-4]_*.sql")):
        shutil.copy(path, earlier / path.name)
    pool = await pools.create_pool(dsn, min_size=1, max_size=2)
    try:
        await migrations.apply(pool, "gateway", earlier)
        await pool.execute(
            "INSERT INTO api_keys (id, account_id, name, secret_hash, role) VALUES"
            " ('k0ld', 'acme', 'old', sha256($1::bytea), 'agent')", b"old-secret")
    finally:
        await pool.close()
    pool = await connect(dsn)  # the rest of the migrations
    try:
        keys = ApiKeys(pool)
        old = await keys.authenticate("Bearer am_k0ld_old-secret")
        assert (old.act_for_users, old.user_id, old.agent_ids) == (True, "", ())
        assert as_caller(old, "helper", "ana").user_id == "ana"
        fresh = await keys.create("acme", "new", KeySpec("agent"))
        assert not (await credential_of(keys, fresh.key)).act_for_users
    finally:
        await pool.close()


async def test_postgresql_down_is_unavailable_not_internal(tmp_path):
    server = EmbeddedPostgres(tmp_path / "pg", free_port()).start()
    pool = await connect(server.dsn)
    try:
        keys = ApiKeys(pool)
        issued = await keys.create("acme", "app", KeySpec("agent"))
        server.stop()
        for call in (lambda: keys.authenticate(f"Bearer {issued.key}x"),
                     lambda: keys.create("acme", "b", KeySpec("agent")),
                     lambda: keys.list("acme")):
            with pytest.raises(Unavailable) as caught:
                await call()
            assert caught.value.reason == "POSTGRES_UNAVAILABLE"
    finally:
        pool.terminate()
