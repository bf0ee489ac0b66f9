"""Client channels, configured once: message limits, TLS, tracing, balancing, tokens.

Services reach each other through `open_channel`; the `factcheck` command reaches the
gateway through `open_gateway_channel` (synchronous, with the bearer token).
"""

from __future__ import annotations

import json

import grpc

from factcheck.kit.grpc_options import CHANNEL_OPTIONS
from factcheck.kit.observability import tracing
from factcheck.kit.security import tls
from factcheck.kit.security.auth import SyncTokenInterceptor
from factcheck.kit.settings import Settings

# Calls to the stateless services are idempotent: one that fails because its replica is gone
# (UNAVAILABLE before any answer) is tried again, on another replica when there is one, within the
# call's deadline. An UNAVAILABLE a service answered itself is never retried (error_interceptor.NO_RETRY).
STATELESS_SERVICES = ("factcheck.v1.ExtractorService", "factcheck.v1.CheckerService", "factcheck.v1.ReporterService")
RETRY_POLICY = {
    "name": [{"service": name} for name in STATELESS_SERVICES],
    "retryPolicy": {
        "maxAttempts": 3,
        "initialBackoff": "0.1s",
        "maxBackoff": "1s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE"],
    },
}


def service_config(*, round_robin: bool) -> str:
    """The channels' service config: the retry policy and, with several replicas behind one target
    (a DNS name, an ipv4: list), round_robin to spread calls over all of them."""
    config: dict[str, object] = {"methodConfig": [RETRY_POLICY]}
    if round_robin:
        config["loadBalancingConfig"] = [{"round_robin": {}}]
    return json.dumps(config)


def _options(settings: Settings, round_robin: bool) -> list[tuple[str, object]]:
    return [
        *CHANNEL_OPTIONS,
        *tls.channel_options(settings),
        ("grpc.service_config", service_config(round_robin=round_robin)),
    ]


def open_channel(target: str, settings: Settings, *, round_robin: bool = False) -> grpc.aio.Channel:
    """An aio channel from one service to another (TLS when FACTCHECK_TLS is on)."""
    options = _options(settings, round_robin)
    interceptors = tracing.client_interceptors()
    if settings.tls:
        return grpc.aio.secure_channel(
            target, tls.channel_credentials(settings), options=options, interceptors=interceptors
        )
    return grpc.aio.insecure_channel(target, options=options, interceptors=interceptors)


# A client following a run reconnects as soon as a restarted (or another) gateway listens: gRPC's own
# reconnect backoff would grow to minutes; the CLI bounds how long it keeps trying (cli/factcheck_cli/follow.py).
CLIENT_RECONNECT_OPTIONS = (("grpc.initial_reconnect_backoff_ms", 250), ("grpc.max_reconnect_backoff_ms", 2000))


def open_gateway_channel(settings: Settings, target: str | None = None) -> grpc.Channel:
    """A synchronous channel to the gateway for clients: TLS when on, the gateway token when set."""
    target = target or settings.gateway_target
    options = [*_options(settings, round_robin=False), *CLIENT_RECONNECT_OPTIONS]
    if settings.tls:
        channel = grpc.secure_channel(target, tls.channel_credentials(settings), options=options)
    else:
        channel = grpc.insecure_channel(target, options=options)
    if settings.gateway_token is not None and settings.gateway_token.get_secret_value():
        channel = grpc.intercept_channel(channel, SyncTokenInterceptor(settings.gateway_token.get_secret_value()))
    return channel
