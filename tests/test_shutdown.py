"""Graceful shutdown end to end: on SIGTERM the gateway's health turns NOT_SERVING at once, and
in-flight runs (streamed, or whose caller has gone) finish and are stored within the grace period."""

from __future__ import annotations

import signal
import threading
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from factcheck.kit.security.tenants import DEFAULT_TENANT
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from factcheck_gateway.store import StageStore
from tests.conftest import content_request, suite_environment
from tests.processes import Suite, start_service, start_services

pytestmark = pytest.mark.e2e

SLOW_REPORT_S = 2.5


@pytest.fixture(scope="module")
def database_url(tmp_path_factory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('db') / 'fc.db'}"


@pytest.fixture(scope="module")
def services(fake_models, database_url):
    env = suite_environment(fake_models, database_url)
    running = Suite(start_services(("extractor", "checker", "reporter"), env))
    yield running
    running.stop()


@pytest.fixture
def gateway(services, fake_models, database_url):
    """A gateway of its own (each test stops it), with a slow reporter model behind it."""
    fake_models.reset()
    fake_models.set_latency("report", SLOW_REPORT_S)
    env = {
        **suite_environment(fake_models, database_url),
        "FACTCHECK_EXTRACTOR_TARGET": services.services["extractor"].target,
        "FACTCHECK_CHECKER_TARGET": services.services["checker"].target,
        "FACTCHECK_REPORTER_TARGET": services.services["reporter"].target,
        "FACTCHECK_SHUTDOWN_DELAY_S": "1",
        "FACTCHECK_SHUTDOWN_GRACE_S": "20",
    }
    process = start_service("gateway", env)
    yield process
    process.stop()


def _health(target: str) -> str:
    with grpc.insecure_channel(target) as channel:
        try:
            # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
            status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2).status  # type: ignore[attr-defined]
        except grpc.RpcError as error:
            return error.code().name
    return health_pb2.HealthCheckResponse.ServingStatus.Name(status)


def _stored(database_url: str, message_id: str):
    store = StageStore(database_url)
    try:
        return store.get_message(message_id, tenant_id=DEFAULT_TENANT), [
            stage.stage_type for stage in store.get_stages(message_id)
        ]
    finally:
        store.close()


def test_sigterm_mid_run_turns_health_not_serving_and_the_stream_still_completes(gateway, database_url):
    events: list[factcheck_pb2.FactCheckEvent] = []
    report_started = threading.Event()

    def stream() -> None:
        with grpc.insecure_channel(gateway.target) as channel:
            for response in factcheck_pb2_grpc.FactCheckServiceStub(channel).Run(content_request(), timeout=60):
                events.append(response.event)
                if response.event.WhichOneof("event") == "report_start":
                    report_started.set()

    caller = threading.Thread(target=stream)
    caller.start()
    assert report_started.wait(30), gateway.output
    assert _health(gateway.target) == "SERVING"

    signalled = time.monotonic()
    gateway.process.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    assert _health(gateway.target) == "NOT_SERVING"

    caller.join(30)
    assert [e.WhichOneof("event") for e in events][-3:] == ["report_complete", "title_complete", "complete"]
    assert events[-1].complete.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
    assert gateway.process.wait(30) == 0, "\n".join(gateway.output)
    assert time.monotonic() - signalled >= SLOW_REPORT_S - 1  # it waited for the run, not just the delay
    message, stages = _stored(database_url, events[0].message_id)
    assert message.status == "COMPLETE" and "report" in stages


def test_a_run_whose_caller_has_gone_is_finished_and_stored_before_the_gateway_exits(gateway, database_url):
    with grpc.insecure_channel(gateway.target) as channel:
        call = factcheck_pb2_grpc.FactCheckServiceStub(channel).Run(content_request(), timeout=60)
        message_id = next(call).event.message_id
        call.cancel()
    time.sleep(0.3)
    gateway.process.send_signal(signal.SIGTERM)
    assert gateway.process.wait(30) == 0, "\n".join(gateway.output)
    message, stages = _stored(database_url, message_id)
    assert message.status == "COMPLETE" and "report" in stages
    assert any("in-flight runs" in line for line in gateway.output)
