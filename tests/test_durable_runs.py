"""Durable runs end to end: crash recovery, Watch, Cancel, idempotent Run, database outages.

The services run as processes on SQLite and on PostgreSQL, with a short lease so that a
killed gateway's run is taken over within seconds. Gateways are started per test (some
tests kill them); the extractor, checker and reporter are shared by the module.
"""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from contextlib import asynccontextmanager

import grpc
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from factcheck.v1 import citations_pb2, common_pb2, council_pb2, factcheck_pb2, factcheck_pb2_grpc
from factcheck.v1 import entailment_pb2 as pb
from factcheck_gateway.claims.tables import CitationCorrectionRow, ClaimRow
from factcheck_gateway.ledger.tables import ModelCallRecord
from factcheck_gateway.store import StageStore
from factcheck_gateway.store.stage_store import ANY_TENANT
from tests.conftest import (
    CHECKERS,
    DATABASE_BACKENDS,
    FULL_SEQUENCE,
    content_request,
    fresh_database,
    kinds,
    suite_environment,
)
from tests.fake_model_server import CLOSED_BY_CLIENT, default_reply, delay, hold_until_closed, review, verdicts
from tests.processes import ServiceProcess, start_service, start_services, stop_services

pytestmark = pytest.mark.e2e

DURABLE_SETTINGS = {
    "FACTCHECK_RUN_LEASE_S": "1.5",
    "FACTCHECK_RECOVERY_INTERVAL_S": "0.3",
    "FACTCHECK_WATCH_POLL_S": "0.2",
}


@pytest.fixture(scope="module", params=DATABASE_BACKENDS)
def backend(request):
    return request.param


@pytest.fixture(scope="module")
def database_url(backend, tmp_path_factory):
    with fresh_database(backend, tmp_path_factory.mktemp(backend)) as url:
        yield url


@pytest.fixture(scope="module")
def workers(fake_models, database_url):
    """Extractor, checker and reporter processes, shared by the module's gateways."""
    env = {**suite_environment(fake_models, database_url), **DURABLE_SETTINGS}
    services = start_services(("extractor", "checker", "reporter"), env)
    yield services
    stop_services(services.values())


@pytest.fixture
def start_gateway(fake_models, database_url, workers):
    """Start a gateway on the module's database (several may run at once); all are stopped afterwards."""
    fake_models.reset()
    CLOSED_BY_CLIENT.clear()
    started: list[ServiceProcess] = []

    def start(**extra: str) -> ServiceProcess:
        env = {
            **suite_environment(fake_models, database_url),
            **DURABLE_SETTINGS,
            "FACTCHECK_EXTRACTOR_TARGET": workers["extractor"].target,
            "FACTCHECK_CHECKER_TARGET": workers["checker"].target,
            "FACTCHECK_REPORTER_TARGET": workers["reporter"].target,
            **extra,
        }
        gateway = start_service("gateway", env)
        started.append(gateway)
        return gateway

    yield start
    stop_services(started)


@pytest.fixture
def store(database_url):
    stage_store = StageStore(database_url)
    yield stage_store
    stage_store.close()


@asynccontextmanager
async def connect(gateway: ServiceProcess):
    async with grpc.aio.insecure_channel(gateway.target) as channel:
        yield factcheck_pb2_grpc.FactCheckServiceStub(channel)


async def read_until(call, kind: str) -> list[factcheck_pb2.FactCheckEvent]:
    """Events of a Run stream up to and including the first of `kind`."""
    events = []
    async for response in call:
        events.append(response.event)
        if response.event.WhichOneof("event") == kind:
            return events
    raise AssertionError(f"the stream ended before {kind}: {kinds(events)}")


async def watch_all(stub, message_id: str, after_seq: int = 0) -> list[factcheck_pb2.FactCheckEvent]:
    request = factcheck_pb2.WatchRequest(message_id=message_id, after_seq=after_seq)
    return [response.event async for response in stub.Watch(request, timeout=60)]


def assert_gap_free(events, first_seq: int = 1) -> None:
    assert [event.seq for event in events] == list(range(first_seq, first_seq + len(events)))


def stage_types(store: StageStore, message_id: str) -> list[str]:
    return [row.stage_type for row in store.get_stages(message_id)]


