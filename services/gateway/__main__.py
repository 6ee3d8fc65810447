"""``python -m services.gateway``: run the gateway until SIGTERM."""

from __future__ import annotations

from libs import process
from services.gateway.app import serve
from services.gateway.settings import GatewayConfig


def main() -> None:
    process.main("gateway", GatewayConfig.from_env, serve)


if __name__ == "__main__":
    main()
