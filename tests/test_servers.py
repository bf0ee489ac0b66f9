"""Each service from its console script: health, reflection, graceful SIGTERM; and `factcheck serve`."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2

from tests.processes import ROOT, ServiceProcess, start_service

pytestmark = pytest.mark.e2e

SCRIPTS = {
    "factcheck-extractor": "factcheck.v1.ExtractorService",
    "factcheck-checker": "factcheck.v1.CheckerService",
    "factcheck-reporter": "factcheck.v1.ReporterService",
    "factcheck-gateway": "factcheck.v1.FactCheckService",
}
# Reflection's current protocol (what buf curl, grpcurl and Postman ask for first) and its older one.
REFLECTION_SERVICES = ("grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection")


# The console scripts import this checkout's code, wherever the package was installed from.
CODE_UNDER_TEST = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _script(name: str) -> str:
    path = Path(sys.executable).parent / name
    found = str(path) if path.exists() else shutil.which(name)
    assert found is not None, f"no {name} on this machine"
    return found


def _health(target: str, service: str = "") -> int:
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
        return stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status  # type: ignore[attr-defined]


def _watch_first(target: str, service: str = "") -> int:
    """The first status Health/Watch streams (then the watch is cancelled)."""
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
        call = stub.Watch(health_pb2.HealthCheckRequest(service=service), timeout=10)  # type: ignore[attr-defined]
        try:
            return next(call).status
        finally:
            call.cancel()


def _health_list(target: str) -> dict[str, int]:
    """Health/List: every service the server reports on, with its status."""
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
        response = stub.List(health_pb2.HealthListRequest(), timeout=10)  # type: ignore[attr-defined]
        return {name: status.status for name, status in response.statuses.items()}


def _reflect(
    target: str, *requests: reflection_pb2.ServerReflectionRequest, version: str = "v1"
) -> list[reflection_pb2.ServerReflectionResponse]:
    """grpc.reflection.<version>.ServerReflection/ServerReflectionInfo: v1 or v1alpha, whose messages are the same
    on the wire (grpcio-reflection has classes only for v1alpha's)."""
    with grpc.insecure_channel(target) as channel:
        call = channel.stream_stream(
            f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        return list(call(iter(requests), timeout=10))


def _reflected_services(target: str, version: str = "v1") -> list[str]:
    [response] = _reflect(target, reflection_pb2.ServerReflectionRequest(list_services=""), version=version)
    return [service.name for service in response.list_services_response.service]


@pytest.mark.parametrize("script, service", SCRIPTS.items())
def test_console_script_serves_health_and_reflection_and_stops_on_sigterm(script, service, tmp_path):
    env = {
        **CODE_UNDER_TEST,
        "PYTHONUNBUFFERED": "1",
        "FACTCHECK_LISTEN": "127.0.0.1:0",
        "FACTCHECK_DATABASE_URL": f"sqlite:///{tmp_path / 'fc.db'}",
    }
    process = subprocess.Popen(
        [_script(script)], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    server = ServiceProcess(script, process)
    target = server.wait_until_listening()
    try:
        assert _health(target) == health_pb2.HealthCheckResponse.SERVING
        assert _health(target, service) == health_pb2.HealthCheckResponse.SERVING
        # Watch is what Kubernetes and Envoy use; it is a writer-style stream behind the interceptors.
        assert _watch_first(target) == health_pb2.HealthCheckResponse.SERVING
        assert _watch_first(target, service) == health_pb2.HealthCheckResponse.SERVING
        assert _watch_first(target, "no.such.Service") == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
        reflected = _reflected_services(target)
        assert set(reflected) >= {service, "grpc.health.v1.Health", *REFLECTION_SERVICES}
        assert _reflected_services(target, "v1alpha") == reflected
        # List is part of the health protocol too (grpc's reference servicer leaves it out).
        served = [name for name in _reflected_services(target) if name.startswith("factcheck.")]
        assert _health_list(target) == {name: health_pb2.HealthCheckResponse.SERVING for name in ["", *served]}
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
    assert code == 0, "\n".join(server.output)
    assert any("stopped" in line for line in server.output)


def test_gateway_migrate_command(tmp_path):
    database = tmp_path / "migrated.db"
    env = {**CODE_UNDER_TEST, "FACTCHECK_DATABASE_URL": f"sqlite:///{database}"}
    done = subprocess.run(
        [_script("factcheck-gateway"), "migrate"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "latest schema" in done.stdout
    assert database.exists()


def _free_port_block(count: int = 4) -> int:
    """A base port whose next `count` ports are free right now.

    Parallel pytest-xdist workers search disjoint ranges: two of them could otherwise both find
    the same block free and race for it."""
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    first = 56000 + 500 * (worker % 8)
    for base in range(first, first + 500, 10):
        sockets = []
        try:
            for port in range(base, base + count):
                sock = socket.socket()
                sock.bind(("127.0.0.1", port))
                sockets.append(sock)
            return base
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
    raise RuntimeError("no free port block")


def test_factcheck_serve_starts_and_stops_the_suite(tmp_path):
    base = _free_port_block()
    env = {**CODE_UNDER_TEST, "FACTCHECK_DATABASE_URL": f"sqlite:///{tmp_path / 'fc.db'}"}
    process = subprocess.Popen(
        [_script("factcheck"), "serve", "--base-port", str(base)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            assert process.stdout is not None  # (stdout=PIPE)
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
            if line.startswith("Press Ctrl-C"):
                break
        assert lines and lines[-1].startswith("Press Ctrl-C"), "\n".join(lines)
        for offset, name in enumerate(["gateway", "extractor", "checker", "reporter"]):
            assert any(line.split() == [name, f"127.0.0.1:{base + offset}"] for line in lines), name
            assert _health(f"127.0.0.1:{base + offset}") == health_pb2.HealthCheckResponse.SERVING
    finally:
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=60)
    assert process.returncode == 0, rest
    for offset in range(4):  # every port is released: nothing left running
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", base + offset))


def test_a_second_server_on_a_taken_port_fails_to_start_and_says_which(tmp_path):
    """gRPC enables SO_REUSEPORT by default: a second server would silently share the port."""
    first = start_service("extractor", {})
    try:
        address = first.target
        second = subprocess.run(
            [sys.executable, "-m", "factcheck_checker.main"],
            cwd=ROOT,
            env={**CODE_UNDER_TEST, "FACTCHECK_LISTEN": address},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode != 0
        assert f"factcheck-checker: cannot listen on {address}: the address is already in use" in second.stderr
        assert second.stderr.rstrip().endswith("Stop the other server or set FACTCHECK_LISTEN.")  # its own setting
        assert _health(address, "factcheck.v1.ExtractorService") == health_pb2.HealthCheckResponse.SERVING
    finally:
        first.stop()


def test_a_second_factcheck_serve_on_the_same_ports_fails_and_the_first_keeps_serving(tmp_path):
    base = _free_port_block()
    env = {**CODE_UNDER_TEST, "FACTCHECK_DATABASE_URL": f"sqlite:///{tmp_path / 'fc.db'}"}
    command = [_script("factcheck"), "serve", "--base-port", str(base)]
    first = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert first.stdout is not None  # (stdout=PIPE)
    try:
        for line in first.stdout:
            if line.startswith("Press Ctrl-C"):
                break
        second = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=90)
        assert second.returncode == 1
        assert f"extractor did not start: factcheck-extractor: cannot listen on 127.0.0.1:{base + 1}" in second.stderr
        # `serve` sets each service's FACTCHECK_LISTEN itself: the way out is its --base-port, said once.
        assert second.stderr.rstrip().endswith(
            "or not available on this machine. Stop the other server, or pass --base-port to start the suite on "
            "other ports. The suite is stopped."
        )
        assert "FACTCHECK_LISTEN" not in second.stderr and ".;" not in second.stderr
        for offset in range(4):
            assert _health(f"127.0.0.1:{base + offset}") == health_pb2.HealthCheckResponse.SERVING
        assert first.poll() is None
    finally:
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=60)
    assert first.returncode == 0


# --- the gateway's services: reflection v1, buf curl, --help and the docs ---------------------------------------


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    """A gateway from `python -m factcheck_gateway.main` on SQLite: its target."""
    database = tmp_path_factory.mktemp("gateway") / "fc.db"
    service = start_service("gateway", {**CODE_UNDER_TEST, "FACTCHECK_DATABASE_URL": f"sqlite:///{database}"})
    try:
        yield service.target
    finally:
        service.stop()


def _gateway_apis(target: str) -> list[str]:
    """The factcheck.v1 services the gateway registers, as its reflection lists them."""
    return [name for name in _reflected_services(target) if name.startswith("factcheck.v1.")]


def test_reflection_v1_describes_every_service_it_lists(gateway):
    listed = _reflected_services(gateway)
    assert set(listed) >= {"factcheck.v1.FactCheckService", "grpc.health.v1.Health", *REFLECTION_SERVICES}
    requests = [reflection_pb2.ServerReflectionRequest(file_containing_symbol=name) for name in listed]
    for name, response in zip(listed, _reflect(gateway, *requests), strict=True):
        assert response.WhichOneof("message_response") == "file_descriptor_response", (name, response)
        files = [
            descriptor_pb2.FileDescriptorProto.FromString(raw)
            for raw in response.file_descriptor_response.file_descriptor_proto
        ]
        package, _, service = name.rpartition(".")
        [described] = [file for file in files if file.package == package and service in [s.name for s in file.service]]
        assert described.service, name
    [v1] = _reflect(gateway, reflection_pb2.ServerReflectionRequest(file_containing_symbol=REFLECTION_SERVICES[0]))
    [file] = [
        descriptor_pb2.FileDescriptorProto.FromString(raw) for raw in v1.file_descriptor_response.file_descriptor_proto
    ]
    assert (file.name, file.package) == ("grpc/reflection/v1/reflection.proto", "grpc.reflection.v1")
    assert file.service[0].method[0].input_type == ".grpc.reflection.v1.ServerReflectionRequest"


def test_buf_curl_lists_the_gateways_methods_over_reflection_v1(gateway):
    buf = ROOT / "node_modules" / ".bin" / "buf"
    assert buf.exists(), (
        "buf is missing: run `npm install --no-package-lock` in the repository root (scripts/test.sh does)"
    )
    done = subprocess.run(
        [str(buf), "curl", "--protocol", "grpc", "--http2-prior-knowledge", "--reflect-protocol", "grpc-v1"]
        + ["--list-methods", f"http://{gateway}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    methods = done.stdout.split()
    assert {method.split("/")[0] for method in methods} == set(_reflected_services(gateway))
    assert {
        "factcheck.v1.FactCheckService/Run",
        "factcheck.v1.ClaimsService/ListClaims",
        "factcheck.v1.ReviewService/DecideReview",
        "factcheck.v1.UsageService/GetUsage",
        "grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    } <= set(methods)


def _table_row(page: Path, first_cell: str) -> str:
    [row] = [line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith(f"| {first_cell} |")]
    return row


def test_the_gateway_help_and_the_docs_name_every_service_it_serves(gateway):
    apis = _gateway_apis(gateway)
    assert len(apis) >= 5, apis
    done = subprocess.run(
        [_script("factcheck-gateway"), "--help"], env=CODE_UNDER_TEST, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    help_text = " ".join(done.stdout.split())
    assert [api for api in apis if api not in help_text] == []
    for page in (ROOT / "README.md", ROOT / "docs" / "api.md"):
        row = _table_row(page, "gateway")
        missing = [api for api in apis if f"`{api.rpartition('.')[2]}`" not in row]
        assert not missing, f"{page.name}'s services table leaves out {missing}"
