"""OpenTelemetry tracing across calls, off by default.

``OTEL_TRACES_EXPORTER`` chooses the exporter: ``none`` (default: no tracer
provider, no interceptors, no cost), ``console`` (spans on stdout) or ``otlp``
(to ``OTEL_EXPORTER_OTLP_ENDPOINT``). When on, server and client interceptors
propagate the trace context through gRPC metadata.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

import grpc

from libs.settings import setting

Exporter = Literal["none", "console", "otlp"]


@dataclass(frozen=True)
class TracingSettings:
    exporter: Exporter = setting(
        "OTEL_TRACES_EXPORTER", "none", "Trace exporter: none, console or otlp."
    )
    otlp_endpoint: str = setting(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "http://localhost:4317",
        "OTLP/gRPC collector address, used when the exporter is otlp.",
    )


class Tracing:
    """The tracer provider of one process; ``close`` flushes and stops it."""

    def __init__(self, settings: TracingSettings, service_name: str) -> None:
        self._provider = None
        if settings.exporter == "none":
            return
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self._provider = TracerProvider(
            resource=Resource.create({"service.name": f"agentmemory-{service_name}"})
        )
        self._provider.add_span_processor(BatchSpanProcessor(_exporter(settings)))

    @property
    def enabled(self) -> bool:
        return self._provider is not None

    def server_interceptors(self) -> list[grpc.aio.ServerInterceptor]:
        if self._provider is None:
            return []
        from opentelemetry.instrumentation.grpc import aio_server_interceptor

        return [aio_server_interceptor(tracer_provider=self._provider)]

    def client_interceptors(self) -> list[grpc.aio.ClientInterceptor]:
        if self._provider is None:
            return []
        from opentelemetry.instrumentation.grpc import aio_client_interceptors

        return list(aio_client_interceptors(tracer_provider=self._provider))

    def close(self) -> None:
        if self._provider is not None:
            self._provider.shutdown()


def _exporter(settings: TracingSettings):
    if settings.exporter == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        return ConsoleSpanExporter(out=sys.stdout)  # the stream now, not at import
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(endpoint=settings.otlp_endpoint, insecure=True)
