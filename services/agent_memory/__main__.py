"""``python -m services.agent_memory``: run the agent-memory service until SIGTERM."""

from __future__ import annotations

from libs import process
from services.agent_memory.app import serve
from services.agent_memory.settings import AgentMemoryConfig


def main() -> None:
    process.main("agent_memory", AgentMemoryConfig.from_env, serve)


if __name__ == "__main__":
    main()
