"""Every call a run started is in its ledger, whatever ended the run: a budget that stops the run
while (or just as) its title call returns, and a Cancel while calls are under way. A call whose
service reported it keeps that report; a call the run cut short before its trailer came is one
`cancelled` row with estimated usage (`usage_estimated`). Real processes, SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from factcheck_gateway.ledger.queries import LedgerStore
from factcheck_gateway.store.stage_store import StageStore
from tests.conftest import content_request, kinds, payload, suite_environment
from tests.processes import start_suite

pytestmark = pytest.mark.e2e

EXTRACTION_S = 0.4  # the fake's extraction latency: when the budget stops the run
# Title latencies around the moment the budget stops the run (just after the extraction returns).
TITLE_OFFSETS_S = (-0.1, -0.02, 0.0, 0.01, 0.03, 0.06, 0.15, 1.0)


@pytest.fixture(scope="module")
def suite(fake_models, suite_database):
    running = start_suite(suite_environment(fake_models, suite_database))
    yield running
    running.stop()


def ledger_rows(database_url: str, message_id: str) -> list[dict]:
    store = StageStore(database_url)
    try:
        return LedgerStore(store.engine).run_calls(message_id)
    finally:
        store.close()


def assert_every_served_call_is_ledgered(rows: list[dict], fake_models) -> None:
    """One row per model request the fake received (each attempt counted); the calls a service
    reported carry the fake's own usage; the others are cancelled rows marked estimated."""
    assert sum(row["attempts"] for row in rows) == len(fake_models.requests), (rows, fake_models.requests)
    for row in rows:
        if row["usage_estimated"]:
            assert row["outcome"] == "cancelled" and row["prompt_tokens"] > 0 and row["completion_tokens"] == 0
    reported_models = {row["model"] for row in rows if not row["usage_estimated"]}
    for model in reported_models - {row["model"] for row in rows if row["usage_estimated"]}:
        mine = [row for row in rows if row["model"] == model]
        served = fake_models.reported_usage(model)
        assert sum(row["prompt_tokens"] for row in mine) == served["prompt_tokens"], model
        assert sum(row["completion_tokens"] for row in mine) == served["completion_tokens"], model


async def test_a_title_call_under_way_or_returning_as_the_budget_stops_the_run_is_ledgered(
    suite, suite_database, fake_models
):
    async with grpc.aio.insecure_channel(suite.gateway_target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        outcomes = []
        for offset in TITLE_OFFSETS_S:
            fake_models.reset()
            fake_models.set_latency("extract", EXTRACTION_S)
            fake_models.set_latency("title", EXTRACTION_S + offset)
            request = content_request()
            request.budget.max_tokens = 10  # the extraction alone spends it: the run stops after it
            events = [r.event async for r in stub.Run(request, timeout=60)]
            complete = payload(events, "complete")
            assert complete.status == factcheck_pb2.MESSAGE_STATUS_PARTIAL, offset
            await asyncio.sleep(0.3)  # a late answer to a cancelled call would show up at the fake
            rows = ledger_rows(suite_database, events[0].message_id)
            stages = sorted(row["stage"] for row in rows)
            assert stages == ["extract", "title"], (offset, rows)  # the title's row is never lost
            assert_every_served_call_is_ledgered(rows, fake_models)
            assert complete.usage.total_tokens == sum(row["total_tokens"] for row in rows), offset
            [title] = [row for row in rows if row["stage"] == "title"]
            if offset >= 1.0:  # still under way when the run ended: cut short, its usage estimated
                assert title["outcome"] == "cancelled" and title["usage_estimated"], title
            outcomes.append((offset, title["outcome"], title["latency_ms"]))
    print("title outcomes (offset, outcome, latency ms):", outcomes)


async def test_calls_under_way_when_a_run_is_cancelled_are_ledgered_as_cancelled_with_estimated_usage(
    suite, suite_database, fake_models
):
    fake_models.reset()
    fake_models.set_latency("verify", 30.0)  # the checkers are still answering when Cancel comes
    fake_models.set_latency("title", 30.0)
    async with grpc.aio.insecure_channel(suite.gateway_target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        events = []
        stream = stub.Run(content_request(), timeout=60)
        async for response in stream:
            events.append(response.event)
            if response.event.WhichOneof("event") == "verify_start":
                break
        message_id = events[0].message_id
        deadline = time.monotonic() + 10
        # Every call has reached the model (the extraction's, the title's, both checkers'): Cancel cuts three short.
        while len(fake_models.requests) < 4 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert sorted(r.kind for r in fake_models.requests) == ["extract", "title", "verify", "verify"]
        await stub.Cancel(factcheck_pb2.CancelRequest(message_id=message_id), timeout=10)
        async for response in stream:
            events.append(response.event)
    assert kinds(events)[-1] == "cancelled"
    rows = ledger_rows(suite_database, message_id)
    by_stage = sorted((row["stage"], row["outcome"], bool(row["usage_estimated"])) for row in rows)
    assert by_stage == [
        ("extract", "ok", False),
        ("title", "cancelled", True),
        ("verify", "cancelled", True),
        ("verify", "cancelled", True),
    ], rows
    assert_every_served_call_is_ledgered(rows, fake_models)
    assert {row["model"] for row in rows if row["stage"] == "verify"} == {"fake/checker-a", "fake/checker-b"}
