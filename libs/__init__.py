"""Shared service library: settings, errors, the gRPC server bootstrap, clients.

Every service builds on the same pieces:

- ``settings``: typed, frozen settings read from environment variables;
- ``errors``: the domain error tree and its one mapping to gRPC status;
- ``server``: a grpc.aio server with health, reflection, tracing, request ids
  and graceful shutdown;
- ``clients``: channels whose calls always carry a deadline;
- ``log``, ``tracing``: request-id log correlation and OpenTelemetry set-up.
"""
