"""In-process OTLP collectors that keep every span and metric they receive (for tests).

`FakeCollector` speaks OTLP/gRPC (the trace and metrics services, port as given by the OS, where a real collector
listens on 4317); `FakeHttpCollector` speaks OTLP/HTTP with protobuf bodies (POST /v1/traces and /v1/metrics,
where a real one listens on 4318). Both record what they received in the same form, and the HTTP one the paths
it was sent to.
"""

from __future__ import annotations

import gzip
import threading
from concurrent import futures
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict
    # The attributes of the resource that sent it (service.name, OTEL_RESOURCE_ATTRIBUTES', the SDK's own).
    resource: dict


@dataclass(frozen=True)
class ReceivedPoint:
    """One data point of a metric: a sum's or gauge's value, or a histogram's count and sum."""

    service: str
    metric: str
    attributes: dict
    value: float
    resource: dict


def _value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def _attributes(attributes) -> dict:
    return {a.key: _value(a.value) for a in attributes}


def spans_of(request: trace_service_pb2.ExportTraceServiceRequest) -> list[ReceivedSpan]:
    received = []
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                received.append(
                    ReceivedSpan(
                        service=resource.get("service.name", ""),
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        attributes=_attributes(span.attributes),
                        resource=resource,
                    )
                )
    return received


def points_of(request: metrics_service_pb2.ExportMetricsServiceRequest) -> list[ReceivedPoint]:
    received = []
    for resource_metrics in request.resource_metrics:
        resource = _attributes(resource_metrics.resource.attributes)
        for scope_metrics in resource_metrics.scope_metrics:
            for metric in scope_metrics.metrics:
                kind = metric.WhichOneof("data")
                if kind is None:
                    continue
                for point in getattr(metric, kind).data_points:
                    if kind == "histogram":
                        value = float(point.count)
                    else:
                        value = point.as_double if point.WhichOneof("value") == "as_double" else float(point.as_int)
                    received.append(
                        ReceivedPoint(
                            service=resource.get("service.name", ""),
                            metric=metric.name,
                            attributes=_attributes(point.attributes),
                            value=value,
                            resource=resource,
                        )
                    )
    return received


class _Received:
    port: int

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: list[ReceivedSpan] = []
        self._points: list[ReceivedPoint] = []

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _add(self, spans: list[ReceivedSpan] | None = None, points: list[ReceivedPoint] | None = None) -> None:
        with self._lock:
            self._spans.extend(spans or [])
            self._points.extend(points or [])

    @property
    def spans(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self._spans)

    @property
    def points(self) -> list[ReceivedPoint]:
        """Every metric data point received, each export's in turn (cumulative: the last is the total)."""
        with self._lock:
            return list(self._points)

    def metric_names(self) -> set[str]:
        return {point.metric for point in self.points}


class FakeCollector(_Received):
    """OTLP/gRPC: TraceService/Export and MetricsService/Export."""

    def __init__(self) -> None:
        super().__init__()
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        collector = self

        class Traces(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request, context):
                collector._add(spans=spans_of(request))
                return trace_service_pb2.ExportTraceServiceResponse()

        class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
            def Export(self, request, context):
                collector._add(points=points_of(request))
                return metrics_service_pb2.ExportMetricsServiceResponse()

        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), self._server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")

    def __enter__(self) -> FakeCollector:
        self._server.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.stop(0)


class FakeHttpCollector(_Received):
    """OTLP/HTTP with protobuf bodies: POST /v1/traces and /v1/metrics (gzip or not); any other path is a 404."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []  # every path posted to, in order
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with collector._lock:
                    collector.paths.append(self.path)
                if self.path == "/v1/traces":
                    request = trace_service_pb2.ExportTraceServiceRequest.FromString(body)
                    collector._add(spans=spans_of(request))
                    answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
                elif self.path == "/v1/metrics":
                    metrics_request = metrics_service_pb2.ExportMetricsServiceRequest.FromString(body)
                    collector._add(points=points_of(metrics_request))
                    answer = metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString()
                else:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: object) -> None:  # quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHttpCollector:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
