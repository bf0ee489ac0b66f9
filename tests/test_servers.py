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
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.processes import ROOT, ServiceProcess

pytestmark = pytest.mark.e2e

SCRIPTS = {
    "factcheck-extractor": "factcheck.v1.ExtractorService",
    "factcheck-checker": "factcheck.v1.CheckerService",
    "factcheck-reporter": "factcheck.v1.ReporterService",
    "factcheck-gateway": "factcheck.v1.FactCheckService",
}


def _script(name: str) -> str:
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else shutil.which(name)


def _health(target: str, service: str = "") -> int:
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        return stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10).status


def _reflected_services(target: str) -> list[str]:
    with grpc.insecure_channel(target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        responses = stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10
        )
        return [service.name for response in responses for service in response.list_services_response.service]


@pytest.mark.parametrize("script, service", SCRIPTS.items())
def test_console_script_serves_health_and_reflection_and_stops_on_sigterm(script, service, tmp_path):
    env = {
        **os.environ,
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
        assert set(_reflected_services(target)) >= {service, "grpc.health.v1.Health"}
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=30)
    assert code == 0, "\n".join(server.output)
    assert any("stopped" in line for line in server.output)


def test_gateway_migrate_command(tmp_path):
    database = tmp_path / "migrated.db"
    env = {**os.environ, "FACTCHECK_DATABASE_URL": f"sqlite:///{database}"}
    done = subprocess.run(
        [_script("factcheck-gateway"), "migrate"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "latest schema" in done.stdout
    assert database.exists()


def _free_port_block(count: int = 4) -> int:
    """A base port whose next `count` ports are free right now."""
    for base in range(56000, 60000, 10):
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
    env = {**os.environ, "FACTCHECK_DATABASE_URL": f"sqlite:///{tmp_path / 'fc.db'}"}
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
