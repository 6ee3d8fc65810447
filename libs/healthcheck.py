"""Standard gRPC health checks, for launchers and container health probes.

``python -m libs.healthcheck HOST:PORT`` exits 0 when the server says SERVING.
"""

from __future__ import annotations

import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def is_serving(address: str, *, service: str = "", timeout: float = 1.0) -> bool:
    with grpc.insecure_channel(address) as channel:
        try:
            # typeshed's HealthStub declares no methods (types-grpcio-health-checking 1.0)
            reply = health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]
                health_pb2.HealthCheckRequest(service=service), timeout=timeout
            )
        except grpc.RpcError:
            return False
    return reply.status == health_pb2.HealthCheckResponse.SERVING


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m libs.healthcheck HOST:PORT")
    sys.exit(0 if is_serving(sys.argv[1], timeout=3.0) else 1)
