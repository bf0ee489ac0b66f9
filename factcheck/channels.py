"""Client channels, configured once: message limits, TLS, tracing, balancing, tokens.

Services reach each other through `open_channel`; the `factcheck` command reaches the
gateway through `open_gateway_channel` (synchronous, with the bearer token).
"""

from __future__ import annotations

import json

import grpc

from factcheck.grpc_options import CHANNEL_OPTIONS
from factcheck.observability import tracing
from factcheck.security import tls
from factcheck.security.auth import SyncTokenInterceptor
from factcheck.settings import Settings

# Several replicas behind one target (a DNS name, an ipv4: list): spread calls over all of them.
ROUND_ROBIN = ("grpc.service_config", json.dumps({"loadBalancingConfig": [{"round_robin": {}}]}))


def _options(settings: Settings, round_robin: bool) -> list[tuple[str, object]]:
    return [*CHANNEL_OPTIONS, *tls.channel_options(settings), *([ROUND_ROBIN] if round_robin else [])]


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
# reconnect backoff would grow to minutes; the CLI bounds how long it keeps trying (factcheck/cli/follow.py).
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
