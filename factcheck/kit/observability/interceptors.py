"""gRPC interceptors that observe every call: RPC metrics, and the run's message_id for logs."""

from __future__ import annotations

import asyncio
import time
from contextlib import asynccontextmanager

import grpc

from factcheck.kit.grpc_handlers import split_method, wrap_handler
from factcheck.kit.observability import metrics
from factcheck.kit.observability.context import (
    MESSAGE_ID_METADATA,
    close_run_context,
    current_message_id,
    message_id_from_metadata,
    open_run_context,
)


def status_name(context: grpc.aio.ServicerContext, error: BaseException | None) -> str:
    """The status code an RPC ended with, from how its behaviour ended."""
    if isinstance(error, (asyncio.CancelledError, GeneratorExit)):  # the caller went away
        return "CANCELLED"
    if error is not None and not isinstance(error, grpc.aio.AbortError):
        return "UNKNOWN"  # an unhandled exception
    code = context.code()
    if code is None:
        return "OK" if error is None else "UNKNOWN"
    return code.name if isinstance(code, grpc.StatusCode) else grpc.StatusCode(code).name


class ServerMetricsInterceptor(grpc.aio.ServerInterceptor):
    """grpc_server_handled_total and grpc_server_handling_seconds for every RPC.

    Prometheus metrics of their own: opentelemetry-instrumentation-grpc, which makes the RPC spans,
    records no metrics, and OpenTelemetry's RPC metrics would have other names and labels
    (rpc.server.duration by rpc.method, rpc.grpc.status_code) than these documented ones."""

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        service, method = split_method(handler_call_details.method)

        @asynccontextmanager
        async def measured(request, context):
            started, error = time.monotonic(), None
            try:
                yield request
            except BaseException as exc:
                error = exc
                raise
            finally:
                metrics.record_rpc(service, method, status_name(context, error), time.monotonic() - started)

        return wrap_handler(handler, measured)


class MessageIdServerInterceptor(grpc.aio.ServerInterceptor):
    """Gives each call its own RunContext, holding the caller's x-factcheck-message-id if any."""

    async def intercept_service(self, continuation, handler_call_details):
        handler = await continuation(handler_call_details)
        message_id = message_id_from_metadata(handler_call_details.invocation_metadata)

        @asynccontextmanager
        async def in_context(request, context):
            token = open_run_context(message_id)
            try:
                yield request
            finally:
                close_run_context(token)

        return wrap_handler(handler, in_context)


class RunMetadataStub:
    """A stub whose calls carry the calling run's message_id in their metadata.

    Added at the call site, in the run's own task: aio client interceptors run in a task
    of their own, where the run's task name is not visible.
    """

    def __init__(self, stub: object) -> None:
        self._stub = stub

    def __getattr__(self, name: str):
        method = getattr(self._stub, name)

        def call(request, *args, metadata=None, **kwargs):
            message_id = current_message_id()
            if message_id:
                metadata = [*(metadata or ()), (MESSAGE_ID_METADATA, message_id)]
            return method(request, *args, metadata=metadata, **kwargs)

        return call
