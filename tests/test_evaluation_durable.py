"""Evaluations outlive their caller and their gateway, end to end: the services as processes (the durable
runs' fixtures: a short lease, gateways started per test), on SQLite and PostgreSQL.

A caller that hangs up, or a connection the server recycles, leaves the evaluation running; WatchEvaluation
follows it from any gateway, from the start or after any seq; a gateway shut down hands it on and another
resumes it at once, a killed one once its heartbeat lapses; CancelEvaluation on another gateway stops it.
"""

from __future__ import annotations

import asyncio
import signal
import time
from contextlib import asynccontextmanager

import grpc
import pytest

from factcheck.v1 import common_pb2, evaluation_pb2, evaluation_pb2_grpc
from factcheck_gateway.evaluations.store import EvaluationStore
from factcheck_gateway.store import StageStore
from tests.fake_model_server import reply, verification_text
from tests.test_durable_runs import (  # noqa: F401  (module fixtures, used by name)
    backend,
    database_url,  # noqa: F811
    start_gateway,  # noqa: F811
    workers,
)

pytestmark = pytest.mark.e2e

CHECKER = "fake/checker-a"
V, D, U = common_pb2.VERDICT_VERIFIED, common_pb2.VERDICT_DISPUTED, common_pb2.VERDICT_UNVERIFIABLE
ITEMS = [
    evaluation_pb2.LabelledClaim(id=f"item-{n}", claim=f"Claim number {n} is true.", label=(V, D, U)[n % 3])
    for n in range(8)
]


def request(items=ITEMS) -> evaluation_pb2.RunEvaluationRequest:
    return evaluation_pb2.RunEvaluationRequest(
        config=evaluation_pb2.EvaluationConfig(
            checker_models=[CHECKER],
            custom_sets=[evaluation_pb2.CustomEvaluationSet(name="durable", items=items)],
            concurrency=1,
        )
    )


def slow_checker(fake_models, seconds: float) -> None:
    fake_models.script(CHECKER, reply(lambda prompt: verification_text(["claim_1"], {"claim_1": "VERIFIED"})))
    fake_models.set_latency(CHECKER, seconds)


@asynccontextmanager
async def connect(gateway):
    async with grpc.aio.insecure_channel(gateway.target) as channel:
        yield evaluation_pb2_grpc.EvaluationServiceStub(channel)


async def first_events(call, count: int) -> list[evaluation_pb2.EvaluationEvent]:
    events = []
    async for response in call:
        events.append(response.event)
        if len(events) == count:
            break
    call.cancel()  # the caller hangs up
    return events


async def watch(stub, evaluation_id: str, after_seq: int = 0) -> list[evaluation_pb2.EvaluationEvent]:
    request = evaluation_pb2.WatchEvaluationRequest(evaluation_id=evaluation_id, after_seq=after_seq)
    return [response.event async for response in stub.WatchEvaluation(request, timeout=90)]


def kinds(events) -> list[str]:
    return [event.WhichOneof("event") for event in events]


def evaluation_store(url: str) -> tuple[StageStore, EvaluationStore]:
    stage_store = StageStore(url)
    return stage_store, EvaluationStore(stage_store.engine)


async def wait_until(condition, timeout_s: float = 30.0):
    give_up = time.monotonic() + timeout_s
    while True:
        found = await asyncio.to_thread(condition)
        if found or time.monotonic() >= give_up:
            return found
        await asyncio.sleep(0.1)


async def test_a_caller_that_hangs_up_leaves_it_running_and_any_gateway_follows_it(
    start_gateway,  # noqa: F811
    fake_models,  # noqa: F811
):
    slow_checker(fake_models, 0.15)
    first, second = start_gateway(), start_gateway()
    async with connect(first) as stub:
        seen = await first_events(stub.RunEvaluation(request(), timeout=60), 3)  # started, two answers
    evaluation_id = seen[0].evaluation_id
    assert kinds(seen) == ["started", "progress", "progress"] and [e.seq for e in seen] == [1, 2, 3]

    async with connect(second) as stub:  # from another gateway: everything, from the start
        events = await watch(stub, evaluation_id)
        again = await watch(stub, evaluation_id, after_seq=3)  # and after a seq: the rest only
    assert kinds(events)[0] == "started" and kinds(events)[-1] == "finished"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert list(events[:3]) == list(seen)
    assert kinds(events).count("progress") == 8
    finished = events[-1].finished
    assert finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE and finished.done == 8
    assert finished.last_seq == events[-1].seq
    assert list(again) == list(events[3:])
    assert len(fake_models.requests_for(CHECKER)) == 8  # every item asked once: nothing restarted


