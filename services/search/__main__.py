"""``python -m services.search``: run the search service until SIGTERM."""

from __future__ import annotations

from libs import process
from services.search.app import serve
from services.search.settings import SearchConfig


def main() -> None:
    process.main("search", SearchConfig.from_env, serve)


if __name__ == "__main__":
    main()
