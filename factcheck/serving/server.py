"""What every factcheck gRPC server shares: start, health, reflection, security, observability,
graceful shutdown."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from factcheck.kit.grpc_options import CHANNEL_OPTIONS, MAX_MESSAGE_BYTES, server_options
from factcheck.kit.health_servicer import HealthServicer
from factcheck.kit.observability import metrics, otel, tracing
from factcheck.kit.observability.interceptors import MessageIdServerInterceptor, ServerMetricsInterceptor
from factcheck.kit.observability.logs import configure_logging as _configure_logging
from factcheck.kit.reflection import enable_server_reflection
from factcheck.kit.security import tls
from factcheck.kit.security.auth import BearerTokenCheck
from factcheck.kit.settings import Settings
from factcheck.kit.version import installed_version
from factcheck.models.calls import ModelCallsServerInterceptor
from factcheck.serving.error_interceptor import ErrorInterceptor

__all__ = [
    "CHANNEL_OPTIONS",
    "MAX_MESSAGE_BYTES",
    "PORT_TAKEN_HINT",
    "add_port",
    "configure_logging",
    "new_server",
    "run_model_service",
    "run_server",
    "server_interceptors",
    "service_full_name",
]

log = logging.getLogger("factcheck.serving.server")

# What a service started on its own says to do about a taken address (`factcheck serve` says its own).
PORT_TAKEN_HINT = "Stop the other server or set FACTCHECK_LISTEN."

# Registers the service implementations on a server; returns their full service names.
Registrar = Callable[[grpc.aio.Server], Sequence[str]]


def configure_logging(settings: Settings, service: str = "factcheck") -> None:
    _configure_logging(settings, service)


def service_full_name(pb2_module, service: str) -> str:
    return pb2_module.DESCRIPTOR.services_by_name[service].full_name


def server_interceptors(settings: Settings, authenticate: bool = False) -> list:
    """Outermost first: the trace span, the metrics (which so count rejected calls), the log
    context, and last the error interceptor: the token check (when `authenticate` and tokens
    are configured), the request decoding and every error's status."""
    guards = []
    if authenticate and settings.auth_tokens:
        guards.append(BearerTokenCheck(token.get_secret_value() for token in settings.auth_tokens))
    return [
        *tracing.server_interceptors(),
        ServerMetricsInterceptor(),
        MessageIdServerInterceptor(),
        ModelCallsServerInterceptor(),  # outside the error interceptor, whose abort sends the calls too
        ErrorInterceptor(guards),
    ]


def new_server(settings: Settings, *, authenticate: bool = False) -> grpc.aio.Server:
    """A grpc.aio server with factcheck's options and interceptors (tests build theirs with it too)."""
    return grpc.aio.server(options=server_options(settings), interceptors=server_interceptors(settings, authenticate))


class PortTakenError(SystemExit):
    """The server could not bind its address (another process has it, or it does not exist here)."""


def add_port(server: grpc.aio.Server, address: str, settings: Settings, name: str = "server") -> int:
    """Bind `address` (TLS when configured); PortTakenError with a clear message when it cannot.

    SO_REUSEPORT is off (grpc_options.server_options), so a port another server listens on
    cannot be bound twice: the kernel would otherwise split calls between the two.
    """
    try:
        port = (
            server.add_secure_port(address, tls.server_credentials(settings))
            if settings.tls
            else server.add_insecure_port(address)
        )
    except RuntimeError:
        port = 0
    if port == 0:
        raise PortTakenError(
            f"{name}: cannot listen on {address}: the address is already in use (another factcheck "
            f"or other server?) or not available on this machine. {PORT_TAKEN_HINT}"
        )
    return port


def _start_observability(name: str, settings: Settings) -> None:
    otel.setup(settings, name)
    if settings.metrics_listen:
        host, port = metrics.serve_metrics(settings.metrics_listen)
        print(f"{name} metrics on http://{host}:{port}/metrics", flush=True)


