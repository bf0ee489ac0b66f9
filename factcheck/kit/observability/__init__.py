"""Observability of every process: Prometheus and OpenTelemetry metrics, OpenTelemetry traces, structured logs.

`metrics` holds the metric definitions and the small `record_*` API the services call; `otel` sets up
OpenTelemetry's SDK by its own environment-driven configuration when that environment names a collector
or an exporter (code makes its spans and records its metrics through OpenTelemetry's API, which records
nothing without it); `tracing` adds the gRPC instrumentation and gives the trace ids; `logs` sets up text
or JSON logging with the run's message_id and trace id; `interceptors` attaches the RPC metrics and log
context to every RPC (opentelemetry-instrumentation-grpc makes RPC spans, not these metrics). The
gateway's pipeline records stage durations, verdicts and run outcomes itself, so runs whose caller went
away are counted too.
"""
