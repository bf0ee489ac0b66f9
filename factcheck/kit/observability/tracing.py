"""OpenTelemetry traces: the SDK and its OTLP exporter, set up when an endpoint is configured.

Code that makes spans uses the OpenTelemetry API itself (`trace.get_tracer(...)`): until `setup`
installs the SDK, the API hands out spans that record nothing. `setup` does so when an OTLP/gRPC
endpoint is configured: `FACTCHECK_OTLP_ENDPOINT`, else OpenTelemetry's own
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` (`FACTCHECK_OTLP_ENDPOINT`
wins: it is handed to the exporter, which reads the other two only when it gets none). The SDK
reads the rest of OpenTelemetry's standard environment itself: `OTEL_SERVICE_NAME` and
`OTEL_RESOURCE_ATTRIBUTES` (the service name defaults to the process's, e.g. factcheck-gateway),
`OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`, `OTEL_BSP_*`, the exporter's
`OTEL_EXPORTER_OTLP_*` headers, certificates and timeouts, and `OTEL_SDK_DISABLED`.

With tracing on, every gRPC server and the gateway's channels carry the W3C trace context in
metadata (opentelemetry-instrumentation-grpc's interceptors), so a run's Run call, its downstream
calls and the model calls they make (span "model.complete") form one trace. Without it, neither the
SDK, the exporter nor the gRPC instrumentation is imported, and no interceptor is added.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from opentelemetry import trace

from factcheck.kit.settings import Settings

# OpenTelemetry's standard variables that name the trace collector, when FACTCHECK_OTLP_ENDPOINT does not.
STANDARD_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")

_provider: Any = None  # the SDK TracerProvider once set up
# Probes and grpcurl would otherwise fill the traces.
_UNTRACED_SERVICES = ("grpc.health.v1", "grpc.reflection")


def enabled() -> bool:
    return _provider is not None


def configured(settings: Settings, environ: Mapping[str, str] = os.environ) -> bool:
    """Whether an OTLP endpoint is configured, by FACTCHECK_OTLP_ENDPOINT or OpenTelemetry's variables."""
    return bool(settings.otlp_endpoint) or any(environ.get(name) for name in STANDARD_ENDPOINT_VARIABLES)


def setup(settings: Settings, service_name: str) -> None:
    """Export this process's spans over OTLP/gRPC (if an endpoint is configured)."""
    global _provider
    if not configured(settings) or _provider is not None:
        return
    try:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.grpc import aio_server_interceptor  # noqa: F401 - checks it is there
        from opentelemetry.sdk.resources import SERVICE_NAME, OTELResourceDetector, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as error:
        raise SystemExit(
            "an OTLP endpoint is set (FACTCHECK_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT), but OpenTelemetry's "
            f"SDK is not installed ({error.name}): pip install 'factcheck[otel]'"
        ) from None

    # OTEL_SERVICE_NAME, or a service.name in OTEL_RESOURCE_ATTRIBUTES, names the service instead of the process.
    from_environment = OTELResourceDetector().detect().attributes.get(SERVICE_NAME)
    resource = Resource.create({SERVICE_NAME: from_environment or service_name})
    # No sampler given: the SDK's own, from OTEL_TRACES_SAMPLER (by default parentbased_always_on).
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=settings.otlp_endpoint or None)))
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


def current_ids() -> tuple[str, str] | None:
    """(trace_id, span_id) in hex of the current span, or None when there is none (or tracing is off)."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"
