"""What every service process reads and does before serving.

:class:`ProcessSettings` bundles the variables all services share (logging,
tracing, the internal secret, the debugging heap snapshots); :func:`main` is each
``python -m services.<name>`` entry point: read the configuration (a bad value
stops the process with a message naming the variable), configure logging, start
the heap snapshots when asked, serve on uvloop until SIGTERM.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from libs import heap_snapshots, settings
from libs.heap_snapshots import HeapSnapshotSettings
from libs.log import LogSettings, configure_logging
from libs.server import InternalAuthSettings
from libs.settings import SettingsError
from libs.tracing import TracingSettings


@dataclass(frozen=True)
class ProcessSettings:
    log: LogSettings
    tracing: TracingSettings
    internal: InternalAuthSettings
    heap: HeapSnapshotSettings

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ProcessSettings:
        return cls(settings.load(LogSettings, environ=environ),
                   settings.load(TracingSettings, environ=environ),
                   settings.load(InternalAuthSettings, environ=environ),
                   settings.load(HeapSnapshotSettings, environ=environ))


class ServiceConfig(Protocol):
    @property
    def process(self) -> ProcessSettings: ...  # read-only: the configs are frozen


Config = TypeVar("Config", bound=ServiceConfig)


def main(name: str, load: Callable[[], Config],
         serve: Callable[[Config], Coroutine[Any, Any, None]]) -> None:
    import uvloop

    try:
        config = load()
    except SettingsError as exc:
        sys.exit(f"{name}: bad configuration: {exc}")
    configure_logging(config.process.log.level, config.process.log.format)
    heap_snapshots.start(config.process.heap, name)
    uvloop.run(serve(config))
