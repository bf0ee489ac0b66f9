"""OpenTelemetry's standard environment decides what an extractor exports, where, over which protocol.

Each test starts an extractor process with some OTEL_* variables, makes one Generate call (one model call to the
fake model server) and stops it gracefully, which flushes its spans and metrics; collectors the test runs
(OTLP/gRPC and OTLP/HTTP with protobuf, tests/fake_otlp_collector.py) show what was sent.
"""

from __future__ import annotations

import json
import time

import grpc
import pytest

from factcheck.v1 import extractor_pb2, extractor_pb2_grpc
from tests.fake_otlp_collector import FakeCollector, FakeHttpCollector
from tests.processes import ServiceProcess, start_service

pytestmark = pytest.mark.e2e

GENERATE_SPAN = "/factcheck.v1.ExtractorService/Generate"
# The metrics every Generate call records (a counter's name is without Prometheus' "_total").
RPC_METRIC = "grpc_server_handled"
MODEL_METRIC = "factcheck_model_calls"
# Every variable a test may set, cleared unless it does (the test runner's own must not leak in).
CLEARED = {
    name: ""
    for name in (
        "FACTCHECK_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
        "OTEL_TRACES_EXPORTER",
        "OTEL_METRICS_EXPORTER",
        "OTEL_LOGS_EXPORTER",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_TRACES_SAMPLER_ARG",
        "OTEL_SDK_DISABLED",
    )
}


def _generate(fake_models, env: dict[str, str]) -> ServiceProcess:
    """An extractor with `env` makes one Generate call and stops gracefully; returns it (its output)."""
    service = start_service(
        "extractor",
        {
            "FACTCHECK_MODEL_BASE_URL": fake_models.base_url,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_TRACES_SAMPLER": "parentbased_always_on",
            **CLEARED,
            **env,
        },
    )
    try:
        with grpc.insecure_channel(service.target) as channel:
            stub = extractor_pb2_grpc.ExtractorServiceStub(channel)
            reply = stub.Generate(extractor_pb2.GenerateRequest(model="fake/generator", question="Why?"), timeout=30)
        assert reply.content, service.output
    finally:
        assert service.stop() == 0, service.output
    time.sleep(0.2)  # the last lines of its output are read by a thread
    return service


def _generate_counted(points, metric: str, **attributes) -> float:
    """The last (cumulative) value of `metric` for the data point with these attributes."""
    values = [p.value for p in points if p.metric == metric and attributes.items() <= p.attributes.items()]
    return values[-1] if values else 0.0


def _console_spans(output: list[str]) -> list[dict]:
    """The spans ConsoleSpanExporter wrote: one indented JSON object each."""
    text = "\n".join(output)
    spans, decoder, at = [], json.JSONDecoder(), 0
    while (at := text.find('{\n    "name"', at)) != -1:
        span, end = decoder.raw_decode(text, at)
        spans.append(span)
        at = end
    return spans


def test_an_endpoint_alone_sends_traces_and_metrics_over_grpc(fake_models):
    """OTEL_EXPORTER_OTLP_ENDPOINT alone: OTLP (the default exporter) over gRPC (the default protocol), both
    signals; OTEL_SERVICE_NAME names the service (over a service.name in OTEL_RESOURCE_ATTRIBUTES, and instead of
    the process's factcheck-extractor); OTEL_RESOURCE_ATTRIBUTES' other attributes describe it, spans and metrics."""
    with FakeCollector() as collector:
        _generate(
            fake_models,
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
                "OTEL_SERVICE_NAME": "extractor-eu-1",
                "OTEL_RESOURCE_ATTRIBUTES": "deployment.environment=staging,service.name=not-this-one",
            },
        )
        spans, points = collector.spans, collector.points
    names = {span.name for span in spans}
    assert GENERATE_SPAN in names and "model.complete" in names, names
    assert {span.service for span in spans} == {"extractor-eu-1"}
    assert all(span.resource["deployment.environment"] == "staging" for span in spans)
    [server_span] = [span for span in spans if span.name == GENERATE_SPAN]
    [model_span] = [span for span in spans if span.name == "model.complete"]
    assert model_span.parent_span_id == server_span.span_id
    assert model_span.attributes["gen_ai.request.model"] == "fake/generator"
    assert _generate_counted(points, RPC_METRIC, grpc_method="Generate", grpc_code="OK") == 1
    assert _generate_counted(points, MODEL_METRIC, model="fake/generator", outcome="ok") == 1
    assert _generate_counted(points, "factcheck_model_call_seconds", model="fake/generator") == 1  # a histogram
    assert {point.service for point in points} == {"extractor-eu-1"}
    assert all(point.resource["deployment.environment"] == "staging" for point in points)