async def wait_for_status(store: StageStore, message_id: str, timeout_s: float = 30.0) -> str:
    give_up = time.monotonic() + timeout_s
    while True:
        record = store.get_message(message_id, tenant_id=ANY_TENANT)
        assert record is not None
        if record.status != "RUNNING" or time.monotonic() >= give_up:
            return record.status
        await asyncio.sleep(0.1)


# --- crash recovery ----------------------------------------------------------------------------------


async def test_a_run_whose_gateway_is_killed_is_resumed_from_its_stored_stages(
    backend, start_gateway, fake_models, store
):
    """PostgreSQL: two replicas, the other one takes over. SQLite: the gateway restarted takes over."""
    # checker-b's first answer never comes (its gateway dies first); the resumed call gets an answer.
    fake_models.script("fake/checker-b", delay(120), default_reply())
    first = start_gateway()
    second = start_gateway() if backend == "postgresql" else None
    async with connect(first) as stub:
        before_kill = await read_until(stub.Run(content_request(), timeout=60), "checker_complete")
    message_id = before_kill[0].message_id
    assert before_kill[-1].checker_complete.model == "fake/checker-a"

    await asyncio.to_thread(fake_models.wait_for_requests, "fake/checker-b", 1)  # its held call (see the docstring)
    first.process.kill()  # SIGKILL: no shutdown, no lease handed over
    first.process.wait()
    killed_at = time.monotonic()
    if second is None:
        second = start_gateway()

    async with connect(second) as stub:
        watched = await watch_all(stub, message_id)
    resumed_after_s = time.monotonic() - killed_at

    assert kinds(watched) == FULL_SEQUENCE
    assert_gap_free(watched)
    assert watched[: len(before_kill)] == before_kill  # the same events, replayed from the store
    assert store.get_message(message_id, tenant_id=ANY_TENANT).status == "COMPLETE"
    assert stage_types(store, message_id) == ["extract", "verify_0", "verify_1", "report"]
    assert store.event_count(message_id) == len(FULL_SEQUENCE)
    # Stages stored before the kill were not called again; the interrupted one was.
    assert [r.kind for r in fake_models.requests_for("fake/extractor")] == ["extract"]
    assert len(fake_models.requests_for("fake/checker-a")) == 1
    assert len(fake_models.requests_for("fake/checker-b")) == 2
    assert [r.kind for r in fake_models.requests_for("fake/reporter")].count("report") == 1
    assert resumed_after_s < 30


async def test_a_paused_gateway_whose_run_was_taken_over_asks_no_model_again_when_it_wakes(
    start_gateway, fake_models, store
):
    """Two replicas on one database. The owner is paused (SIGSTOP) once the fast checker has answered, while
    the slow one is still asked; the other replica takes the run over and finishes it; then the owner
    wakes (SIGCONT) with the slow checker's answer waiting. It must see that the run is no longer its
    own before it pays for another call: the report is asked once in all, and no stored stage twice."""
    fake_models.script("fake/checker-b", delay(5))  # every checker-b call takes 5 s
    owner, other = start_gateway(), start_gateway()
    async with connect(owner) as stub:
        call = stub.Run(content_request(), timeout=90)
        before_pause = await read_until(call, "checker_complete")
        message_id = before_pause[0].message_id
        owner.process.send_signal(signal.SIGSTOP)
        try:
            async with connect(other) as other_stub:
                watched = await asyncio.wait_for(watch_all(other_stub, message_id), timeout=60)
        finally:
            owner.process.send_signal(signal.SIGCONT)
        await asyncio.sleep(3)  # the owner is awake: whatever it would still do, it has done by now
        call.cancel()

    assert kinds(watched) == FULL_SEQUENCE
    assert_gap_free(watched)
    assert watched[: len(before_pause)] == before_pause
    record = store.get_message(message_id, tenant_id=ANY_TENANT)
    assert (record.status, record.resume_count) == ("COMPLETE", 1)
    assert stage_types(store, message_id) == ["extract", "verify_0", "verify_1", "report"]
    asked = {model: [r.kind for r in fake_models.requests_for(model)] for model in ("fake/extractor", *CHECKERS)}
    reporter = [r.kind for r in fake_models.requests_for("fake/reporter")]
    assert reporter.count("report") == 1, reporter
    assert asked["fake/extractor"] == ["extract"]
    assert asked["fake/checker-a"] == ["verify"]  # stored before the pause: never asked again
    # In flight when the owner was paused (answered to nobody), then asked by the replica that took over.
    assert asked["fake/checker-b"] == ["verify", "verify"]
    assert owner.process.poll() is None  # it stopped the run, not itself
    # Every call a provider answered is ledgered, the woken owner's too (its commits are refused).
    with Session(store.engine) as session:
        query = select(ModelCallRecord.stage, ModelCallRecord.attempts, ModelCallRecord.outcome)
        rows = session.execute(query.where(ModelCallRecord.message_id == message_id)).all()
    served = {model: [r.kind for r in fake_models.requests_for(model)] for model in (*asked, "fake/reporter")}
    assert sum(row.attempts for row in rows) == sum(map(len, served.values())), (rows, served)


