"""Limits: concurrent runs on the gateway, per-provider request and token rates, message sizes."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Iterator, cast

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from factcheck.kit.errors import ResourceExhausted
from factcheck.kit.grpc_options import MAX_MESSAGE_BYTES
from factcheck.kit.observability import metrics
from factcheck.kit.settings import ProviderOverride, Settings
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelRateLimitedError
from factcheck.models.limits import LimitExceeded, TokenBucket
from factcheck.v1 import checker_pb2, checker_pb2_grpc, factcheck_pb2, factcheck_pb2_grpc
from factcheck_gateway.runs.concurrency_limit import RunLimit, busy_message
from tests.conftest import content_request, suite_environment
from tests.fake_model_server import FakeModelServer, reply
from tests.processes import start_service, start_suite

# --- the gateway's concurrent-run limit ------------------------------------------------------------


@pytest.fixture(scope="module")
def limited_suite(fake_models, tmp_path_factory):
    env = {
        **suite_environment(fake_models, f"sqlite:///{tmp_path_factory.mktemp('db') / 'fc.db'}"),
        "FACTCHECK_MAX_CONCURRENT_RUNS": "1",
    }
    suite = start_suite(env)
    yield suite
    suite.stop()


async def _first_event(call) -> factcheck_pb2.FactCheckEvent:
    async for response in call:
        return response.event
    raise AssertionError("no event")


@pytest.mark.e2e
async def test_runs_beyond_the_limit_are_refused_until_one_finishes(limited_suite, fake_models):
    fake_models.reset()
    fake_models.set_latency("report", 1.5)
    async with grpc.aio.insecure_channel(limited_suite.gateway_target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        # An invalid request is refused without keeping its slot.
        with pytest.raises(grpc.aio.AioRpcError) as invalid:
            await _first_event(gateway.Run(factcheck_pb2.RunRequest(), timeout=10))
        assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT

        first = gateway.Run(content_request(), timeout=60)
        started = await _first_event(first)
        assert started.WhichOneof("event") == "factcheck_start"
        first.cancel()  # the caller goes away; the run goes on and keeps its slot

        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await _first_event(gateway.Run(content_request(), timeout=10))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert refused.value.details() == busy_message(1)
        status = rpc_status.from_call(cast(grpc.Call, refused.value))  # (an AioRpcError has what from_call reads)
        assert status is not None
        details = {detail.TypeName(): detail for detail in status.details}
        retry, info = error_details_pb2.RetryInfo(), error_details_pb2.ErrorInfo()
        assert details["google.rpc.RetryInfo"].Unpack(retry) and retry.retry_delay.seconds > 0
        assert details["google.rpc.ErrorInfo"].Unpack(info) and info.reason == "RUN_LIMIT_REACHED"

        deadline = time.monotonic() + 30
        while True:  # the first run is stored as COMPLETE, then its slot is free
            result = await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=started.message_id), timeout=10)
            if result.result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        assert result.result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
        fake_models.set_latency("report", 0)
        await asyncio.sleep(0.2)
        events = [response.event async for response in gateway.Run(content_request(), timeout=60)]
        assert events[-1].WhichOneof("event") == "complete"


class RpcContextStub:
    """A servicer context for RunLimit: records done callbacks, `end` runs them (the RPC ended)."""

    def __init__(self) -> None:
        self.callbacks: list = []

    async def abort(self, code, details):
        raise grpc.aio.AbortError(code, details)

    def add_done_callback(self, callback) -> None:
        self.callbacks.append(callback)

    def end(self) -> None:
        for callback in self.callbacks:
            callback(self)


def as_context(stub: RpcContextStub) -> grpc.aio.ServicerContext:
    """The stub where RunLimit takes a servicer context (it calls only add_done_callback)."""
    return cast(grpc.aio.ServicerContext, stub)


async def test_a_slot_is_released_by_its_run_or_by_its_rpc():
    limit = RunLimit(2)
    handed, dropped = RpcContextStub(), RpcContextStub()
    slot = await limit.admit(as_context(handed), "acme")
    await limit.admit(as_context(dropped), "acme")
    with pytest.raises(ResourceExhausted) as refused:
        await limit.admit(as_context(RpcContextStub()), "acme")
    assert refused.value.reason == "RUN_LIMIT_REACHED" and refused.value.retry_after_s
    dropped.end()  # the RPC ended before its run started (invalid request, database down)
    assert limit.in_flight == 1

    task = asyncio.create_task(asyncio.sleep(0.05))
    slot.hold_until_done(task)
    handed.end()  # the caller left; the run goes on
    assert limit.in_flight == 1
    await task
    await asyncio.sleep(0)
    assert limit.in_flight == 0


async def test_no_limit_still_counts_runs():
    limit = RunLimit(0)
    for _ in range(50):
        await limit.admit(as_context(RpcContextStub()), "acme")
    assert limit.in_flight == 50


# --- per-provider request and token limits in the model client --------------------------------------


@pytest.fixture
def server() -> Iterator[FakeModelServer]:
    with FakeModelServer() as fake:
        yield fake


def limited_settings(base_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "model_base_url": base_url,
        "model_api_key": None,
        "model_providers": {},
        "model_max_retries": 0,
        "model_backoff_base_s": 0.01,
    }
    values.update(overrides)
    return Settings(**values)


async def test_requests_per_minute_hold_calls_back_and_fail_fast_past_the_deadline(server):
    async with ModelClient(limited_settings(server.base_url, model_requests_per_minute=2)) as client:
        await client.complete("acme/m", "one", timeout_s=5)
        await client.complete("acme/m", "two", timeout_s=5)
        started = time.monotonic()
        with pytest.raises(ModelRateLimitedError, match=r"client-side limit of 2 requests/min for provider 'acme'"):
            await client.complete("acme/m", "three", timeout_s=5)  # the next request is 30 s away
        assert time.monotonic() - started < 10  # fails fast instead of waiting the 30 s; generous on purpose
        # Another provider has its own bucket.
        await client.complete("other/m", "one", timeout_s=5)
    assert len(server.requests) == 3


async def test_tokens_per_minute_settle_with_the_reported_usage_and_wait(server):
    # 600 tokens a minute = 10 a second. The first call reports 605 tokens: the bucket is 5 in debt.
    server.script(
        "acme/m",
        reply("ok", usage={"prompt_tokens": 600, "completion_tokens": 5, "total_tokens": 605}),
        reply("ok", usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}),
    )
    waited_before = metrics.MODEL_LIMIT_WAIT_SECONDS.labels("acme")._value.get()
    async with ModelClient(limited_settings(server.base_url, model_tokens_per_minute=600)) as client:
        await client.complete("acme/m", "12345678", timeout_s=5)
        started = time.monotonic()
        await client.complete("acme/m", "12345678", timeout_s=5)  # 2 tokens estimated: ~0.7 s to refill 7
        waited = time.monotonic() - started
    assert 0.5 < waited < 2.0
    assert metrics.MODEL_LIMIT_WAIT_SECONDS.labels("acme")._value.get() - waited_before == pytest.approx(0.7, abs=0.15)


async def test_a_provider_override_sets_its_own_limits(server):
    settings = limited_settings(
        server.base_url,
        model_requests_per_minute=1000,
        model_providers={"slow": ProviderOverride(base_url=server.base_url, requests_per_minute=1)},
    )
    async with ModelClient(settings) as client:
        await client.complete("slow/m", "one", timeout_s=5)
        with pytest.raises(ModelRateLimitedError, match="1 requests/min"):
            await client.complete("slow/m", "two", timeout_s=5)
        for _ in range(5):
            await client.complete("fast/m", "x", timeout_s=5)


async def test_limits_are_off_by_default(server):
    async with ModelClient(limited_settings(server.base_url)) as client:
        for _ in range(20):
            await client.complete("acme/m", "x", timeout_s=5)
    assert len(server.requests) == 20


def test_a_token_bucket_refills_per_minute_and_queues_takers_in_order():
    now = [0.0]
    bucket = TokenBucket(60, "requests", clock=lambda: now[0])  # one a second, 60 at once
    assert [bucket.reserve(1, deadline=100) for _ in range(60)] == [0.0] * 60
    assert bucket.reserve(1, deadline=100) == pytest.approx(1.0)  # the 61st waits a second
    assert bucket.reserve(1, deadline=100) == pytest.approx(2.0)  # the 62nd behind it
    with pytest.raises(LimitExceeded) as exceeded:
        bucket.reserve(1, deadline=2.5)  # would be ready at 3 s
    assert exceeded.value.wait_s == pytest.approx(3.0)
    now[0] = 10.0
    assert bucket.reserve(1, deadline=100) == 0.0  # 10 s refilled 10, 2 were owed
    bucket.give_back(1000)
    assert bucket.reserve(60, deadline=100) == 0.0  # never above one minute's worth
    assert bucket.reserve(500, deadline=1000) == pytest.approx(60.0)  # more than the capacity: a full minute


# --- message sizes ---------------------------------------------------------------------------------


@pytest.mark.e2e
def test_messages_up_to_the_limit_are_accepted_and_larger_ones_refused(tmp_path):
    checker = start_service("checker", {"FACTCHECK_DATABASE_URL": f"sqlite:///{tmp_path / 'fc.db'}"})
    try:
        with grpc.insecure_channel(checker.target) as channel:
            stub = checker_pb2_grpc.CheckerServiceStub(channel)
            # 8 MiB passes gRPC's 4 MiB default: the checker reads it and rejects the model id.
            with pytest.raises(grpc.RpcError) as invalid:
                stub.Verify(checker_pb2.VerifyRequest(model="bad", content="x" * (8 << 20)), timeout=30)
            assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            with pytest.raises(grpc.RpcError) as too_big:
                stub.Verify(checker_pb2.VerifyRequest(model="bad", content="x" * (MAX_MESSAGE_BYTES + 1)), timeout=30)
            assert too_big.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        checker.stop()
