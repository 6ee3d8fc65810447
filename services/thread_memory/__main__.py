"""``python -m services.thread_memory``: run the thread-memory service until SIGTERM."""

from __future__ import annotations

import sys

import uvloop

from libs.log import configure_logging
from libs.settings import SettingsError
from services.thread_memory.app import serve
from services.thread_memory.settings import ThreadMemoryConfig


def main() -> None:
    try:
        config = ThreadMemoryConfig.from_env()
    except SettingsError as exc:
        sys.exit(f"thread_memory: bad configuration: {exc}")
    configure_logging(config.log.level, config.log.format)
    uvloop.run(serve(config))


if __name__ == "__main__":
    main()
