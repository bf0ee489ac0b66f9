"""Observability of every process: Prometheus metrics, OpenTelemetry traces, structured logs.

`metrics` holds the metric definitions and the small `record_*` API the services call;
`tracing` sets up OpenTelemetry's SDK when an OTLP endpoint is configured (code makes its spans
through OpenTelemetry's API, which records nothing without it); `logs` sets up text or JSON
logging with the run's message_id and trace id; `interceptors` attaches the RPC metrics and log
context to every RPC (opentelemetry-instrumentation-grpc makes RPC spans, not these metrics). The gateway's pipeline records stage durations, verdicts and run
outcomes itself, so runs whose caller went away are counted too.
"""
