"""``python -m services.gateway.admin``: API keys for accounts.

    create-key --account ACME [--role agent|admin] [--name NAME]   prints the new key once
    list-keys --account ACME
    revoke-key --id KEY_ID

Reads ``GATEWAY_POSTGRES_DSN`` like the gateway (and applies its migrations).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from libs.errors import DomainError
from libs.identity import require_id
from libs.settings import SettingsError
from services.gateway.app import connect
from services.gateway.keys import ApiKeys
from services.gateway.settings import GatewayConfig


async def run(args: argparse.Namespace) -> int:
    config = GatewayConfig.from_env()
    pool = await connect(config.dependencies.postgres_dsn.reveal())
    try:
        keys = ApiKeys(pool)
        if args.command == "create-key":
            issued = await keys.create(require_id(args.account, "account"), args.name, args.role)
            print(issued.key)
            print(f"{issued.role} key id {issued.id} for account {issued.account_id}; it is "
                  "shown only once", file=sys.stderr)
        elif args.command == "list-keys":
            for row in await keys.list(args.account):
                state = f"revoked {row['revoked_at']:%Y-%m-%d}" if row["revoked_at"] else "active"
                print(f"{row['id']}  {row['name']:<20} {row['role']:<6} "
                      f"{row['created_at']:%Y-%m-%d}  {state}")
        elif not await keys.revoke(args.id):
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
                             "memories, rules, imports and settings")
    listing = commands.add_parser("list-keys", help="list an account's keys")
    listing.add_argument("--account", required=True)
    revoke = commands.add_parser("revoke-key", help="revoke a key by its id")
    revoke.add_argument("--id", required=True)
    args = parser.parse_args()
    try:
        sys.exit(asyncio.run(run(args)))
    except (SettingsError, DomainError) as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
