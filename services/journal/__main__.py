"""``python -m services.journal``: run the journal service until SIGTERM."""

from __future__ import annotations

from libs import process
from services.journal.app import serve
from services.journal.settings import JournalConfig


def main() -> None:
    process.main("journal", JournalConfig.from_env, serve)


if __name__ == "__main__":
    main()
