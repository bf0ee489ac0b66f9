"""Metrics on every service, one trace per run across all services, JSON logs with message_id and trace id.

One suite runs with everything on: metrics servers, JSON logs, and OTLP export to an
in-process collector.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time

import grpc
import pytest

from factcheck.kit.observability.context import bind_message_id, close_run_context, current_message_id, open_run_context
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from tests.conftest import content_request, suite_environment
from tests.fake_otlp_collector import FakeCollector
from tests.ops_support import metrics_url, sample_value, scrape
from tests.processes import ROOT, start_suite

pytestmark = pytest.mark.e2e

SERVICES = ("gateway", "extractor", "checker", "reporter")


@pytest.fixture(scope="module")
def collector():
    with FakeCollector() as running:
        yield running


@pytest.fixture(scope="module")
def observed(fake_models, collector, tmp_path_factory):
    """The suite with metrics, JSON logs and tracing on; and the events of one run through it."""
    env = {
        **suite_environment(fake_models, f"sqlite:///{tmp_path_factory.mktemp('db') / 'fc.db'}"),
        "FACTCHECK_METRICS_LISTEN": "127.0.0.1:0",
        "FACTCHECK_LOG_FORMAT": "json",
        "FACTCHECK_OTLP_ENDPOINT": collector.endpoint,
        "OTEL_BSP_SCHEDULE_DELAY": "100",  # export spans within 0.1 s
    }
    suite = start_suite(env)
    fake_models.reset()
    try:
        with grpc.insecure_channel(suite.gateway_target) as channel:
            gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
            events = [response.event for response in gateway.Run(content_request(), timeout=60)]
            with pytest.raises(grpc.RpcError):
                gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=""), timeout=10)
        assert events[-1].WhichOneof("event") == "complete", suite.logs()
        yield suite, events
    finally:
        suite.stop()


def _wait_for(condition, timeout_s: float = 10.0):
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def test_every_service_serves_rpc_metrics_by_method_and_code(observed):
    suite, _ = observed

    def refused_get_result_counted() -> str | None:
        # The client may read the refusal a moment before the server's interceptor has counted it (a CI
        # run on a loaded machine scraped in between): wait for the count, then check every figure.
        text = scrape(metrics_url(suite.services["gateway"]))
        counted = sample_value(text, "grpc_server_handled_total", grpc_method="GetResult", grpc_code="INVALID_ARGUMENT")
        return text if counted else None

    gateway = _wait_for(refused_get_result_counted) or scrape(metrics_url(suite.services["gateway"]))
    assert sample_value(gateway, "grpc_server_handled_total", grpc_method="Run", grpc_code="OK") == 1
    assert (
        sample_value(gateway, "grpc_server_handled_total", grpc_method="GetResult", grpc_code="INVALID_ARGUMENT") == 1
    )
    assert (
        sample_value(
            gateway,
            "grpc_server_handling_seconds_count",
            grpc_service="factcheck.v1.FactCheckService",
            grpc_method="Run",
        )
        == 1
    )
    checker = scrape(metrics_url(suite.services["checker"]))
    assert sample_value(checker, "grpc_server_handled_total", grpc_method="Verify", grpc_code="OK") == 2
    extractor = scrape(metrics_url(suite.services["extractor"]))
    assert sample_value(extractor, "grpc_server_handled_total", grpc_method="Extract", grpc_code="OK") == 1
    reporter = scrape(metrics_url(suite.services["reporter"]))
    assert sample_value(reporter, "grpc_server_handled_total", grpc_method="Report", grpc_code="OK") == 1
    assert sample_value(reporter, "grpc_server_handled_total", grpc_method="Title", grpc_code="OK") == 1


def test_model_calls_are_counted_with_latency_and_tokens(observed, fake_models):
    suite, _ = observed
    checker = scrape(metrics_url(suite.services["checker"]))
    for model in ("fake/checker-a", "fake/checker-b"):
        assert sample_value(checker, "factcheck_model_calls_total", model=model, outcome="ok") == 1
        assert sample_value(checker, "factcheck_model_call_seconds_count", model=model) == 1
        assert sample_value(checker, "factcheck_model_tokens_total", model=model, kind="prompt") > 100
        assert sample_value(checker, "factcheck_model_tokens_total", model=model, kind="completion") > 10


def test_the_gateway_counts_stage_durations_verdicts_and_runs(observed):
    suite, events = observed
    text = scrape(metrics_url(suite.services["gateway"]))
    for stage in ("extract", "verify", "report", "title", "run"):
        assert sample_value(text, "factcheck_stage_duration_seconds_count", stage=stage) == 1, stage
    assert sample_value(text, "factcheck_stage_duration_seconds_sum", stage="run") > 0
    [consensus] = [
        e.all_checkers_complete.consensus for e in events if e.WhichOneof("event") == "all_checkers_complete"
    ]
    assert sample_value(text, "factcheck_verdicts_total") == len(consensus) == 3
    assert sample_value(text, "factcheck_verdicts_total", verdict="VERIFIED") == 3
    assert sample_value(text, "factcheck_runs_total", status="COMPLETE") == 1
    assert sample_value(text, "factcheck_runs_in_flight") == 0


def test_one_trace_covers_the_whole_run(observed, collector):
    _, events = observed
    spans = _wait_for(lambda: _run_spans(collector) if len(_services(_run_spans(collector))) == 4 else None)
    assert spans, f"spans received: {[(s.service, s.name) for s in collector.spans]}"
    assert _services(spans) == {f"factcheck-{name}" for name in SERVICES}
    names = {(span.service, span.name) for span in spans}
    assert ("factcheck-gateway", "/factcheck.v1.FactCheckService/Run") in names
    assert ("factcheck-gateway", "/factcheck.v1.CheckerService/Verify") in names  # the client side of the hop
    assert ("factcheck-checker", "/factcheck.v1.CheckerService/Verify") in names
    model_spans = [span for span in spans if span.name == "model.complete"]
    assert {span.attributes["gen_ai.request.model"] for span in model_spans} >= {
        "fake/extractor",
        "fake/checker-a",
        "fake/checker-b",
        "fake/reporter",
    }
    assert all(span.attributes["factcheck.outcome"] == "ok" for span in model_spans)
    # Every span but the root has its parent in the same trace.
    span_ids = {span.span_id for span in spans}
    roots = [span for span in spans if span.parent_span_id not in span_ids]
    assert [root.name for root in roots] == ["/factcheck.v1.FactCheckService/Run"]


def _run_spans(collector):
    runs = [span for span in collector.spans if span.name == "/factcheck.v1.FactCheckService/Run"]
    if not runs:
        return []
    return [span for span in collector.spans if span.trace_id == runs[0].trace_id]


def _services(spans) -> set[str]:
    return {span.service for span in spans}


def test_logs_are_json_lines_with_the_message_id_and_the_trace_id(observed, collector):
    suite, events = observed
    message_id = events[0].message_id
    trace_id = _run_spans(collector)[0].trace_id
    for name in ("checker", "extractor", "reporter"):
        lines = [json.loads(line) for line in suite.services[name].output if line.startswith("{")]
        model_calls = [line for line in lines if line["message"].startswith("model call")]
        assert model_calls, suite.services[name].output
        for line in model_calls:
            assert line["service"] == f"factcheck-{name}" and line["level"] == "INFO"
            assert line["message_id"] == message_id
            assert line["trace_id"] == trace_id
    for name in SERVICES:  # every line the services logged is JSON (prints such as "listening on" are not logs)
        logged = [line for line in suite.services[name].output if not line.startswith("factcheck-")]
        assert logged and all(json.loads(line)["service"] == f"factcheck-{name}" for line in logged)


def test_without_an_endpoint_only_the_opentelemetry_api_is_loaded_and_records_nothing():
    """Code makes its spans through OpenTelemetry's API; without an endpoint neither the SDK, the exporter
    nor the gRPC instrumentation is imported, no tracing interceptor is added, and spans record nothing."""
    code = (
        "import json, sys\n"
        "from factcheck.kit.settings import Settings\n"
        "from factcheck.kit.observability import otel, tracing\n"
        "import factcheck_gateway.main, factcheck_checker.main, factcheck.models.client\n"
        "otel.setup(Settings(), 'x')\n"
        "from factcheck.kit.channels import open_channel\n"
        "from factcheck.serving.server import server_interceptors\n"
        "from opentelemetry import trace\n"
        "span = trace.get_tracer('probe').start_span('probe')\n"
        "print(json.dumps({\n"
        "    'modules': sorted(m for m in sys.modules if m.startswith('opentelemetry')),\n"
        "    'recording': span.is_recording(),\n"
        "    'interceptors': [type(i).__name__ for i in server_interceptors(Settings())],\n"
        "    'ids': tracing.current_ids(),\n"
        "}))\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FACTCHECK_", "OTEL_"))}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert "opentelemetry.trace" in seen["modules"]
    assert not [m for m in seen["modules"] if m.startswith(("opentelemetry.sdk", "opentelemetry.exporter"))]
    assert not [m for m in seen["modules"] if m.startswith("opentelemetry.instrumentation")]
    assert seen["recording"] is False and seen["ids"] is None
    assert seen["interceptors"] == [
        "ServerMetricsInterceptor",
        "MessageIdServerInterceptor",
        "ModelCallsServerInterceptor",
        "ErrorInterceptor",
    ]


async def test_a_runs_tasks_share_its_message_id():
    token = open_run_context()  # what the server interceptor does for each call
    try:

        async def verify_one() -> str | None:  # a task the run starts (as asyncio.as_completed does)
            return current_message_id()

        async def run() -> list[str | None]:
            return [current_message_id(), await asyncio.create_task(verify_one())]

        bind_message_id("1234")  # what Run does as soon as it has made the id
        assert await asyncio.create_task(run()) == ["1234", "1234"]
    finally:
        close_run_context(token)