async def test_a_run_resumed_too_often_ends_failed_with_its_reason(start_gateway, fake_models, store):
    gateway = start_gateway(FACTCHECK_MAX_RUN_RESUMES="0")
    fake_models.script("fake/checker-b", delay(120), default_reply())
    async with connect(gateway) as stub:
        events = await read_until(stub.Run(content_request(), timeout=60), "checker_complete")
    await asyncio.to_thread(fake_models.wait_for_requests, "fake/checker-b", 1)
    gateway.process.kill()
    gateway.process.wait()
    message_id = events[0].message_id

    successor = start_gateway(FACTCHECK_MAX_RUN_RESUMES="0")
    async with connect(successor) as stub:
        watched = await watch_all(stub, message_id)
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
    assert kinds(watched)[-1] == "error"
    assert_gap_free(watched)
    assert "lost its gateway 1 time(s)" in watched[-1].error.message
    assert result.status == factcheck_pb2.MESSAGE_STATUS_FAILED
    assert result.error_message == watched[-1].error.message


# --- Watch ---------------------------------------------------------------------------------------------


async def test_a_client_that_reconnects_with_watch_gets_exactly_what_it_missed(start_gateway, fake_models):
    fake_models.set_latency("verify", 0.8)
    gateway = start_gateway()
    async with connect(gateway) as stub:
        call = stub.Run(content_request(), timeout=60)
        seen = await read_until(call, "verify_start")
        call.cancel()  # the client's stream breaks; the run goes on
        await asyncio.sleep(0.3)
        rest = await watch_all(stub, seen[0].message_id, after_seq=seen[-1].seq)
        replay = await watch_all(stub, seen[0].message_id)  # a finished run replays everything and ends

    assert kinds(seen + rest) == FULL_SEQUENCE
    assert_gap_free(seen + rest)
    assert replay == seen + rest


async def test_watch_follows_a_run_executing_on_another_replica(start_gateway, fake_models):
    fake_models.set_latency("verify", 0.5)
    runner, watcher = start_gateway(), start_gateway()
    async with connect(runner) as run_stub, connect(watcher) as watch_stub:
        call = run_stub.Run(content_request(), timeout=60)
        first = await call.read()
        watched = await watch_all(watch_stub, first.event.message_id)
        streamed = [first.event]
        while (response := await call.read()) is not grpc.aio.EOF:
            streamed.append(response.event)
    assert watched == streamed
    assert kinds(watched) == FULL_SEQUENCE


