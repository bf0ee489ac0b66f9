"""OpenTelemetry traces across the services: the gRPC instrumentation and the current trace's ids.

Code that makes spans uses the OpenTelemetry API itself (`trace.get_tracer(...)`): until otel.setup installs
the SDK (when OpenTelemetry's environment asks for traces or names a collector), the API hands out spans that
record nothing. With traces on, every gRPC server and the gateway's channels carry the W3C trace context in
metadata (opentelemetry-instrumentation-grpc's interceptors), so a run's Run call, its downstream calls and the
model calls they make (span "model.complete") form one trace. Without it, the gRPC instrumentation is not
imported and no interceptor is added.
"""

from __future__ import annotations

from opentelemetry import trace

from factcheck.kit.observability import otel

# Probes and grpcurl would otherwise fill the traces.
_UNTRACED_SERVICES = ("grpc.health.v1", "grpc.reflection")


def enabled() -> bool:
    """Whether spans are exported (OTEL_TRACES_EXPORTER other than none, the SDK set up)."""
    return otel.traces_enabled()


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


def current_ids() -> tuple[str, str] | None:
    """(trace_id, span_id) in hex of the current span, or None when there is none (or tracing is off)."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"
