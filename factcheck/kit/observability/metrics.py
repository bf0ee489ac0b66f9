"""Metrics of a factcheck process, and the small API that records them.

Names follow the usual gRPC conventions (grpc_server_*), so existing dashboards work;
the suite's own metrics are prefixed factcheck_. Every process serves its metrics on
FACTCHECK_METRICS_LISTEN (path /metrics) when that is set. Each is also an OpenTelemetry
instrument of the same name (a counter's without Prometheus' "_total", which an exporter to
Prometheus adds back), which the OpenTelemetry SDK exports as OTEL_METRICS_EXPORTER says
once otel.setup has installed it; before that, the API's instruments record nothing.

    record_stage("extract", 1.8)          # the gateway's pipeline, per stage
    record_verdicts(["VERIFIED", "DISPUTED"])
    record_run("COMPLETE")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry import metrics as otel_metrics
from prometheus_client import Counter, Gauge, Histogram, start_http_server

from factcheck.core.domain import TokenUsage

# Model calls and stages take seconds to minutes; RPCs from milliseconds to a whole run.
SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)

RPCS_HANDLED = Counter(
    "grpc_server_handled_total",
    "RPCs completed by this server, by method and status code.",
    ["grpc_service", "grpc_method", "grpc_code"],
)
RPC_SECONDS = Histogram(
    "grpc_server_handling_seconds",
    "Time from an RPC's start to its status, by method.",
    ["grpc_service", "grpc_method"],
    buckets=SECONDS_BUCKETS,
)
MODEL_CALLS = Counter(
    "factcheck_model_calls_total",
    'Model calls by model and outcome ("ok" or the error type).',
    ["model", "outcome"],
)
MODEL_SECONDS = Histogram(
    "factcheck_model_call_seconds",
    "Latency of model calls (retries and waits included), by model.",
    ["model"],
    buckets=SECONDS_BUCKETS,
)
MODEL_TOKENS = Counter(
    "factcheck_model_tokens_total",
    "Tokens of successful model calls by model and kind (prompt, completion).",
    ["model", "kind"],
)
MODEL_LIMIT_WAIT_SECONDS = Counter(
    "factcheck_model_limit_wait_seconds_total",
    "Time calls waited for the client-side rate limits, by provider.",
    ["provider"],
)
STAGE_SECONDS = Histogram(
    "factcheck_stage_duration_seconds",
    "Duration of each pipeline stage of a run (and of whole runs: stage=run).",
    ["stage"],
    buckets=SECONDS_BUCKETS,
)
VERDICTS = Counter("factcheck_verdicts_total", "Consensus verdicts of verified claims.", ["verdict"])
RUNS = Counter("factcheck_runs_total", "Finished runs by final status (COMPLETE, PARTIAL, FAILED).", ["status"])
_runs_in_flight: Gauge | None = None  # the gateway's only: created by track_runs_in_flight
_count_in_flight: Callable[[], int] | None = None
_meter = otel_metrics.get_meter("factcheck")
_instruments: dict[Counter | Histogram, Any] = {}  # each Prometheus metric's OpenTelemetry instrument


def _instrument(metric: Counter | Histogram) -> Any:
    """The OpenTelemetry instrument of a Prometheus metric: same name, description and (histograms) buckets."""
    instrument = _instruments.get(metric)
    if instrument is None:
        [family] = metric.describe()  # a counter's family name is without "_total"
        if isinstance(metric, Counter):
            instrument = _meter.create_counter(family.name, description=family.documentation)
        else:
            instrument = _meter.create_histogram(
                family.name, description=family.documentation, explicit_bucket_boundaries_advisory=SECONDS_BUCKETS
            )
        _instruments[metric] = instrument
    return instrument


def _count(counter: Counter, amount: float = 1.0, **labels: str) -> None:
    counter.labels(**labels).inc(amount)
    _instrument(counter).add(amount, labels)


def _observe(histogram: Histogram, value: float, **labels: str) -> None:
    histogram.labels(**labels).observe(value)
    _instrument(histogram).record(value, labels)


def record_rpc(service: str, method: str, code: str, seconds: float) -> None:
    _count(RPCS_HANDLED, grpc_service=service, grpc_method=method, grpc_code=code)
    _observe(RPC_SECONDS, seconds, grpc_service=service, grpc_method=method)


def record_model_call(model: str, outcome: str, seconds: float, usage: TokenUsage | None) -> None:
    _count(MODEL_CALLS, model=model, outcome=outcome)
    _observe(MODEL_SECONDS, seconds, model=model)
    if usage is not None:
        _count(MODEL_TOKENS, usage.prompt_tokens, model=model, kind="prompt")
        _count(MODEL_TOKENS, usage.completion_tokens, model=model, kind="completion")


def record_limit_wait(provider: str, seconds: float) -> None:
    _count(MODEL_LIMIT_WAIT_SECONDS, seconds, provider=provider or "default")


def record_stage(stage: str, seconds: float) -> None:
    """One stage of a run took `seconds` (generate, extract, verify, report, title, run)."""
    _observe(STAGE_SECONDS, max(seconds, 0.0), stage=stage)


def record_verdicts(verdicts: Iterable[str]) -> None:
    """Count consensus verdicts, by name ("VERIFIED", "DISPUTED", "UNVERIFIABLE")."""
    for verdict in verdicts:
        _count(VERDICTS, verdict=verdict.removeprefix("VERDICT_"))


def record_run(status: str) -> None:
    _count(RUNS, status=status.removeprefix("MESSAGE_STATUS_"))


def track_runs_in_flight(count: Callable[[], int]) -> None:
    """factcheck_runs_in_flight reads `count()` at each scrape (and each OpenTelemetry collection)."""
    global _runs_in_flight, _count_in_flight
    if _runs_in_flight is None:
        _runs_in_flight = Gauge("factcheck_runs_in_flight", "Runs the gateway is carrying out now.")
        [family] = _runs_in_flight.describe()
        _meter.create_observable_gauge(family.name, [_observe_in_flight], description=family.documentation)
    _count_in_flight = count
    _runs_in_flight.set_function(count)


def _observe_in_flight(_options: object) -> list[otel_metrics.Observation]:
    return [otel_metrics.Observation(_count_in_flight())] if _count_in_flight is not None else []


def serve_metrics(listen: str) -> tuple[str, int]:
    """Serve /metrics on "host:port" in a daemon thread; returns the bound host and port."""
    host, _, port = listen.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"
    httpd, _ = start_http_server(int(port), addr=host)
    return host, httpd.server_port


LEDGER_COST_USD = Counter(
    "factcheck_model_cost_usd_total",
    "What the gateway's runs spent on model calls (ledger rows, at the prices of FACTCHECK_MODEL_PRICES), by model and stage.",
    ["model", "stage"],
)
LEDGER_TOKENS = Counter(
    "factcheck_ledger_tokens_total",
    "Tokens of the runs' model calls as the ledger recorded them, by model and stage.",
    ["model", "stage"],
)
CACHE_LOOKUPS = Counter(
    "factcheck_cache_lookups_total",
    'Verification-cache lookups by kind (verify: per claim and model; extract) and result ("hit", "miss").',
    ["kind", "result"],
)


def record_ledger_call(model: str, stage: str, tokens: int, cost_usd: float) -> None:
    """A ledgered model call of a run (the gateway's)."""
    _count(LEDGER_COST_USD, cost_usd, model=model, stage=stage)
    _count(LEDGER_TOKENS, tokens, model=model, stage=stage)


def record_cache_lookups(kind: str, hits: int, misses: int) -> None:
    """The hit rate is hits / (hits + misses) of factcheck_cache_lookups_total."""
    if hits:
        _count(CACHE_LOOKUPS, hits, kind=kind, result="hit")
    if misses:
        _count(CACHE_LOOKUPS, misses, kind=kind, result="miss")
