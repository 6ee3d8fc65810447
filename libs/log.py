"""Logging with request-id correlation.

The server interceptor puts each call's request id (the caller's
``x-request-id`` metadata, or a new one) in :data:`request_id`; every log line
written while serving that call carries it.
"""

from __future__ import annotations

import contextvars
import json
import logging
import sys
import time
from dataclasses import dataclass
from typing import Literal

from libs.settings import setting

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

_TEXT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s [%(request_id)s] %(message)s"


class _RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "request_id": getattr(record, "request_id", "-"),
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(level: str = "INFO", fmt: Literal["text", "json"] = "text") -> None:
    """Configure the root logger once for a service process."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_RequestIdFilter())
    handler.setFormatter(_JsonFormatter() if fmt == "json" else logging.Formatter(_TEXT_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())


@dataclass(frozen=True)
class LogSettings:
    level: str = setting("LOG_LEVEL", "INFO", "Log level: DEBUG, INFO, WARNING, ERROR.")
    format: Literal["text", "json"] = setting("LOG_FORMAT", "text", "Log lines: text or json.")
