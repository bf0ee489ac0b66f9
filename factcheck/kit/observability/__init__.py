"""Observability of every process: Prometheus metrics, OpenTelemetry traces, structured logs.

`metrics` holds the metric definitions and the small `record_*` API the services call;
`tracing` loads OpenTelemetry only when an OTLP endpoint is configured; `logs` sets up text
or JSON logging with the run's message_id and trace id; `interceptors` attaches metrics and
log context to every RPC. The gateway's pipeline records stage durations, verdicts and run
outcomes itself, so runs whose caller went away are counted too.
"""
