"""Wrap the behaviour of a gRPC aio method handler, whatever its streaming kind.

Server interceptors (metrics, auth, log context) use this so each of them only says what
to do around one call, not how the four handler kinds are rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable

import grpc

# Given (behaviour, response_streaming), the new behaviour.
BehaviourWrapper = Callable[[Callable, bool], Callable]


def wrap_handler(handler: grpc.RpcMethodHandler | None, wrap: BehaviourWrapper) -> grpc.RpcMethodHandler | None:
    if handler is None:
        return None
    if handler.request_streaming and handler.response_streaming:
        behaviour, factory = handler.stream_stream, grpc.stream_stream_rpc_method_handler
    elif handler.request_streaming:
        behaviour, factory = handler.stream_unary, grpc.stream_unary_rpc_method_handler
    elif handler.response_streaming:
        behaviour, factory = handler.unary_stream, grpc.unary_stream_rpc_method_handler
    else:
        behaviour, factory = handler.unary_unary, grpc.unary_unary_rpc_method_handler
    return factory(
        wrap(behaviour, handler.response_streaming),
        request_deserializer=handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


def split_method(full_method: str) -> tuple[str, str]:
    """ "/factcheck.v1.CheckerService/Verify" → ("factcheck.v1.CheckerService", "Verify")."""
    service, _, method = full_method.lstrip("/").rpartition("/")
    return service, method
