"""``python -m services.agent_memory.admin``: the operator's settings and platform rules.

    agent-settings --account ACME --agent AGENT [--memory-bound true|false]
                   [--extraction-mode immediate|suggestions|off] [--procedures true|false]
                   [--relevant-memories true|false] [--relevant-memories-budget N]
    account-settings --account ACME [--memory-enabled true|false] [--retention-days N]
                     [--token-budget N] [--environments default,production]
                     [--quota NAME=N ...]   (NAME: environments, memories,
                     pending_suggestions, receipts_per_day, runs_per_day; N=0: the default)
    platform-rules list
    platform-rules add --content TEXT [--key KEY] [--importance 0.8]
    platform-rules delete --id MEMORY_ID

Without a change, the settings commands print the current values. Talks to the
running agent memory (``AGENT_MEMORY_ADDRESS``, default 127.0.0.1:50054, with
``INTERNAL_AUTH_TOKEN`` when the service requires it) as the platform
operator: every change is audited like any other, with the role ``operator``.
Tenants change their own settings through the gateway with an admin key.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from agentmemory.agent_memory.v1 import agent_memory_service_pb2 as pb
from agentmemory.common.v1 import principal_pb2
from google.protobuf import field_mask_pb2, json_format

from libs.clients.agent_memory import AgentMemoryClient
from libs.errors import DomainError
from libs.settings import Secret

OPERATOR = "operator"  # the agent id the operator's changes are recorded under
_MODES = {"immediate": pb.EXTRACTION_MODE_IMMEDIATE, "suggestions": pb.EXTRACTION_MODE_SUGGESTIONS,
          "off": pb.EXTRACTION_MODE_OFF}


def _bool(value: str) -> bool:
    if value not in ("true", "false"):
        raise argparse.ArgumentTypeError("true or false")
    return value == "true"


def _quota(value: str) -> tuple[str, int]:
    name, _, limit = value.partition("=")
    if name not in pb.AccountQuotas.DESCRIPTOR.fields_by_name or not limit.isdigit():
        names = ", ".join(pb.AccountQuotas.DESCRIPTOR.fields_by_name)
        raise argparse.ArgumentTypeError(f"NAME=N with NAME one of {names}")
    return name, int(limit)


def _principal(args, agent: str = OPERATOR) -> principal_pb2.Principal:
    return principal_pb2.Principal(account_id=getattr(args, "account", None) or "platform",
                                   agent_id=agent, environment=args.environment,
                                   role=principal_pb2.KEY_ROLE_OPERATOR)


def _show(message) -> None:
    print(json_format.MessageToJson(message, indent=2))


async def agent_settings(agent_memory: AgentMemoryClient, args) -> None:
    principal = _principal(args, args.agent)
    values = pb.AgentSettings()
    paths: list[str] = []
    if args.memory_bound is not None:
        values.memory_bound, paths = args.memory_bound, [*paths, "memory_bound"]
    if args.extraction_mode is not None:
        values.extraction_mode = _MODES[args.extraction_mode]
        paths.append("extraction_mode")
    if args.procedures is not None:
        values.procedures_enabled, paths = args.procedures, [*paths, "procedures_enabled"]
    if args.relevant_memories is not None:
        values.relevant_memories_enabled = args.relevant_memories
        paths.append("relevant_memories_enabled")
    if args.relevant_memories_budget is not None:
        values.relevant_memories_token_budget = args.relevant_memories_budget
        paths.append("relevant_memories_token_budget")
    if paths:
        await agent_memory.update_agent_settings(pb.UpdateAgentSettingsRequest(
            principal=principal, settings=values,
            update_mask=field_mask_pb2.FieldMask(paths=paths)))
    _show(await agent_memory.get_agent_settings(pb.GetAgentSettingsRequest(principal=principal)))


async def account_settings(agent_memory: AgentMemoryClient, args) -> None:
    principal = _principal(args)
    values = pb.AccountSettings()
    paths: list[str] = []
    if args.memory_enabled is not None:
        values.memory_enabled, paths = args.memory_enabled, [*paths, "memory_enabled"]
    if args.retention_days is not None:
        values.retention_days, paths = args.retention_days, [*paths, "retention_days"]
    if args.token_budget is not None:
        values.default_token_budget, paths = args.token_budget, [*paths, "default_token_budget"]
    if args.environments is not None:
        values.environments[:] = [e for e in args.environments.split(",") if e]
        paths.append("environments")
    for name, limit in args.quota:
        setattr(values.quotas, name, limit)
        paths.append(f"quotas.{name}")
    if paths:
        await agent_memory.update_account_settings(pb.UpdateAccountSettingsRequest(
            principal=principal, settings=values,
            update_mask=field_mask_pb2.FieldMask(paths=paths)))
    _show(await agent_memory.get_account_settings(pb.GetAccountSettingsRequest(principal=principal)))


async def platform_rules(agent_memory: AgentMemoryClient, args) -> None:
    principal = _principal(args)
    if args.action == "add":
        memory = pb.NewMemory(scope=pb.MEMORY_SCOPE_PLATFORM, kind=pb.MEMORY_KIND_PLATFORM_RULE,
                              key=args.key or "", content=args.content)
        if args.importance is not None:
            memory.importance = args.importance
        _show(await agent_memory.add_memory(pb.AddMemoryRequest(principal=principal, memory=memory)))
    elif args.action == "delete":
        _show(await agent_memory.delete_memory(pb.DeleteMemoryRequest(principal=principal,
                                                                      memory_id=args.id)))
    else:
        reply = await agent_memory.list_memories(pb.ListMemoriesRequest(
            principal=principal, filter=pb.MemoryFilter(scopes=[pb.MEMORY_SCOPE_PLATFORM]),
            page_size=200))
        for entry in reply.memories:
            print(f"{entry.id}  v{entry.version}  {entry.key}: {entry.content}")


async def run(args) -> int:
    token = Secret(os.environ.get("INTERNAL_AUTH_TOKEN", ""))
    agent_memory = AgentMemoryClient(args.address, timeout=30, internal_token=token)
    try:
        await {"agent-settings": agent_settings, "account-settings": account_settings,
               "platform-rules": platform_rules}[args.command](agent_memory, args)
    except DomainError as exc:
        print(f"error: {exc.code.name} {exc.reason}: {exc.message}", file=sys.stderr)
        return 1
    finally:
        await agent_memory.close()
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m services.agent_memory.admin",
                                  description=__doc__.splitlines()[0])
    top.add_argument("--address", default=os.environ.get("AGENT_MEMORY_ADDRESS",
                                                         "127.0.0.1:50054"))
    top.add_argument("--environment", default="default")
    commands = top.add_subparsers(dest="command", required=True)
    agent = commands.add_parser("agent-settings", help="show or change an agent's settings")
    agent.add_argument("--account", required=True)
    agent.add_argument("--agent", required=True)
    agent.add_argument("--memory-bound", type=_bool)
    agent.add_argument("--extraction-mode", choices=sorted(_MODES))
    agent.add_argument("--procedures", type=_bool)
    agent.add_argument("--relevant-memories", type=_bool,
                       help="the relevant-memories block in every BuildContext")
    agent.add_argument("--relevant-memories-budget", type=int, help="its tokens, 100-8000")
    account = commands.add_parser("account-settings", help="show or change account settings")
    account.add_argument("--account", required=True)
    account.add_argument("--memory-enabled", type=_bool)
    account.add_argument("--retention-days", type=int)
    account.add_argument("--token-budget", type=int)
    account.add_argument("--environments", help="the environments callers may name, by commas")
    account.add_argument("--quota", type=_quota, action="append", default=[],
                         help="NAME=N: one of the account's quotas (N=0: the platform default)")
    rules = commands.add_parser("platform-rules", help="platform rules (every account)")
    rules.add_argument("action", choices=["list", "add", "delete"])
    rules.add_argument("--content")
    rules.add_argument("--key")
    rules.add_argument("--importance", type=float)
    rules.add_argument("--id")
    return top


def main() -> None:
    args = parser().parse_args()
    if args.command == "platform-rules" and args.action == "add" and not args.content:
        sys.exit("error: platform-rules add needs --content")
    if args.command == "platform-rules" and args.action == "delete" and not args.id:
        sys.exit("error: platform-rules delete needs --id")
    sys.exit(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
