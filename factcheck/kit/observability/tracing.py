"""OpenTelemetry traces, only when FACTCHECK_OTLP_ENDPOINT is set.

With no endpoint nothing here imports OpenTelemetry: the interceptor lists are empty and
`span` is a no-op. With one, every gRPC server and the gateway's channels carry the W3C
trace context in metadata, so a run's Run call, its downstream calls and the model calls
they make (span "model.complete") form one trace, exported over OTLP/gRPC in batches.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from factcheck.kit.settings import Settings

_provider: Any = None  # the SDK TracerProvider once set up
# Probes and grpcurl would otherwise fill the traces.
_UNTRACED_SERVICES = ("grpc.health.v1", "grpc.reflection")


def enabled() -> bool:
    return _provider is not None


def setup(settings: Settings, service_name: str) -> None:
    """Export this process's spans to the OTLP endpoint (if one is configured)."""
    global _provider
    if not settings.otlp_endpoint or _provider is not None:
        return
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.grpc import aio_server_interceptor  # noqa: F401 - checks it is there
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as error:
        raise SystemExit(
            f"FACTCHECK_OTLP_ENDPOINT is set, but OpenTelemetry is not installed ({error.name}): "
            "pip install 'factcheck[otel]'"
        ) from None

    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.otlp_endpoint)))
    trace.set_tracer_provider(provider)
    _provider = provider


def shutdown() -> None:
    """Flush the spans still queued (at the end of a graceful shutdown)."""
    global _provider
    if _provider is not None:
        _provider.shutdown()
        _provider = None


def _untraced_filter():
    from opentelemetry.instrumentation.grpc import filters

    return filters.negate(filters.any_of(*(filters.service_prefix(name) for name in _UNTRACED_SERVICES)))


def server_interceptors() -> list:
    """Continue the caller's trace in a server span per RPC (empty when tracing is off)."""
    if not enabled():
        return []
    from opentelemetry.instrumentation.grpc import aio_server_interceptor

    return [aio_server_interceptor(filter_=_untraced_filter())]


def client_interceptors() -> list:
    """A client span per outgoing RPC, with the trace context in its metadata (empty when off)."""
    if not enabled():
        return []
    from opentelemetry.instrumentation.grpc import aio_client_interceptors

    return aio_client_interceptors()


class _NoSpan:
    def set_attribute(self, key: str, value: Any) -> None:
        pass

    def set_error(self, description: str) -> None:
        pass


class _Span:
    def __init__(self, span: Any) -> None:
        self._span = span

    def set_attribute(self, key: str, value: Any) -> None:
        self._span.set_attribute(key, value)

    def set_error(self, description: str) -> None:
        from opentelemetry.trace import Status, StatusCode

        self._span.set_status(Status(StatusCode.ERROR, description))


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[_NoSpan | _Span]:
    """A child span of the current one (a no-op when tracing is off)."""
    if not enabled():
        yield _NoSpan()
        return
    from opentelemetry import trace

    with trace.get_tracer("factcheck").start_as_current_span(name, attributes=attributes) as current:
        yield _Span(current)


def current_ids() -> tuple[str, str] | None:
    """(trace_id, span_id) in hex of the current span, or None when there is none."""
    if not enabled():
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"