def _describe_security(name: str, settings: Settings, authenticate: bool) -> None:
    mode = "mTLS" if settings.tls and settings.tls_client_auth else "TLS" if settings.tls else "plaintext"
    auth = authenticate and bool(settings.auth_tokens)
    log.info("%s: %s, %s", name, mode, f"bearer-token auth ({len(settings.auth_tokens)} tokens)" if auth else "no auth")
    if auth and not settings.tls:
        log.warning("%s: bearer tokens travel in plaintext; set FACTCHECK_TLS outside a trusted network", name)


async def run_server(
    name: str,
    settings: Settings,
    register: Registrar,
    *,
    on_drain: Callable[[float], Awaitable[object]] | None = None,
    on_stop: Callable[[], object] | None = None,
    authenticate: bool = False,
) -> None:
    """Serve until SIGTERM/SIGINT, then shut down gracefully.

    Prints "<name> listening on HOST:PORT" once the port is bound, so that a supervisor
    (or a test using port 0) learns the real address. `authenticate` turns on the bearer
    token check when tokens are configured (the gateway). Shutdown: health turns
    NOT_SERVING at once; calls are still served for shutdown_delay_s so that probes and
    balancers move away; then the listener closes and in-flight calls, and `on_drain`
    (the gateway's runs), get shutdown_grace_s to finish; then `on_stop` cleans up.
    """
    _start_observability(name, settings)
    server = new_server(settings, authenticate=authenticate)
    service_names = list(register(server))

    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    enable_server_reflection([*service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name], server)

    address = settings.listen_address(name.removeprefix("factcheck-"))
    port = add_port(server, address, settings, name)
    await server.start()
    for service in ["", *service_names]:
        await health.set(service, health_pb2.HealthCheckResponse.SERVING)
    _describe_security(name, settings, authenticate)
    host = address.rsplit(":", 1)[0] or "0.0.0.0"
    print(f"{name} listening on {host}:{port}", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()

    await _shut_down(name, settings, server, health, on_drain)
    if on_stop is not None:
        result = on_stop()
        if asyncio.iscoroutine(result):
            await result
    otel.shutdown()
    log.info("%s: stopped", name)


async def _shut_down(name, settings: Settings, server: grpc.aio.Server, health: HealthServicer, on_drain) -> None:
    """NOT_SERVING first; serve on for the delay; then drain calls (and runs) for the grace period."""
    log.info(
        "%s: shutting down (health NOT_SERVING; delay %.1fs, grace %.1fs)",
        name,
        settings.shutdown_delay_s,
        settings.shutdown_grace_s,
    )
    await health.enter_graceful_shutdown()
    if settings.shutdown_delay_s:
        await asyncio.sleep(settings.shutdown_delay_s)
    draining = [server.stop(settings.shutdown_grace_s)]
    if on_drain is not None:
        draining.append(on_drain(settings.shutdown_grace_s))
    await asyncio.gather(*draining)


def service_argument_parser(name: str, description: str) -> argparse.ArgumentParser:
    """A console script's own options (--help, --version): settings come from the environment instead."""
    parser = argparse.ArgumentParser(
        prog=name,
        description=description,
        epilog=(
            "Every setting is an environment variable (FACTCHECK_LISTEN, FACTCHECK_MODEL_BASE_URL, ...; "
            "docs/settings.md). SIGTERM or Ctrl-C drains and stops the server."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {installed_version()}")
    return parser


def run_model_service(name: str, pb2_module, service: str, add_to_server, servicer_cls) -> None:
    """Entry point of a stateless service whose servicer takes (ModelClient, Settings)."""
    from factcheck.kit.settings import DEFAULT_PORTS, get_settings
    from factcheck.models.client import ModelClient

    port = DEFAULT_PORTS[name.removeprefix("factcheck-")]
    description = f"Serve {pb2_module.DESCRIPTOR.package}.{service} on FACTCHECK_LISTEN (default [::]:{port})."
    service_argument_parser(name, description).parse_args()
    settings = get_settings()
    configure_logging(settings, name)

    async def serve() -> None:
        client = ModelClient(settings)

        def register(server: grpc.aio.Server) -> list[str]:
            add_to_server(servicer_cls(client, settings), server)
            return [service_full_name(pb2_module, service)]

        await run_server(name, settings, register, on_stop=client.aclose)

    asyncio.run(serve())
