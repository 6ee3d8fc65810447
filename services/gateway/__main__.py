"""``python -m services.gateway``: run the gateway until SIGTERM."""

from __future__ import annotations

import sys

import uvloop

from libs.log import configure_logging
from libs.settings import SettingsError
from services.gateway.app import serve
from services.gateway.settings import GatewayConfig


def main() -> None:
    try:
        config = GatewayConfig.from_env()
    except SettingsError as exc:
        sys.exit(f"gateway: bad configuration: {exc}")
    configure_logging(config.log.level, config.log.format)
    uvloop.run(serve(config))


if __name__ == "__main__":
    main()
