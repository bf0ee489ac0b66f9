"""Prometheus metrics of a factcheck process, and the small API that records them.

Names follow the usual gRPC conventions (grpc_server_*), so existing dashboards work;
the suite's own metrics are prefixed factcheck_. Every process serves its metrics on
FACTCHECK_METRICS_LISTEN (path /metrics) when that is set.

    record_stage("extract", 1.8)          # the gateway's pipeline, per stage
    record_verdicts(["VERIFIED", "DISPUTED"])
    record_run("COMPLETE")
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

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


def record_rpc(service: str, method: str, code: str, seconds: float) -> None:
    RPCS_HANDLED.labels(service, method, code).inc()
    RPC_SECONDS.labels(service, method).observe(seconds)


def record_model_call(model: str, outcome: str, seconds: float, usage: TokenUsage | None) -> None:
    MODEL_CALLS.labels(model, outcome).inc()
    MODEL_SECONDS.labels(model).observe(seconds)
    if usage is not None:
        MODEL_TOKENS.labels(model, "prompt").inc(usage.prompt_tokens)
        MODEL_TOKENS.labels(model, "completion").inc(usage.completion_tokens)


def record_limit_wait(provider: str, seconds: float) -> None:
    MODEL_LIMIT_WAIT_SECONDS.labels(provider or "default").inc(seconds)


def record_stage(stage: str, seconds: float) -> None:
    """One stage of a run took `seconds` (generate, extract, verify, report, title, run)."""
    STAGE_SECONDS.labels(stage).observe(max(seconds, 0.0))


def record_verdicts(verdicts: Iterable[str]) -> None:
    """Count consensus verdicts, by name ("VERIFIED", "DISPUTED", "UNVERIFIABLE")."""
    for verdict in verdicts:
        VERDICTS.labels(verdict.removeprefix("VERDICT_")).inc()


def record_run(status: str) -> None:
    RUNS.labels(status.removeprefix("MESSAGE_STATUS_")).inc()


def track_runs_in_flight(count: Callable[[], int]) -> None:
    """factcheck_runs_in_flight reads `count()` at each scrape."""
    global _runs_in_flight
    if _runs_in_flight is None:
        _runs_in_flight = Gauge("factcheck_runs_in_flight", "Runs the gateway is carrying out now.")
    _runs_in_flight.set_function(count)


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
    LEDGER_COST_USD.labels(model, stage).inc(cost_usd)
    LEDGER_TOKENS.labels(model, stage).inc(tokens)


def record_cache_lookups(kind: str, hits: int, misses: int) -> None:
    """The hit rate is hits / (hits + misses) of factcheck_cache_lookups_total."""
    if hits:
        CACHE_LOOKUPS.labels(kind, "hit").inc(hits)
    if misses:
        CACHE_LOOKUPS.labels(kind, "miss").inc(misses)