async def test_a_connection_the_server_recycles_does_not_stop_it(start_gateway, fake_models):  # noqa: F811
    slow_checker(fake_models, 0.25)
    gateway = start_gateway(FACTCHECK_MAX_CONNECTION_AGE_S="1", FACTCHECK_MAX_CONNECTION_AGE_GRACE_S="0.5")
    events: list[evaluation_pb2.EvaluationEvent] = []
    async with connect(gateway) as stub:
        with pytest.raises(grpc.aio.AioRpcError) as cut:
            async for response in stub.RunEvaluation(request(), timeout=60):
                events.append(response.event)
        assert cut.value.code() == grpc.StatusCode.UNAVAILABLE  # the server closed the connection under it
    assert events and kinds(events)[-1] != "finished"
    async with connect(gateway) as stub:  # a new connection follows it on from the last event seen
        rest = await watch(stub, events[0].evaluation_id, after_seq=events[-1].seq)
    assert kinds(rest)[-1] == "finished"
    assert rest[-1].finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE
    assert [e.seq for e in events + rest] == list(range(1, len(events) + len(rest) + 1))


async def test_a_gateway_shut_down_hands_it_on_and_another_resumes_it(
    start_gateway,  # noqa: F811
    fake_models,
    database_url,  # noqa: F811
):
    slow_checker(fake_models, 0.3)
    first = start_gateway()
    async with connect(first) as stub:
        seen = await first_events(stub.RunEvaluation(request(), timeout=60), 3)
    evaluation_id = seen[0].evaluation_id
    first.process.send_signal(signal.SIGTERM)  # a graceful shutdown
    first.process.wait(timeout=30)
    stage_store, store = evaluation_store(database_url)
    try:
        record = store.get(evaluation_id, None)
        assert record is not None and record.status == "RUNNING" and record.owner is None  # handed on
        second = start_gateway()  # its recovery pass resumes it at once
        async with connect(second) as stub:
            events = await watch(stub, evaluation_id)
    finally:
        stage_store.close()
    assert kinds(events).count("started") == 2  # the start, and the resume
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    finished = events[-1].finished
    assert finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE and finished.done == 8
    resumed = events[kinds(events).index("started", 1)].started
    assert 2 <= resumed.done < 8
    # Only what had no answer was asked again (one call may have been cut short by the shutdown).
    assert 8 <= len(fake_models.requests_for(CHECKER)) <= 9


async def test_a_killed_gateways_evaluation_is_resumed_once_its_heartbeat_lapses(
    start_gateway,  # noqa: F811
    fake_models,
    database_url,  # noqa: F811
):
    slow_checker(fake_models, 0.3)
    first, second = start_gateway(), start_gateway()
    async with connect(first) as stub:
        seen = await first_events(stub.RunEvaluation(request(), timeout=60), 2)
    first.process.kill()
    first.process.wait()
    async with connect(second) as stub:
        events = await watch(stub, seen[0].evaluation_id)
    assert events[-1].finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE
    assert events[-1].finished.done == 8
    assert [e.seq for e in events] == list(range(1, len(events) + 1))


async def test_cancel_on_another_gateway_stops_it_and_its_watchers(
    start_gateway,  # noqa: F811
    fake_models,
    database_url,  # noqa: F811
):
    slow_checker(fake_models, 0.3)
    first, second = start_gateway(), start_gateway()
    async with connect(first) as stub:
        seen = await first_events(stub.RunEvaluation(request(), timeout=60), 2)
    evaluation_id = seen[0].evaluation_id
    async with connect(first) as watching, connect(second) as cancelling:
        watcher = asyncio.create_task(watch(watching, evaluation_id))
        await asyncio.sleep(0.3)
        cancelled = await cancelling.CancelEvaluation(
            evaluation_pb2.CancelEvaluationRequest(evaluation_id=evaluation_id), timeout=30
        )
        events = await asyncio.wait_for(watcher, 60)
    assert cancelled.status == evaluation_pb2.EVALUATION_STATUS_CANCELLED
    assert events[-1].finished.status == evaluation_pb2.EVALUATION_STATUS_CANCELLED
    asked = len(fake_models.requests_for(CHECKER))
    stage_store, store = evaluation_store(database_url)
    try:
        # The gateway running it stops within its check interval: nothing more is asked.
        await asyncio.sleep(1.5)
        assert len(fake_models.requests_for(CHECKER)) <= asked + 1
        record = store.get(evaluation_id, None)
        assert record is not None and record.status == "CANCELLED"
        assert [stored.event_type for stored in store.events_after(evaluation_id, 0)][-1] == "finished"
    finally:
        stage_store.close()
