"""OpenTelemetry's SDK, set up by its own environment-driven configuration when telemetry is asked for.

Code makes spans and records metrics through OpenTelemetry's API (`trace.get_tracer`, the instruments in
metrics.py), which records nothing until `setup` installs the SDK. `setup` hands the whole configuration to the
SDK's configurator (`opentelemetry.sdk._configuration`, what `opentelemetry-instrument` runs), which reads
OpenTelemetry's standard environment: `OTEL_TRACES_EXPORTER` and `OTEL_METRICS_EXPORTER` (`otlp`, `console`,
`none`, comma-separated lists), `OTEL_EXPORTER_OTLP_PROTOCOL` (`grpc` or `http/protobuf`, also per signal),
`OTEL_EXPORTER_OTLP_(TRACES_|METRICS_)ENDPOINT`, headers, certificates, timeouts and compression,
`OTEL_TRACES_SAMPLER(_ARG)`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*` and `OTEL_METRIC_EXPORT_INTERVAL`.

The suite adds three rules of its own. Telemetry is on when an exporter is named or a collector is
(`FACTCHECK_OTLP_ENDPOINT` or an `OTEL_EXPORTER_OTLP_*ENDPOINT`); then a signal whose exporter variable is unset
gets the specification's default, `otlp` (as opentelemetry-distro sets it); with neither, nothing is sent and
neither the SDK nor an exporter is imported (the suite runs offline by default). `FACTCHECK_OTLP_ENDPOINT` wins
over the `OTEL_EXPORTER_OTLP_*ENDPOINT` variables (as an endpoint given in code does in the SDK): it is the base
URL of an OTLP collector, to which the HTTP exporters add `/v1/traces` and `/v1/metrics`. The service name is the
process's (factcheck-gateway, ...) unless `OTEL_SERVICE_NAME` or a `service.name` in `OTEL_RESOURCE_ATTRIBUTES`
names it. `OTEL_SDK_DISABLED=true` leaves the SDK out, as if nothing were configured.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from opentelemetry import metrics, trace

from factcheck.kit.settings import Settings

# The variables that name an OTLP collector (FACTCHECK_OTLP_ENDPOINT aside).
ENDPOINT_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)
# Each signal the suite emits, by the variable that names its exporters.
EXPORTER_VARIABLES = {"traces": "OTEL_TRACES_EXPORTER", "metrics": "OTEL_METRICS_EXPORTER"}
# The OTLP exporters' entry points (opentelemetry_<signal>_exporter), and where their HTTP variant posts.
_OTLP_ENTRY_POINTS = ("otlp", "otlp_proto_grpc", "otlp_proto_http")
_HTTP_PATHS = {"traces": "/v1/traces", "metrics": "/v1/metrics"}

_signals: frozenset[str] | None = None  # the signals exported, once set up


def _disabled(environ: Mapping[str, str]) -> bool:
    return environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def exporters(settings: Settings, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """Each signal's exporter names as the SDK will read them ("none" for a signal sent nowhere)."""
    collector = bool(settings.otlp_endpoint) or any(environ.get(name) for name in ENDPOINT_VARIABLES)
    named = {}
    for signal, variable in EXPORTER_VARIABLES.items():
        value = environ.get(variable, "").strip()
        named[signal] = value or ("otlp" if collector else "none")
    return named


def signals(settings: Settings, environ: Mapping[str, str] = os.environ) -> frozenset[str]:
    """The signals to export: none when the SDK is disabled or nothing is configured."""
    if _disabled(environ):
        return frozenset()
    return frozenset(signal for signal, names in exporters(settings, environ).items() if names.lower() != "none")


def traces_enabled() -> bool:
    return _signals is not None and "traces" in _signals


def setup(settings: Settings, service_name: str) -> None:
    """Install OpenTelemetry's SDK as its environment says (nothing when telemetry is not configured)."""
    global _signals
    wanted = signals(settings)
    if not wanted or _signals is not None:
        return
    try:
        from opentelemetry.instrumentation.grpc import aio_server_interceptor  # noqa: F401 - checks it is there
        from opentelemetry.sdk._configuration import _OTelSDKConfigurator
        from opentelemetry.sdk.resources import SERVICE_NAME, OTELResourceDetector
    except ImportError as error:
        raise SystemExit(
            f"{_configured_by(settings)}, but OpenTelemetry's SDK is not installed ({error.name}): {_HINT}"
        )

    # The specification's default exporter for a signal left unset (or empty); the SDK reads the variables itself.
    for signal, names in exporters(settings).items():
        os.environ[EXPORTER_VARIABLES[signal]] = names
    # OTEL_SERVICE_NAME, or a service.name in OTEL_RESOURCE_ATTRIBUTES, names the service instead of the process.
    from_environment = OTELResourceDetector().detect().attributes.get(SERVICE_NAME)
    try:
        _OTelSDKConfigurator().configure(
            resource_attributes={SERVICE_NAME: from_environment or service_name},
            exporter_args_map=_endpoint_arguments(settings.otlp_endpoint) if settings.otlp_endpoint else None,
        )
    except (RuntimeError, ValueError) as error:  # an unknown exporter or protocol, a missing exporter package
        raise SystemExit(f"OpenTelemetry: {error} ({_configured_by(settings)}): {_HINT}") from None
    _signals = wanted


_HINT = (
    "OTEL_TRACES_EXPORTER and OTEL_METRICS_EXPORTER take otlp, console or none, OTEL_EXPORTER_OTLP_PROTOCOL grpc or "
    "http/protobuf, and the exporters come with pip install 'factcheck[otel]'"
)


def _configured_by(settings: Settings) -> str:
    named = [name for name in (*EXPORTER_VARIABLES.values(), *ENDPOINT_VARIABLES) if os.environ.get(name)]
    if settings.otlp_endpoint:
        named.insert(0, "FACTCHECK_OTLP_ENDPOINT")
    return f"telemetry is configured ({', '.join(named)})"


def _endpoint_arguments(endpoint: str) -> dict[type, dict[str, Any]]:
    """FACTCHECK_OTLP_ENDPOINT given to whichever OTLP exporter the SDK picks: as it is to the gRPC ones, with
    the signal's path to the HTTP ones (as the SDK does with OTEL_EXPORTER_OTLP_ENDPOINT)."""
    from importlib.metadata import entry_points

    arguments: dict[type, dict[str, Any]] = {}
    for signal in EXPORTER_VARIABLES:
        for entry_point in entry_points(group=f"opentelemetry_{signal}_exporter"):
            if entry_point.name not in _OTLP_ENTRY_POINTS:
                continue
            http = entry_point.name.endswith("http")
            url = endpoint.rstrip("/") + _HTTP_PATHS[signal] if http else endpoint
            arguments[entry_point.load()] = {"endpoint": url}
    return arguments


def shutdown() -> None:
    """Export what is still queued, spans and metrics (at the end of a graceful shutdown)."""
    global _signals
    if _signals is None:
        return
    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        stop = getattr(provider, "shutdown", None)
        if stop is not None:
            stop()
    _signals = None
