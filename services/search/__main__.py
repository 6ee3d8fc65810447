"""``python -m services.search``: run the search service until SIGTERM."""

from __future__ import annotations

import sys

import uvloop

from libs.log import configure_logging
from libs.settings import SettingsError
from services.search.app import serve
from services.search.settings import SearchConfig


def main() -> None:
    try:
        config = SearchConfig.from_env()
    except SettingsError as exc:
        sys.exit(f"search: bad configuration: {exc}")
    configure_logging(config.log.level, config.log.format)
    uvloop.run(serve(config))


if __name__ == "__main__":
    main()
