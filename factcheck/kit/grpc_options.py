"""gRPC options set on purpose, in one place: message size limits and connection age."""

from __future__ import annotations

from collections.abc import Sequence

from factcheck.kit.settings import Settings

# Content is bounded (50k characters), but model output relayed in raw_text fields can be
# large; 32 MiB keeps a hostile 10 MB answer within bounds. Every server and channel uses it.
MAX_MESSAGE_BYTES = 32 * 1024 * 1024
CHANNEL_OPTIONS: Sequence[tuple[str, int]] = (
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
)


def server_options(settings: Settings) -> list[tuple[str, int]]:
    """Message limits, an exclusive port, and a maximum connection age so that clients re-resolve
    their targets.

    gRPC sets SO_REUSEPORT by default, which lets a second server bind the same port and the
    kernel split calls between them; a factcheck server owns its port or fails to start.
    A client whose connection is closed (GOAWAY) resolves its target again, so a checker
    replica added behind a DNS name starts receiving calls within max_connection_age_s.
    """
    options = [*CHANNEL_OPTIONS, ("grpc.so_reuseport", 0)]
    if settings.max_connection_age_s > 0:
        options += [
            ("grpc.max_connection_age_ms", int(settings.max_connection_age_s * 1000)),
            ("grpc.max_connection_age_grace_ms", int(settings.connection_age_grace_s() * 1000)),
        ]
    return options
