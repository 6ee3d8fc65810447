"""``python -m services.agent_memory``: run the agent-memory service until SIGTERM."""

from __future__ import annotations

import sys

import uvloop

from libs.log import configure_logging
from libs.settings import SettingsError
from services.agent_memory.app import serve
from services.agent_memory.settings import AgentMemoryConfig


def main() -> None:
    try:
        config = AgentMemoryConfig.from_env()
    except SettingsError as exc:
        sys.exit(f"agent_memory: bad configuration: {exc}")
    configure_logging(config.log.level, config.log.format)
    uvloop.run(serve(config))


if __name__ == "__main__":
    main()