async def test_watch_and_cancel_reject_bad_ids(start_gateway):
    gateway = start_gateway()
    async with connect(gateway) as stub:
        for call in (
            lambda: watch_all(stub, str(uuid.uuid4())),
            lambda: stub.Cancel(factcheck_pb2.CancelRequest(message_id=str(uuid.uuid4()))),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await call()
            assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await watch_all(stub, "some-id", after_seq=-1)
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT


# --- Cancel --------------------------------------------------------------------------------------------


async def test_cancel_mid_verify_stops_the_run_and_its_model_calls(start_gateway, fake_models, store):
    for checker in ("fake/checker-a", "fake/checker-b"):
        fake_models.script(checker, hold_until_closed())
    gateway = start_gateway()
    async with connect(gateway) as stub:
        call = stub.Run(content_request(), timeout=60)
        events = await read_until(call, "verify_start")
        message_id = events[0].message_id
        await asyncio.sleep(0.3)  # both checker calls reach the model server
        cancelled = await stub.Cancel(factcheck_pb2.CancelRequest(message_id=message_id), timeout=30)
        events += [response.event async for response in call]
        with pytest.raises(grpc.aio.AioRpcError) as again:
            await stub.Cancel(factcheck_pb2.CancelRequest(message_id=message_id))
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
        watched = await watch_all(stub, message_id)

    assert cancelled.status == factcheck_pb2.MESSAGE_STATUS_CANCELLED
    assert kinds(events)[-1] == "cancelled" and events[-1].cancelled.reason == "Cancelled by the caller."
    assert watched == events
    assert again.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "CANCELLED" in (again.value.details() or "")
    assert result.status == factcheck_pb2.MESSAGE_STATUS_CANCELLED
    assert result.error_message == "Cancelled by the caller."
    assert stage_types(store, message_id) == ["extract"]  # no later stage rows
    # The downstream calls were cancelled: the model server saw both connections close.
    give_up = time.monotonic() + 10
    while sorted(CLOSED_BY_CLIENT) != ["fake/checker-a", "fake/checker-b"] and time.monotonic() < give_up:
        await asyncio.sleep(0.1)
    assert sorted(CLOSED_BY_CLIENT) == ["fake/checker-a", "fake/checker-b"]


async def test_cancel_from_another_replica(start_gateway, fake_models, store):
    for checker in ("fake/checker-a", "fake/checker-b"):
        fake_models.script(checker, hold_until_closed())
    runner, other = start_gateway(), start_gateway()
    async with connect(runner) as run_stub, connect(other) as other_stub:
        call = run_stub.Run(content_request(), timeout=60)
        events = await read_until(call, "verify_start")
        cancelled = await other_stub.Cancel(factcheck_pb2.CancelRequest(message_id=events[0].message_id), timeout=30)
        events += [response.event async for response in call]
    assert cancelled.status == factcheck_pb2.MESSAGE_STATUS_CANCELLED
    assert kinds(events)[-1] == "cancelled"
    assert_gap_free(events)


async def test_cancel_of_a_run_whose_gateway_was_killed_ends_it_at_once(start_gateway, fake_models, store):
    """The owner is SIGKILLed mid-verify with a 20 s lease left. Cancel on the other replica answers
    CANCELLED within seconds (not once the lease lapses), and a watcher there ends with `cancelled`."""
    for checker in CHECKERS:
        fake_models.script(checker, hold_until_closed())
    long_lease = {"FACTCHECK_RUN_LEASE_S": "20"}
    owner, other = start_gateway(**long_lease), start_gateway(**long_lease)
    async with connect(owner) as stub:
        before_kill = await read_until(stub.Run(content_request(), timeout=60), "verify_start")
    message_id = before_kill[0].message_id
    owner.process.kill()
    owner.process.wait()

    async with connect(other) as stub:
        watcher = asyncio.create_task(watch_all(stub, message_id))
        await asyncio.sleep(0.5)
        assert not watcher.done()  # it follows the (orphaned) run
        asked_at = time.monotonic()
        cancelled = await stub.Cancel(factcheck_pb2.CancelRequest(message_id=message_id), timeout=30)
        answered_s = time.monotonic() - asked_at
        watched = await asyncio.wait_for(watcher, timeout=10)
        watcher_ended_s = time.monotonic() - asked_at
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result

    assert cancelled.status == factcheck_pb2.MESSAGE_STATUS_CANCELLED
    assert answered_s < 5, answered_s  # the lease had about 20 s left
    assert watcher_ended_s < 6, watcher_ended_s
    assert kinds(watched) == kinds(before_kill) + ["cancelled"]
    assert watched[: len(before_kill)] == before_kill
    assert_gap_free(watched)
    assert watched[-1].cancelled.reason == "Cancelled by the caller."
    assert result.status == factcheck_pb2.MESSAGE_STATUS_CANCELLED
    assert result.error_message == "Cancelled by the caller."
    assert stage_types(store, message_id) == ["extract"]
    record = store.get_message(message_id, tenant_id=ANY_TENANT)
    assert (record.lease_owner, record.resume_count) == (None, 0)  # ended in the store, not resumed first


# --- idempotent Run ------------------------------------------------------------------------------------


async def test_retrying_run_with_the_same_request_id_attaches_to_the_first_run(start_gateway, fake_models, store):
    fake_models.set_latency("verify", 0.5)
    request = content_request()
    request.request_id = str(uuid.uuid4())
    gateway = start_gateway()
    async with connect(gateway) as stub:
        call = stub.Run(request, timeout=60)
        first = await read_until(call, "extract_complete")
        call.cancel()  # the stream drops; the client retries
        retried = [response.event async for response in stub.Run(request, timeout=60)]

        changed = content_request(content="Another text entirely. It has 2 sentences.")
        changed.request_id = request.request_id
        with pytest.raises(grpc.aio.AioRpcError) as reused:
            await read_until(stub.Run(changed, timeout=60), "complete")
        bad = content_request()
        bad.request_id = "not-a-uuid"
        with pytest.raises(grpc.aio.AioRpcError) as invalid:
            await read_until(stub.Run(bad, timeout=60), "complete")

    assert kinds(retried) == FULL_SEQUENCE
    assert retried[: len(first)] == first  # the same run, replayed
    assert {event.message_id for event in retried} == {first[0].message_id}
    assert len([r for r in fake_models.requests_for("fake/extractor") if r.kind == "extract"]) == 1
    assert store.find_by_request_id(request.request_id, tenant_id="default").id == first[0].message_id
    assert reused.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert request.request_id in (reused.value.details() or "") and first[0].message_id in (
        reused.value.details() or ""
    )
    assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_concurrent_runs_with_one_request_id_start_one_run(start_gateway, fake_models):
    request = content_request()
    request.request_id = str(uuid.uuid4())
    gateway = start_gateway()
    async with connect(gateway) as stub:
        streams = await asyncio.gather(*[read_until(stub.Run(request, timeout=60), "complete") for _ in range(4)])
    assert len({events[0].message_id for events in streams}) == 1
    assert all(kinds(events) == FULL_SEQUENCE for events in streams)
    assert len([r for r in fake_models.requests_for("fake/extractor") if r.kind == "extract"]) == 1


@pytest.mark.parametrize("limit", ["FACTCHECK_MAX_CONCURRENT_RUNS", "FACTCHECK_MAX_CONCURRENT_RUNS_PER_TENANT"])
async def test_a_retried_run_attaches_to_its_own_run_at_the_run_limit(limit, start_gateway, fake_models):
    """At the limit a new run is refused, but a Run retried with the request_id of the tenant's running run
    attaches to it: it starts nothing, so it counts against no limit."""
    fake_models.set_latency("verify", 1.0)
    gateway = start_gateway(**{limit: "1"})
    request = content_request()
    request.request_id = str(uuid.uuid4())
    async with connect(gateway) as stub:
        call = stub.Run(request, timeout=60)
        first = await read_until(call, "extract_complete")
        call.cancel()  # the stream breaks; the run goes on, holding the only slot
        another = content_request()
        another.request_id = str(uuid.uuid4())
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await read_until(stub.Run(another, timeout=60), "complete")
        retried = await read_until(stub.Run(request, timeout=60), "complete")

    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert limit in (refused.value.details() or "")
    assert kinds(retried) == FULL_SEQUENCE
    assert retried[: len(first)] == first  # the same run, replayed from its first event
    assert len([r for r in fake_models.requests_for("fake/extractor") if r.kind == "extract"]) == 1


async def test_a_caller_that_leaves_while_its_run_is_being_recorded_leaves_no_orphan(start_gateway, store):
    """Every run whose row was stored is executed, even when its caller cancelled the call mid-way.
    (A long lease: recovery cannot be what finishes them within the test.)"""
    gateway = start_gateway(FACTCHECK_RUN_LEASE_S="120")
    request_ids = [str(uuid.uuid4()) for _ in range(12)]
    async with connect(gateway) as stub:
        for index, request_id in enumerate(request_ids):
            request = content_request()
            request.request_id = request_id
            call = stub.Run(request, timeout=60)
            await asyncio.sleep(0.002 * index)
            call.cancel()
        await asyncio.sleep(0.5)
        stored = [store.find_by_request_id(r, tenant_id="default") for r in request_ids]
        started = [record for record in stored if record is not None]
        statuses = [await wait_for_status(store, record.id, timeout_s=30) for record in started]
    assert started, "no run was stored: the test cancelled every call too early to say anything"
    assert statuses == ["COMPLETE"] * len(started)


# --- council mode: the same durability ------------------------------------------------------

COUNCIL_SEQUENCE = [
    "factcheck_start",
    "respond_start",
    "response_complete",
    "response_complete",
    "responses_anonymised",
    "council_check_start",
    "council_check_complete",
    "council_check_complete",
    "council_aggregate_complete",
    "title_complete",
    "complete",
]


def council_request() -> factcheck_pb2.RunRequest:
    return factcheck_pb2.RunRequest(
        question="When was the Eiffel Tower completed?",
        mode=factcheck_pb2.MODE_COUNCIL,
        council_config=council_pb2.CouncilConfig(
            council_models=["fake/alpha", "fake/beta"], fact_checker_models=["fake/checker-a", "fake/checker-b"]
        ),
    )


async def test_a_council_run_whose_gateway_is_killed_is_resumed_without_asking_again(
    backend, start_gateway, fake_models, store
):
    fake_models.script("fake/checker-b", delay(120), default_reply())
    first = start_gateway()
    second = start_gateway() if backend == "postgresql" else None
    async with connect(first) as stub:
        before_kill = await read_until(stub.Run(council_request(), timeout=60), "council_check_complete")
    message_id = before_kill[0].message_id
    await asyncio.to_thread(fake_models.wait_for_requests, "fake/checker-b", 1)
    first.process.kill()
    first.process.wait()
    if second is None:
        second = start_gateway()
    async with connect(second) as stub:
        watched = await watch_all(stub, message_id)
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result

    assert kinds(watched) == COUNCIL_SEQUENCE
    assert_gap_free(watched)
    assert watched[: len(before_kill)] == before_kill
    assert stage_types(store, message_id) == [
        "respond_0",
        "respond_1",
        "anonymise",
        "council_check_0",
        "council_check_1",
        "council_aggregate",
    ]
    # The answers and the first fact-check were stored, so they were not asked for again.
    assert len(fake_models.requests_for("fake/alpha")) == len(fake_models.requests_for("fake/beta")) == 1
    assert len(fake_models.requests_for("fake/checker-a")) == 1
    assert len(fake_models.requests_for("fake/checker-b")) == 2
    # The labels drawn again on resume are the ones the stored answers carry.
    assert result.council.aggregate == watched[-3].council_aggregate_complete.aggregate
    assert {r.label for r in result.council.responses} == set(watched[4].responses_anonymised.labels)


async def test_cancel_mid_council_check(start_gateway, fake_models, store):
    for checker in ("fake/checker-a", "fake/checker-b"):
        fake_models.script(checker, hold_until_closed())
    gateway = start_gateway()
    async with connect(gateway) as stub:
        call = stub.Run(council_request(), timeout=60)
        events = await read_until(call, "council_check_start")
        message_id = events[0].message_id
        await asyncio.sleep(0.3)
        cancelled = await stub.Cancel(factcheck_pb2.CancelRequest(message_id=message_id), timeout=30)
        events += [response.event async for response in call]
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
    assert cancelled.status == factcheck_pb2.MESSAGE_STATUS_CANCELLED
    assert kinds(events)[-1] == "cancelled"
    assert result.status == factcheck_pb2.MESSAGE_STATUS_CANCELLED and len(result.council.responses) == 2
    assert stage_types(store, message_id) == ["respond_0", "respond_1", "anonymise"]


# --- entailment mode ----------------------------------------------------------------------------------

ENTAILMENT_ITEMS = [
    pb.EntailmentItem(
        claim="The bridge opened in 1932.", source_excerpt="The bridge opened in 1932.", source_type="city archive"
    ),
    pb.EntailmentItem(
        claim="The tunnel is 2 km long.", source_excerpt="The tunnel is 2 km long.", source_type="travel blog"
    ),
]


def entailment_run_request() -> factcheck_pb2.RunRequest:
    config = pb.EntailmentConfig(
        items=ENTAILMENT_ITEMS,
        extractor_model="fake/ext",
        reliability_model="fake/rel",
        judge_model="fake/judge",
        auditor_model="fake/aud",
    )
    return factcheck_pb2.RunRequest(question="Entailed?", mode=factcheck_pb2.MODE_ENTAILMENT, entailment_config=config)


async def test_an_entailment_run_whose_gateway_is_killed_is_resumed_without_asking_again(
    backend, start_gateway, fake_models, store
):
    # The first judge call answers, the second hangs until the gateway is killed, then judges answer.
    fake_models.script("fake/judge", default_reply(), delay(120), default_reply())
    first = start_gateway()
    second = start_gateway() if backend == "postgresql" else None
    async with connect(first) as stub:
        before_kill = await read_until(stub.Run(entailment_run_request(), timeout=60), "entailment_item_complete")
    message_id = before_kill[0].message_id
    await asyncio.to_thread(fake_models.wait_for_requests, "fake/judge", 2)
    first.process.kill()
    first.process.wait()
    if second is None:
        second = start_gateway()
    async with connect(second) as stub:
        watched = await watch_all(stub, message_id)
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result

    assert kinds(watched)[-2:] == ["entailment_complete", "complete"]
    assert_gap_free(watched)
    assert watched[: len(before_kill)] == before_kill
    assert kinds(watched).count("entailment_item_complete") == 2
    assert kinds(watched).count("entailment_agent_complete") == 8  # each agent output once
    assert sorted(stage_types(store, message_id)) == sorted(
        f"entail_{i}_{kind}" for i in (0, 1) for kind in ("extractor", "reliability", "judge", "auditor", "final")
    )
    # Stored outputs were not asked for again: only the hanging judge call was repeated.
    assert len(fake_models.requests_for("fake/ext")) == len(fake_models.requests_for("fake/rel")) == 2
    assert len(fake_models.requests_for("fake/judge")) == 3
    assert len(fake_models.requests_for("fake/aud")) == 2
    assert [item.final.final_verdict for item in result.entailment.items] == [pb.ENTAILMENT_VERDICT_SUPPORTED] * 2


# --- claim-level citations -----------------------------------------------------------------------

CITED_SOURCE = common_pb2.Source(
    id="climate",
    title="Climate facts",
    text=(
        "The Paris Agreement was signed in 2015 by 196 countries. "
        "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times. "
        "Water boils at lower temperatures at high altitude."
    ),
)


async def test_a_citations_run_killed_during_its_review_resumes_without_duplicating_claims(
    backend, start_gateway, fake_models, store
):
    """The claim rows and claim_verified events stored before the kill are neither written nor sent again;
    the review is asked again and its correction is stored once."""
    fake_models.script(
        "fake/checker-a",
        verdicts(cite="quote", support="SUPPORTED"),
        delay(120),  # the first review never comes back: its gateway dies
        review(decisions={"claim_3": ("REMOVE", "", "")}),
    )
    fake_models.script("fake/checker-b", verdicts(cite="quote", support="SUPPORTED"))
    request = content_request(sources=[CITED_SOURCE], use_knowledge_store=False, citations=True)
    first = start_gateway()
    second = start_gateway() if backend == "postgresql" else None
    async with connect(first) as stub:
        before_kill = []
        async for response in stub.Run(request, timeout=60):
            before_kill.append(response.event)
            if kinds(before_kill).count("claim_verified") == 3:  # the review is under way (and hangs)
                break
    message_id = before_kill[0].message_id
    await asyncio.to_thread(fake_models.wait_for_requests, "fake/checker-a", 2)  # the held review
    first.process.kill()
    first.process.wait()
    if second is None:
        second = start_gateway()
    async with connect(second) as stub:
        watched = await watch_all(stub, message_id)

    assert_gap_free(watched)
    assert watched[: len(before_kill)] == before_kill
    assert kinds(watched)[-1] == "complete"
    verified = [e.claim_verified.claim_key for e in watched if e.WhichOneof("event") == "claim_verified"]
    assert verified == ["claim_1", "claim_2", "claim_3"]
    [corrected] = [e.citation_corrected for e in watched if e.WhichOneof("event") == "citation_corrected"]
    assert corrected.correction_type == citations_pb2.CORRECTION_TYPE_REMOVE
    assert [r.kind for r in fake_models.requests_for("fake/checker-a")] == ["verify", "review", "review"]
    with Session(store.engine) as session:
        keys = session.scalars(select(ClaimRow.claim_key).where(ClaimRow.message_id == message_id)).all()
        assert sorted(keys) == ["claim_1", "claim_2", "claim_3"]
        corrections = session.scalars(
            select(CitationCorrectionRow)
            .join(ClaimRow, ClaimRow.id == CitationCorrectionRow.claim_id)
            .where(ClaimRow.message_id == message_id)
        ).all()
        assert [c.correction_type for c in corrections] == ["remove"]
    assert "citations" in stage_types(store, message_id)
