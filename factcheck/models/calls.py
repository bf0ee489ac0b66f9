"""The model calls one RPC made, reported to its caller in the `x-factcheck-model-calls-bin`
trailer (every outcome, failures included), so the gateway's ledger records every call.

`ModelCallsServerInterceptor` opens a list per RPC; `ModelClient` appends each call it ends
(`record`); the list goes out as trailing metadata when the RPC ends, and with the error
status when it fails (`factcheck.serving.error_interceptor.abort_with` adds `trailer()`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar

import grpc

from factcheck.kit.grpc_handlers import wrap_handler
from factcheck.v1 import usage_pb2

MODEL_CALLS_METADATA = "x-factcheck-model-calls-bin"

_calls: ContextVar[list[usage_pb2.ModelCall] | None] = ContextVar("factcheck_model_calls", default=None)


def record(call: usage_pb2.ModelCall) -> None:
    """One finished model call of the current RPC (nothing outside an RPC)."""
    calls = _calls.get()
    if calls is not None:
        calls.append(call)


@contextmanager
def collected() -> Iterator[list[usage_pb2.ModelCall]]:
    """The model calls that end inside the block, as an RPC's trailer would carry them (outside an RPC)."""
    found: list[usage_pb2.ModelCall] = []
    token = _calls.set(found)
    try:
        yield found
    finally:
        _calls.reset(token)


def trailer() -> tuple[tuple[str, bytes], ...]:
    """The current RPC's calls as trailing metadata (empty when it made none)."""
    calls = _calls.get()
    if not calls:
        return ()
    return ((MODEL_CALLS_METADATA, usage_pb2.ModelCalls(calls=calls).SerializeToString()),)


def calls_from_metadata(metadata) -> list[usage_pb2.ModelCall] | None:
    """The calls a service reported in its trailing metadata; None when it reported nothing.
    A trailer that does not decode counts as nothing reported (it is the service's own, but
    a proxy could mangle it)."""
    for key, value in metadata or ():
        if key == MODEL_CALLS_METADATA and isinstance(value, bytes):
            try:
                return list(usage_pb2.ModelCalls.FromString(value).calls)
            except Exception:  # DecodeError
                return None
    return None


class ModelCallsServerInterceptor(grpc.aio.ServerInterceptor):
    """Collects each RPC's model calls and sends them in its trailing metadata."""

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)

        @asynccontextmanager
        async def collecting(request, context):
            token = _calls.set([])
            try:
                yield request
                if metadata := trailer():
                    context.set_trailing_metadata(metadata)
            finally:
                try:
                    _calls.reset(token)
                except ValueError:  # a stream finalised in another context: that context ends anyway
                    pass

        return wrap_handler(handler, collecting)