def test_without_otel_service_name_the_service_is_named_after_its_process(fake_models):
    with FakeCollector() as collector:
        _generate(
            fake_models,
            {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.endpoint, "OTEL_RESOURCE_ATTRIBUTES": "team=facts"},
        )
        spans = collector.spans
    assert spans and {span.service for span in spans} == {"factcheck-extractor"}
    assert all(span.resource["team"] == "facts" for span in spans)


def test_http_protobuf_posts_to_v1_traces_and_v1_metrics(fake_models):
    """OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf: the HTTP exporters, to the endpoint's /v1/traces and /v1/metrics
    (a collector's port 4318); nothing goes to a gRPC collector."""
    with FakeHttpCollector() as http, FakeCollector() as grpc_collector:
        _generate(
            fake_models,
            {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": http.endpoint},
        )
        assert set(http.paths) == {"/v1/traces", "/v1/metrics"}
        assert GENERATE_SPAN in {span.name for span in http.spans}
        assert {span.service for span in http.spans} == {"factcheck-extractor"}
        assert _generate_counted(http.points, RPC_METRIC, grpc_method="Generate", grpc_code="OK") == 1
        assert grpc_collector.spans == [] and grpc_collector.points == []


def test_grpc_protocol_named_explicitly(fake_models):
    with FakeCollector() as collector:
        _generate(
            fake_models, {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint}
        )
        assert GENERATE_SPAN in {span.name for span in collector.spans}
        assert _generate_counted(collector.points, MODEL_METRIC, model="fake/generator") == 1


def test_each_signal_its_own_protocol_and_endpoint(fake_models):
    """The per-signal variables: traces over HTTP to a full URL (used as it is), metrics over gRPC elsewhere."""
    with FakeHttpCollector() as http, FakeCollector() as grpc_collector:
        _generate(
            fake_models,
            {
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{http.endpoint}/v1/traces",
                "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc",
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": grpc_collector.endpoint,
            },
        )
        assert set(http.paths) == {"/v1/traces"} and http.points == []
        assert GENERATE_SPAN in {span.name for span in http.spans}
        assert grpc_collector.spans == [] and _generate_counted(grpc_collector.points, RPC_METRIC) == 1


def test_traces_exporter_none_sends_no_span_even_with_an_endpoint(fake_models):
    """OTEL_TRACES_EXPORTER=none: no span leaves the process; the metrics still go (their exporter is otlp)."""
    with FakeCollector() as collector:
        service = _generate(
            fake_models, {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint}
        )
        assert collector.spans == []
        assert _generate_counted(collector.points, RPC_METRIC, grpc_method="Generate") == 1
    assert _console_spans(service.output) == []


def test_traces_exporter_console_writes_spans_and_sends_none(fake_models):
    """OTEL_TRACES_EXPORTER=console: the spans are written to the process's output, and none to the collector
    an endpoint names (which still gets the metrics)."""
    with FakeCollector() as collector:
        service = _generate(
            fake_models, {"OTEL_TRACES_EXPORTER": "console", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint}
        )
        assert collector.spans == []
        assert _generate_counted(collector.points, RPC_METRIC, grpc_method="Generate") == 1
    written = _console_spans(service.output)
    assert {span["name"] for span in written} >= {GENERATE_SPAN, "model.complete"}, service.output
    assert {span["resource"]["attributes"]["service.name"] for span in written} == {"factcheck-extractor"}


def test_traces_exporter_console_alone_needs_no_collector(fake_models):
    service = _generate(fake_models, {"OTEL_TRACES_EXPORTER": "console"})
    written = _console_spans(service.output)
    assert GENERATE_SPAN in {span["name"] for span in written}, service.output
    assert not [line for line in service.output if "Failed to export" in line or "Transient error" in line]


def test_metrics_exporter_console_writes_metrics(fake_models):
    service = _generate(fake_models, {"OTEL_METRICS_EXPORTER": "console"})
    text = "\n".join(service.output)
    assert f'"name": "{RPC_METRIC}"' in text and f'"name": "{MODEL_METRIC}"' in text, text
    assert _console_spans(service.output) == []  # traces: unset, and no collector named, so none


def test_metrics_exporter_none_sends_spans_only(fake_models):
    with FakeCollector() as collector:
        _generate(fake_models, {"OTEL_METRICS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint})
        assert GENERATE_SPAN in {span.name for span in collector.spans}
        assert collector.points == []


def test_sdk_disabled_sends_nothing(fake_models):
    with FakeCollector() as collector:
        service = _generate(
            fake_models,
            {
                "OTEL_SDK_DISABLED": "true",
                "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
                "OTEL_TRACES_EXPORTER": "otlp,console",
            },
        )
        assert collector.spans == [] and collector.points == []
    assert _console_spans(service.output) == []


def test_factcheck_otlp_endpoint_wins_over_opentelemetrys_endpoints(fake_models):
    with FakeCollector() as ours, FakeCollector() as standard:
        _generate(
            fake_models,
            {
                "FACTCHECK_OTLP_ENDPOINT": ours.endpoint,
                "OTEL_EXPORTER_OTLP_ENDPOINT": standard.endpoint,
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": standard.endpoint,
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": standard.endpoint,
            },
        )
        assert GENERATE_SPAN in {span.name for span in ours.spans}
        assert _generate_counted(ours.points, RPC_METRIC) == 1
        assert standard.spans == [] and standard.points == []


def test_factcheck_otlp_endpoint_is_a_base_url_over_http(fake_models):
    with FakeHttpCollector() as http:
        _generate(
            fake_models, {"FACTCHECK_OTLP_ENDPOINT": http.endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
        )
        assert set(http.paths) == {"/v1/traces", "/v1/metrics"}


@pytest.mark.parametrize(
    ("sampler", "argument", "exported"),
    [("always_off", "", False), ("traceidratio", "0", False), ("traceidratio", "1", True)],
)
def test_otel_traces_sampler_and_its_argument_decide_what_is_exported(fake_models, sampler, argument, exported):
    with FakeCollector() as collector:
        _generate(
            fake_models,
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
                "OTEL_TRACES_SAMPLER": sampler,
                "OTEL_TRACES_SAMPLER_ARG": argument,
            },
        )
        assert (GENERATE_SPAN in {span.name for span in collector.spans}) is exported
        assert _generate_counted(collector.points, RPC_METRIC) == 1  # sampling is of traces alone


@pytest.mark.parametrize(
    ("env", "said"),
    [
        (
            {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"},
            "http/json",
        ),
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "zipkin"),
    ],
)
def test_an_unknown_protocol_or_exporter_stops_the_service_with_one_line(env, said):
    with pytest.raises(RuntimeError) as failed:
        start_service("extractor", {**CLEARED, **env})
    lines = [line for line in str(failed.value).splitlines() if line.startswith("OpenTelemetry:")]
    assert len(lines) == 1 and said in lines[0], failed.value
    assert "Traceback" not in str(failed.value)
