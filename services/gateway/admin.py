"""``python -m services.gateway.admin``: the operator's command line for API keys.

    create-key --account ACME [--role agent|admin] [--name NAME] [--act-for-users]
               [--user USER] [--agent AGENT ...]          prints the new key once
    list-keys --account ACME
    rotate-key --id KEY_ID [--grace-seconds N]            prints the new key once
    revoke-key --id KEY_ID
    key-events --account ACME [--limit N]

What each kind of key may do is in ``services/gateway/keys.py`` (and
docs/credentials.md); the same operations are KeyService's RPCs for an
account's admin keys. Reads ``GATEWAY_POSTGRES_DSN`` like the gateway (and
applies its migrations).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from libs.errors import DomainError
from libs.identity import require_id
from libs.settings import SettingsError
from services.gateway.app import connect
from services.gateway.keys import ApiKeys, IssuedKey, KeyRecord, KeySpec
from services.gateway.settings import GatewayConfig


def _permissions(spec: KeySpec) -> str:
    parts = [spec.role]
    if spec.act_for_users:
        parts.append("act-for-users")
    if spec.user_id:
        parts.append(f"user={spec.user_id}")
    if spec.agent_ids:
        parts.append(f"agents={','.join(spec.agent_ids)}")
    return " ".join(parts)


def _row(record: KeyRecord) -> str:
    if record.revoked_at:
        state = f"revoked {record.revoked_at:%Y-%m-%d}"
    else:
        used = f"{record.last_used_at:%Y-%m-%d %H:%M}" if record.last_used_at else "never"
        state = f"active, last used {used}"
    return (f"{record.id}  {record.name:<20} {record.created_at:%Y-%m-%d}  {state:<34} "
            f"{_permissions(record.spec)}")


def _issued(issued: IssuedKey, what: str) -> None:
    print(issued.key)
    print(f"{what} key id {issued.id} for account {issued.account_id} "
          f"({_permissions(issued.spec)}); it is shown only once", file=sys.stderr)


async def run(args: argparse.Namespace) -> int:
    config = GatewayConfig.from_env()
    pool = await connect(config.dependencies.postgres_dsn.reveal())
    try:
        keys = ApiKeys(pool)
        if args.command == "create-key":
            spec = KeySpec(args.role, args.act_for_users, args.user or "", tuple(args.agent))
            _issued(await keys.create(require_id(args.account, "account"), args.name, spec),
                    "created")
        elif args.command == "list-keys":
            for record in await keys.list(args.account):
                print(_row(record))
        elif args.command == "rotate-key":
            _issued(await keys.rotate(None, args.id, grace_seconds=args.grace_seconds), "rotated")
            if args.grace_seconds:
                print(f"the old secret works for {args.grace_seconds} s more", file=sys.stderr)
        elif args.command == "key-events":
            for event in await keys.events(args.account, limit=args.limit):
                detail = " ".join(f"{k}={v}" for k, v in event.detail.items())
                print(f"{event.at:%Y-%m-%d %H:%M:%S}  {event.key_id}  {event.action:<12} "
                      f"by {event.by_key_id or 'operator'}  {detail}")
        elif await keys.revoke(None, args.id):
            print(f"revoked key {args.id}: it stops working at once on every gateway replica "
                  "that is listening", file=sys.stderr)
        else:
            print(f"no active key {args.id}", file=sys.stderr)
            return 1
        return 0
    finally:
        await pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m services.gateway.admin",
                                     description="API keys for accounts.")
    commands = parser.add_subparsers(dest="command", required=True)
    create = commands.add_parser("create-key", help="create a key for an account")
    create.add_argument("--account", required=True)
    create.add_argument("--name", default="default")
    create.add_argument("--role", choices=["agent", "admin"], default="agent",
                        help="agent (default): an agent or application; admin: also account "
                             "memories, rules, imports, settings and keys")
    create.add_argument("--act-for-users", action="store_true",
                        help="may state and name any user of the account and mint user tokens "
                             "(a service key serving many end users)")
    create.add_argument("--user", help="bind the key to this one user")
    create.add_argument("--agent", action="append", default=[],
                        help="bind the key to this agent (repeat for several)")
    listing = commands.add_parser("list-keys", help="list an account's keys")
    listing.add_argument("--account", required=True)
    rotate = commands.add_parser("rotate-key", help="give a key a new secret (same id)")
    rotate.add_argument("--id", required=True, help="the key id (list-keys shows it)")
    rotate.add_argument("--grace-seconds", type=int, default=0,
                        help="how long the old secret keeps working (default 0)")
    revoke = commands.add_parser("revoke-key", help="revoke a key by its id")
    revoke.add_argument("--id", required=True, help="the key id (list-keys shows it)")
    events = commands.add_parser("key-events", help="what was done with an account's keys")
    events.add_argument("--account", required=True)
    events.add_argument("--limit", type=int, default=50)
    args = parser.parse_args()
    try:
        sys.exit(asyncio.run(run(args)))
    except (SettingsError, DomainError) as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
