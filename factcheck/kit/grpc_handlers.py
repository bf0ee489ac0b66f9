"""Wrap the behaviour of a gRPC aio method handler, whatever its kind.

Server interceptors (metrics, log context, errors) use this so each of them only says what
to do around one call, as an async context manager, not how the handler kinds are rebuilt.

A behaviour comes in three shapes, and the wrapper keeps the shape, since grpc.aio (and
any interceptor further out) treats them differently:
- unary response: a coroutine function returning the response;
- streaming response, generator style: an async generator function yielding responses;
- streaming response, writer style: a coroutine function calling `context.write` (the
  health service's Watch).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, aclosing, nullcontext
from typing import Any

import grpc

# Given (request, context): an async context manager entered around the behaviour; what it
# yields is the request the behaviour receives (so it may decode or replace the request).
Around = Callable[[Any, grpc.aio.ServicerContext], AbstractAsyncContextManager[Any]]

_KEEP: Any = object()


def _is_writer_style(behaviour: Callable) -> bool:
    return inspect.iscoroutinefunction(behaviour) and not inspect.isasyncgenfunction(behaviour)


def _same(context: Any) -> Any:
    return context


def wrap_behaviour(
    behaviour: Callable, response_streaming: bool, around: Around, wrap_context: Callable[[Any], Any] = _same
) -> Callable:
    """`behaviour` run inside `around`; it receives the request `around` yields and `wrap_context(context)`."""
    if not response_streaming:

        async def unary(request, context):
            async with around(request, context) as request:
                return await behaviour(request, wrap_context(context))

        return unary

    if _is_writer_style(behaviour):

        async def write_stream(request, context):
            async with around(request, context) as request:
                await behaviour(request, wrap_context(context))

        return write_stream

    async def stream(request, context):
        async with around(request, context) as request:
            responses = behaviour(request, wrap_context(context))
            if hasattr(responses, "__aiter__"):
                closing = aclosing(responses) if hasattr(responses, "aclose") else nullcontext()
                async with closing:  # the behaviour's finally blocks run now, even if the caller left
                    async for response in responses:
                        yield response
            else:  # a synchronous iterator (a sync-style handler on an aio server)
                for response in responses:
                    yield response

    return stream


def wrap_handler(
    handler: grpc.RpcMethodHandler | None,
    around: Around,
    *,
    request_deserializer: Callable[[bytes], Any] | None = _KEEP,
    wrap_context: Callable[[Any], Any] = _same,
) -> grpc.RpcMethodHandler | None:
    """`handler` with its behaviour run inside `around`; optionally another request deserializer,
    and a proxy of the servicer context for the behaviour."""
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
    assert behaviour is not None  # (a handler has the behaviour of its kind)
    return factory(
        wrap_behaviour(behaviour, handler.response_streaming, around, wrap_context),
        request_deserializer=handler.request_deserializer if request_deserializer is _KEEP else request_deserializer,
        response_serializer=handler.response_serializer,
    )


async def map_requests(requests: AsyncIterator[Any], convert: Callable[[Any], Any]) -> AsyncIterator[Any]:
    """A request stream with `convert` applied to each message as it arrives."""
    async for request in requests:
        yield convert(request)


def split_method(full_method: str) -> tuple[str, str]:
    """ "/factcheck.v1.CheckerService/Verify" → ("factcheck.v1.CheckerService", "Verify")."""
    service, _, method = full_method.lstrip("/").rpartition("/")
    return service, method
