"""Run budgets: a run whose budget is spent stops calling models and ends PARTIAL with
the reason, keeping what it stored; budgets come from the request or the tenant's defaults."""

from __future__ import annotations

import grpc
import pytest

from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc, usage_pb2
from factcheck_gateway.ledger.queries import LedgerStore
from factcheck_gateway.store.stage_store import StageStore
from tests.conftest import content_request, kinds, payload
from tests.inprocess import inprocess_settings, serve_everything
from tests.test_council_e2e import council_request, script_answers

PRICES = {"fake": {"input": 10.0, "output": 10.0}}  # $10 per million tokens


async def run(settings, request):
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        events = [r.event async for r in stub.Run(request, timeout=60)]
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
    return events, result


def stored(database_url: str, message_id: str):
    store = StageStore(database_url)
    try:
        return [s.stage_type for s in store.get_stages(message_id)], LedgerStore(store.engine).run_calls(message_id)
    finally:
        store.close()


async def test_a_token_budget_stops_a_fact_check_after_extraction(database_url, fake_models):
    fake_models.reset()
    request = content_request()
    request.budget.max_tokens = 10  # the extraction alone uses more
    events, result = await run(inprocess_settings(fake_models.base_url, database_url), request)

    assert kinds(events) == ["factcheck_start", "extract_start", "extract_complete", "verify_start", "complete"]
    complete = payload(events, "complete")
    assert complete.status == factcheck_pb2.MESSAGE_STATUS_PARTIAL
    assert "budget of 10 tokens" in complete.stop_reason and "stopped calling models" in complete.stop_reason
    stages, calls = stored(database_url, events[0].message_id)
    assert stages == ["extract"]  # kept
    # The extraction and the title (started with the run) were paid for; no checker was called.
    assert sorted(call["stage"] for call in calls) in (["extract"], ["extract", "title"])
    assert not fake_models.requests_for("fake/checker-a") and not fake_models.requests_for("fake/checker-b")
    assert complete.usage.total_tokens == sum(call["total_tokens"] for call in calls) > 10
    assert result.status == factcheck_pb2.MESSAGE_STATUS_PARTIAL
    # The refused calls are failed stages like any other, and the budget says why the run stopped.
    assert {(f.stage, f.code) for f in result.failures} >= {
        ("verify_0", "RESOURCE_EXHAUSTED"),
        ("verify_1", "RESOURCE_EXHAUSTED"),
        ("budget", "RESOURCE_EXHAUSTED"),
    }
    assert result.failures[-1].message == complete.stop_reason


async def test_a_cost_budget_from_the_tenant_defaults_stops_a_council(database_url, fake_models):
    fake_models.reset()
    script_answers(fake_models)
    settings = inprocess_settings(
        fake_models.base_url, database_url, model_prices=PRICES, tenant_budgets={"default": {"max_cost_usd": 0.0001}}
    )
    events, result = await run(settings, council_request())

    complete = payload(events, "complete")
    assert complete.status == factcheck_pb2.MESSAGE_STATUS_PARTIAL
    assert "max_cost_usd" in complete.stop_reason
    assert "council_aggregate_complete" not in kinds(events)
    stages, calls = stored(database_url, events[0].message_id)
    assert any(stage.startswith("respond_") for stage in stages)
    assert complete.usage.cost_usd == pytest.approx(sum(call["cost_usd"] for call in calls))
    assert complete.usage.cost_usd >= 0.0001
    assert result.usage == complete.usage


async def test_a_request_budget_beats_the_gateway_default(database_url, fake_models):
    fake_models.reset()
    request = content_request()
    request.budget.CopyFrom(usage_pb2.RunBudget(max_tokens=1_000_000))
    settings = inprocess_settings(fake_models.base_url, database_url, run_max_tokens=10)
    events, _ = await run(settings, request)
    assert payload(events, "complete").status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
    assert not payload(events, "complete").HasField("stop_reason")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    "budget, field",
    [(usage_pb2.RunBudget(max_cost_usd=-1), "max_cost_usd"), (usage_pb2.RunBudget(max_tokens=-5), "max_tokens")],
)
async def test_a_negative_budget_is_invalid(database_url, fake_models, budget, field):
    request = content_request()
    request.budget.CopyFrom(budget)
    settings = inprocess_settings(fake_models.base_url, database_url)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            [r async for r in stub.Run(request, timeout=30)]
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"budget.{field}" in (raised.value.details() or "")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_a_spent_budget_ends_a_pipelined_run_too(database_url, fake_models):
    """Refused batch calls fail like any failed call: the run ends PARTIAL at once, it does not hang."""
    fake_models.reset()
    request = content_request(pipelined=True)
    request.budget.max_tokens = 10
    events, result = await run(inprocess_settings(fake_models.base_url, database_url), request)
    complete = payload(events, "complete")
    assert complete.status == factcheck_pb2.MESSAGE_STATUS_PARTIAL and "max_tokens" in complete.stop_reason
    assert not fake_models.requests_for("fake/checker-a")
