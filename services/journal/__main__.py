"""``python -m services.journal``: run the journal service until SIGTERM."""

from __future__ import annotations

import sys

import uvloop

from libs.log import configure_logging
from libs.settings import SettingsError
from services.journal.app import serve
from services.journal.settings import JournalConfig


def main() -> None:
    try:
        config = JournalConfig.from_env()
    except SettingsError as exc:
        sys.exit(f"journal: bad configuration: {exc}")
    configure_logging(config.log.level, config.log.format)
    uvloop.run(serve(config))


if __name__ == "__main__":
    main()
