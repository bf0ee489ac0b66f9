"""`python -m factcheck.kit.healthcheck [TARGET]`: exit 0 when a server's gRPC health is SERVING.

For container health checks (docker compose, Kubernetes exec probes): it uses the process's
FACTCHECK_* settings, so it speaks TLS (with the client certificate for mTLS) when the
service does. TARGET defaults to the port of FACTCHECK_LISTEN on localhost.
"""

from __future__ import annotations

import argparse
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from factcheck.kit.grpc_options import CHANNEL_OPTIONS
from factcheck.kit.security import tls
from factcheck.kit.settings import Settings


def check(target: str, settings: Settings, service: str = "", timeout_s: float = 5.0) -> str:
    """The health status name ("SERVING", "NOT_SERVING", ...) or the gRPC error code's name."""
    options = [*CHANNEL_OPTIONS, *tls.channel_options(settings)]
    if settings.tls:
        channel = grpc.secure_channel(target, tls.channel_credentials(settings), options=options)
    else:
        channel = grpc.insecure_channel(target, options=options)
    with channel:
        try:
            # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
            response = health_pb2_grpc.HealthStub(channel).Check(  # type: ignore[attr-defined]
                health_pb2.HealthCheckRequest(service=service), timeout=timeout_s
            )
        except grpc.RpcError as error:
            return error.code().name
    return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m factcheck.kit.healthcheck", description=__doc__.splitlines()[0])
    parser.add_argument("target", nargs="?", help="host:port (default: localhost and the port of FACTCHECK_LISTEN)")
    parser.add_argument("--service", default="", help="a service name; default: the whole server")
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args(argv)
    settings = Settings()
    target = args.target
    if target is None:
        if not settings.listen:
            parser.error("give a TARGET or set FACTCHECK_LISTEN")
        target = f"localhost:{settings.listen.rsplit(':', 1)[1]}"
    status = check(target, settings, args.service, args.timeout)
    print(status)
    return 0 if status == "SERVING" else 1


if __name__ == "__main__":
    sys.exit(main())
