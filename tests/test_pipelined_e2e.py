"""Pipelined verification end to end: the services as processes, on SQLite and PostgreSQL.

A pipelined run and a sequential run of the same content with the same fake verdicts store
the same rows and results, and give the same consensus and report; the pipelined run's
events are a sequential run's, in its order (docs/api.md#events), with claims_extracted and checker_batch_complete
between them, every one stored, gap-free. Checkers start before the extractor has finished.
Cancel stops in-flight batch calls; a pipelined run whose gateway is killed is resumed
(sequentially) from what it stored.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from factcheck.kit.security.tenants import DEFAULT_TENANT
from factcheck.v1 import common_pb2, factcheck_pb2
from factcheck_gateway.store.stage_store import ANY_TENANT
from tests import test_durable_runs as durable
from tests.conftest import CHECKERS, FULL_SEQUENCE, content_request, kinds, payload
from tests.fake_model_server import CLOSED_BY_CLIENT, default_reply, delay, fail, hold_until_closed, verdicts
from tests.test_durable_runs import assert_gap_free, connect, read_until, wait_for_status, watch_all

# The durable-runs module's fixtures: a gateway per test (some are killed), shared workers, both backends.
backend, database_url, workers = durable.backend, durable.database_url, durable.workers
start_gateway, store = durable.start_gateway, durable.store

pytestmark = pytest.mark.e2e

CONTENT = (
    "The Paris Agreement was signed in 2015 by 196 countries. "
    "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times. "
    "Water boils at lower temperatures at high altitude. "
    "The Eiffel Tower is about 330 metres tall. "
    "Mount Everest is 8849 metres high."
)
SOURCES = [
    common_pb2.Source(id="paris", title="Paris Agreement", text="The Paris Agreement was adopted in 2015 in Paris."),
    common_pb2.Source(id="tower", title="Eiffel Tower", text="The Eiffel Tower is 330 metres tall including antennas."),
]
NEW_KINDS = ("claims_extracted", "checker_batch_complete")
# Extraction streams at this rate (about 0.7 s for the five claims), so checkers can start early.
EXTRACT_TOKENS_PER_S = 200


def spec_kinds(events) -> list[str]:
    return [kind for kind in kinds(events) if kind not in NEW_KINDS]


def comparable(result: factcheck_pb2.FactCheckResult) -> factcheck_pb2.FactCheckResult:
    """A stored result without what differs between two runs of the same request: ids, times, raw text,
    and the usage (a pipelined run makes more, smaller checker calls)."""
    copy = factcheck_pb2.FactCheckResult()
    copy.CopyFrom(result)
    for name in ("message_id", "conversation_id", "created_at", "updated_at", "usage"):
        copy.ClearField(name)
    for part in (copy.content, copy.extraction, copy.report, copy.evidence, *copy.verification.checkers):
        part.ClearField("response_time_ms")
    return copy


def stored_rows(store, message_id: str) -> list[tuple]:
    return [(r.stage_type, r.stage_order, r.role, r.model, r.parsed_data) for r in store.get_stages(message_id)]


async def test_a_pipelined_run_stores_what_a_sequential_run_stores(start_gateway, fake_models, store):
    fake_models.set_token_rate("fake/extractor", EXTRACT_TOKENS_PER_S)
    fake_models.script("fake/checker-a", verdicts({"claim_2": "DISPUTED", "claim_4": "UNVERIFIABLE"}))
    fake_models.script("fake/checker-b", verdicts({"claim_2": "DISPUTED"}, confidence={"claim_5": "LOW"}))
    gateway = start_gateway()
    async with connect(gateway) as stub:
        sequential = [r.event async for r in stub.Run(content_request(CONTENT, sources=SOURCES), timeout=60)]
        started = len(fake_models.requests)
        pipelined = [
            r.event async for r in stub.Run(content_request(CONTENT, sources=SOURCES, pipelined=True), timeout=60)
        ]
        results = [
            (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
            for events in (sequential, pipelined)
        ]
        watched = await watch_all(stub, pipelined[0].message_id)
    requests = fake_models.requests[started:]

    # A sequential run's events in its order (evidence included), the new ones between them.
    assert (
        spec_kinds(pipelined)
        == spec_kinds(sequential)
        == FULL_SEQUENCE[:3] + ["evidence_retrieved"] + (FULL_SEQUENCE[3:])
    )
    assert payload(pipelined, "factcheck_start").config.pipelined
    assert not payload(sequential, "factcheck_start").config.pipelined
    order = kinds(pipelined)
    assert order.index("claims_extracted") < order.index("checker_batch_complete") < order.index("extract_complete")
    assert_gap_free(pipelined)
    assert watched == pipelined  # every event stored, as streamed
    assert store.event_count(pipelined[0].message_id) == len(pipelined)

    # The claims streamed are extract_complete's; each checker's batches are its checker_complete.
    extracted = payload(pipelined, "extract_complete")
    streamed = [c for e in pipelined if e.WhichOneof("event") == "claims_extracted" for c in e.claims_extracted.claims]
    assert streamed == list(extracted.claims) == list(payload(sequential, "extract_complete").claims)
    assert len(streamed) == 5
    for index, checker in enumerate(CHECKERS):
        batches = [
            e.checker_batch_complete
            for e in pipelined
            if e.WhichOneof("event") == "checker_batch_complete" and e.checker_batch_complete.checker_index == index
        ]
        [complete] = [
            e.checker_complete
            for e in pipelined
            if e.WhichOneof("event") == "checker_complete" and e.checker_complete.checker_index == index
        ]
        assert [b.batch for b in batches] == list(range(1, len(batches) + 1)) and len(batches) > 1
        assert [v for b in batches for v in b.verifications] == list(complete.verifications)
        assert all(b.model == checker for b in batches)

    # The same consensus, evidence, report and stored result as the sequential run.
    assert payload(pipelined, "all_checkers_complete") == payload(sequential, "all_checkers_complete")
    assert payload(pipelined, "evidence_retrieved").passages == payload(sequential, "evidence_retrieved").passages
    assert payload(pipelined, "evidence_retrieved").claims == payload(sequential, "evidence_retrieved").claims
    reports = [payload(events, "report_complete") for events in (sequential, pipelined)]
    assert reports[0].report_text == reports[1].report_text and reports[0].summary == reports[1].summary
    assert reports[1].reliability_score == 85
    assert comparable(results[1]) == comparable(results[0])
    consensus = {c.claim_id: c.consensus_verdict for c in results[1].verification.consensus}
    assert consensus["claim_2"] == common_pb2.VERDICT_DISPUTED
    assert stored_rows(store, pipelined[0].message_id) == stored_rows(store, sequential[0].message_id)
    message = store.get_message(pipelined[0].message_id, tenant_id=DEFAULT_TENANT)
    assert message.status == "COMPLETE" and message.request_config["pipelined"] is True
    assert "pipelined" not in store.get_message(sequential[0].message_id, tenant_id=DEFAULT_TENANT).request_config

    # Verification overlapped extraction: checkers were asked before the extractor had written its answer.
    [extract_request] = [r for r in requests if r.kind == "extract"]
    assert extract_request.body["stream"] is True
    first_verify = min(r.time for r in requests if r.kind == "verify")
    extraction_s = len(payload(pipelined, "extract_complete").claims) * 30 / EXTRACT_TOKENS_PER_S
    assert first_verify - extract_request.time < extraction_s * 0.6


async def test_a_failing_checker_fails_alone_in_pipelined_mode(start_gateway, fake_models, store):
    fake_models.script("fake/checker-b", default_reply(), fail(400))  # its second batch is refused
    fake_models.set_token_rate("fake/extractor", EXTRACT_TOKENS_PER_S)
    gateway = start_gateway()
    async with connect(gateway) as stub:
        events = [r.event async for r in stub.Run(content_request(CONTENT, pipelined=True), timeout=60)]
    assert spec_kinds(events) == FULL_SEQUENCE[:5] + FULL_SEQUENCE[6:]  # one checker_complete
    done = payload(events, "all_checkers_complete")
    assert done.checker_count == 1 and [f.checker_index for f in done.failed_checkers] == [1]
    assert "HTTP 400" in done.failed_checkers[0].message
    assert [r.stage_type for r in store.get_stages(events[0].message_id)] == ["extract", "verify_0", "report"]
    result_failures = store.get_message(events[0].message_id, tenant_id=DEFAULT_TENANT).failures
    assert [f["stage"] for f in result_failures] == ["verify_1"]


async def test_a_checker_that_never_answers_fails_at_the_stage_deadline(start_gateway, fake_models, store):
    fake_models.set_token_rate("fake/extractor", EXTRACT_TOKENS_PER_S)
    fake_models.script("fake/checker-b", hold_until_closed(limit_s=20))
    gateway = start_gateway(FACTCHECK_STAGE_TIMEOUT_MS="2000")
    async with connect(gateway) as stub:
        started = time.monotonic()
        events = [r.event async for r in stub.Run(content_request(CONTENT, pipelined=True), timeout=60)]
        elapsed = time.monotonic() - started
    done = payload(events, "all_checkers_complete")
    assert [(f.checker_index, f.message.split(":")[0]) for f in done.failed_checkers] == [(1, "DEADLINE_EXCEEDED")]
    assert kinds(events)[-1] == "complete" and elapsed < 2 + 3  # the extraction, then at most one stage timeout
    assert [r.stage_type for r in store.get_stages(events[0].message_id)] == ["extract", "verify_0", "report"]


async def test_cancel_stops_the_extraction_and_the_batches_in_flight(start_gateway, fake_models, store):
    fake_models.set_token_rate("fake/extractor", 50)  # still writing when the run is cancelled
    for checker in CHECKERS:
        fake_models.script(checker, hold_until_closed())
    gateway = start_gateway()
    async with connect(gateway) as stub:
        call = stub.Run(content_request(CONTENT, pipelined=True), timeout=60)
        events = await read_until(call, "claims_extracted")
        message_id = events[0].message_id
        await asyncio.sleep(0.3)  # the first batch reaches both checkers' model
        cancelled = await stub.Cancel(factcheck_pb2.CancelRequest(message_id=message_id), timeout=30)
        events += [response.event async for response in call]
        watched = await watch_all(stub, message_id)
    assert cancelled.status == factcheck_pb2.MESSAGE_STATUS_CANCELLED
    assert kinds(events)[-1] == "cancelled" and watched == events
    assert_gap_free(events)
    assert store.get_stages(message_id) == []
    give_up = time.monotonic() + 10
    while sorted(CLOSED_BY_CLIENT) != sorted(CHECKERS) and time.monotonic() < give_up:
        await asyncio.sleep(0.05)
    assert sorted(CLOSED_BY_CLIENT) == sorted(CHECKERS)


async def test_a_pipelined_run_whose_gateway_is_killed_is_resumed_sequentially(
    backend, start_gateway, fake_models, store
):
    fake_models.set_token_rate("fake/extractor", EXTRACT_TOKENS_PER_S)
    fake_models.script("fake/checker-b", delay(120), default_reply())  # its first batch never comes back
    first = start_gateway()
    async with connect(first) as stub:
        before_kill = await read_until(
            stub.Run(content_request(CONTENT, pipelined=True), timeout=60), "checker_batch_complete"
        )
    message_id = before_kill[0].message_id
    await asyncio.to_thread(fake_models.wait_for_requests, "fake/checker-b", 1)
    first.process.kill()
    first.process.wait()
    second = start_gateway()
    async with connect(second) as stub:
        watched = await watch_all(stub, message_id)
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result

    assert_gap_free(watched)
    assert watched[: len(before_kill)] == before_kill
    assert spec_kinds(watched) == FULL_SEQUENCE
    resumed = kinds(watched)[len(before_kill) :]
    assert not set(resumed) & set(NEW_KINDS)  # the rest ran sequentially
    assert await wait_for_status(store, message_id) == "COMPLETE"
    assert result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE and len(result.extraction.claims) == 5
    assert [r.stage_type for r in store.get_stages(message_id)] == ["extract", "verify_0", "verify_1", "report"]
    assert store.get_message(message_id, tenant_id=ANY_TENANT).resume_count == 1
