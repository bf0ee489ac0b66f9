"""What every factcheck gRPC server shares: start, health, reflection, graceful shutdown."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable, Sequence

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from factcheck.settings import Settings

log = logging.getLogger("factcheck.server")

# Set on purpose: content is bounded (50k characters), but model output relayed in
# raw_text fields can be large; 32 MiB keeps a hostile 10 MB answer within bounds.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
CHANNEL_OPTIONS: Sequence[tuple[str, int]] = (
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
)

# Registers the service implementations on a server; returns their full service names.
Registrar = Callable[[grpc.aio.Server], Sequence[str]]


def configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def service_full_name(pb2_module, service: str) -> str:
    return pb2_module.DESCRIPTOR.services_by_name[service].full_name


async def run_server(
    name: str,
    settings: Settings,
    register: Registrar,
    *,
    on_stop: Callable[[], object] | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT, then turn health NOT_SERVING and drain for the grace period.

    Prints "<name> listening on HOST:PORT" once the port is bound, so that a
    supervisor (or a test using port 0) learns the real address.
    """
    server = grpc.aio.server(options=list(CHANNEL_OPTIONS))
    service_names = list(register(server))

    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    reflection.enable_server_reflection(
        [*service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME],
        server,
    )

    address = settings.listen_address(name.removeprefix("factcheck-"))
    port = server.add_insecure_port(address)
    if port == 0:
        raise SystemExit(f"{name}: cannot listen on {address}")
    await server.start()
    for service in ["", *service_names]:
        await health.set(service, health_pb2.HealthCheckResponse.SERVING)
    host = address.rsplit(":", 1)[0] or "0.0.0.0"
    print(f"{name} listening on {host}:{port}", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()

    log.info("%s: shutting down (grace %.1fs)", name, settings.shutdown_grace_s)
    await health.enter_graceful_shutdown()
    await server.stop(settings.shutdown_grace_s)
    if on_stop is not None:
        result = on_stop()
        if asyncio.iscoroutine(result):
            await result
    log.info("%s: stopped", name)


def run_model_service(name: str, pb2_module, service: str, add_to_server, servicer_cls) -> None:
    """Entry point of a stateless service whose servicer takes (ModelClient, Settings)."""
    from factcheck.models.client import ModelClient
    from factcheck.settings import get_settings

    settings = get_settings()
    configure_logging(settings)

    async def serve() -> None:
        client = ModelClient(settings)

        def register(server: grpc.aio.Server) -> list[str]:
            add_to_server(servicer_cls(client, settings), server)
            return [service_full_name(pb2_module, service)]

        await run_server(name, settings, register, on_stop=client.aclose)

    asyncio.run(serve())
