"""Checkers as replicas: three checker processes behind one target, the gateway spreading calls
over them with round_robin; servers recycle connections (max_connection_age) without failing calls."""

from __future__ import annotations

import grpc
import pytest

from factcheck.kit.grpc_options import server_options
from factcheck.kit.settings import Settings
from factcheck.v1 import factcheck_pb2_grpc
from tests.conftest import content_request, suite_environment
from tests.ops_support import metrics_url, sample_value, scrape
from tests.processes import Suite, start_service

pytestmark = pytest.mark.e2e

REPLICAS = 3
RUNS = 9  # two checkers each: 18 Verify calls


@pytest.fixture(scope="module")
def replicated(fake_models, tmp_path_factory):
    env = {
        **suite_environment(fake_models, f"sqlite:///{tmp_path_factory.mktemp('db') / 'fc.db'}"),
        "FACTCHECK_METRICS_LISTEN": "127.0.0.1:0",
        # Connections are closed after a second (in-flight calls get 30 s), so the runs below
        # cross several reconnections.
        "FACTCHECK_MAX_CONNECTION_AGE_S": "1",
        "FACTCHECK_MAX_CONNECTION_AGE_GRACE_S": "30",
    }
    services = {}
    try:
        for index in range(REPLICAS):
            services[f"checker-{index}"] = start_service("checker", env)
        services["extractor"] = start_service("extractor", env)
        services["reporter"] = start_service("reporter", env)
        checker_ports = [services[f"checker-{i}"].target.rsplit(":", 1)[1] for i in range(REPLICAS)]
        # One target that resolves to all three replicas (what dns:///checker:50053 does in compose).
        target = "ipv4:" + ",".join(f"127.0.0.1:{port}" for port in checker_ports)
        services["gateway"] = start_service(
            "gateway",
            {
                **env,
                "FACTCHECK_EXTRACTOR_TARGET": services["extractor"].target,
                "FACTCHECK_CHECKER_TARGET": target,
                "FACTCHECK_REPORTER_TARGET": services["reporter"].target,
            },
        )
    except BaseException:
        Suite(services).stop()
        raise
    suite = Suite(services)
    yield suite
    suite.stop()


def test_calls_spread_over_every_checker_replica(replicated, fake_models):
    fake_models.reset()
    fake_models.set_latency("verify", 0.2)
    with grpc.insecure_channel(replicated.gateway_target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        for _ in range(RUNS):
            events = [response.event for response in gateway.Run(content_request(), timeout=60)]
            assert events[-1].WhichOneof("event") == "complete", replicated.logs()
            [verified] = [e.all_checkers_complete for e in events if e.WhichOneof("event") == "all_checkers_complete"]
            assert verified.checker_count == 2 and not verified.failed_checkers

    spread = {
        name: sample_value(
            scrape(metrics_url(service)), "grpc_server_handled_total", grpc_method="Verify", grpc_code="OK"
        )
        for name, service in replicated.services.items()
        if name.startswith("checker-")
    }
    print(f"Verify calls per checker replica: {spread}")
    assert sum(spread.values()) == 2 * RUNS == len([r for r in fake_models.requests if r.kind == "verify"])
    assert all(count >= 3 for count in spread.values()), spread


def test_servers_close_connections_after_their_maximum_age():
    options = dict(server_options(Settings(max_connection_age_s=300, global_timeout_s=600)))
    assert options["grpc.max_connection_age_ms"] == 300_000
    assert options["grpc.max_connection_age_grace_ms"] == 630_000  # a whole run's budget, and some
    assert options["grpc.max_receive_message_length"] == options["grpc.max_send_message_length"] == 32 << 20
    assert "grpc.max_connection_age_ms" not in dict(server_options(Settings(max_connection_age_s=0)))
