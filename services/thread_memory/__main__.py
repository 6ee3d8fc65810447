"""``python -m services.thread_memory``: run the thread-memory service until SIGTERM."""

from __future__ import annotations

from libs import process
from services.thread_memory.app import serve
from services.thread_memory.settings import ThreadMemoryConfig


def main() -> None:
    process.main("thread_memory", ThreadMemoryConfig.from_env, serve)


if __name__ == "__main__":
    main()
