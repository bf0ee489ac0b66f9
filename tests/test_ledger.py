"""The model-call ledger: every model call of every mode is a ledger row, failures too,
and a run's rows add up to what the scripted model server reported. SQLite and PostgreSQL."""

from __future__ import annotations

import grpc
import pytest

from factcheck.core.prompt_versions import version_label
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from factcheck_checker.support import SUPPORT_MARKER
from factcheck_gateway.ledger.queries import LedgerStore
from factcheck_gateway.store.stage_store import StageStore
from tests.conftest import content_request, kinds, payload
from tests.fake_model_server import fail
from tests.inprocess import inprocess_settings, serve_everything
from tests.test_citations_e2e import EVEREST, PARIS
from tests.test_council_e2e import council_request, script_answers

PRICES = {"fake": {"input": 1.0, "output": 2.0}}


def ledger_rows(database_url: str, message_id: str) -> list[dict]:
    store = StageStore(database_url)
    try:
        return LedgerStore(store.engine).run_calls(message_id)
    finally:
        store.close()


def stage_rows(database_url: str, message_id: str):
    store = StageStore(database_url)
    try:
        return store.get_stages(message_id)
    finally:
        store.close()


async def run(settings, request):
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        events = [r.event async for r in stub.Run(request, timeout=60)]
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
        listed = (await stub.ListResults(factcheck_pb2.ListResultsRequest(page_size=10))).results
    return events, result, listed


def assert_rows_match_the_server(rows, fake_models):
    reported = fake_models.reported_usage()
    calls = [row for row in rows if row["outcome"] == "ok"]
    assert len(calls) == reported["calls"]
    assert sum(row["attempts"] for row in rows) == len(fake_models.requests)  # every HTTP attempt, retries too
    assert sum(row["prompt_tokens"] for row in rows) == reported["prompt_tokens"]
    assert sum(row["completion_tokens"] for row in rows) == reported["completion_tokens"]


async def test_a_fact_check_ledgers_every_call_and_its_cost(database_url, fake_models):
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url, model_prices=PRICES)
    events, result, listed = await run(settings, content_request())
    assert kinds(events)[-1] == "complete"
    rows = ledger_rows(database_url, events[0].message_id)

    assert_rows_match_the_server(rows, fake_models)
    assert sorted(row["stage"] for row in rows) == ["extract", "report", "title", "verify", "verify"]
    assert {row["mode"] for row in rows} == {"fact_check"}
    verify = [row for row in rows if row["stage"] == "verify"]
    assert {row["model"] for row in verify} == {"fake/checker-a", "fake/checker-b"}
    assert {row["prompt_version"] for row in verify} == {version_label("verify")}
    for row in rows:
        assert row["attempts"] == 1 and row["provider"] == "fake" and row["latency_ms"] >= 0
        assert row["input_price_per_million"] == 1.0 and row["output_price_per_million"] == 2.0
        assert row["cost_usd"] == pytest.approx((row["prompt_tokens"] + 2 * row["completion_tokens"]) / 1e6)

    usage = payload(events, "complete").usage
    assert usage.calls == 5 and usage.failed_calls == 0
    assert usage.prompt_tokens == sum(row["prompt_tokens"] for row in rows)
    assert usage.total_tokens == sum(row["total_tokens"] for row in rows)
    assert usage.cost_usd == pytest.approx(sum(row["cost_usd"] for row in rows))
    assert result.usage == usage
    [summary] = [item for item in listed if item.message_id == events[0].message_id]
    assert summary.usage == usage

    # Each stage row names the prompt template versions its calls used.
    versions = {
        row.stage_type: row.parsed_data.get("promptVersions") for row in stage_rows(database_url, events[0].message_id)
    }
    assert versions["extract"] == [version_label("extract")]
    assert versions["verify_0"] == versions["verify_1"] == [version_label("verify")]
    assert versions["report"] == [version_label("report")]


async def test_prompts_with_their_citation_sections_keep_their_prompt_versions(database_url, fake_models):
    # The citations option appends sections to the extract and verify prompts: still their templates.
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url, model_prices=PRICES)
    request = content_request(sources=[PARIS, EVEREST], use_knowledge_store=False, citations=True)
    events, _, _ = await run(settings, request)
    assert kinds(events)[-1] == "complete"
    rows = ledger_rows(database_url, events[0].message_id)
    verify = [row for row in rows if row["stage"] == "verify"]
    assert verify and {row["prompt_version"] for row in verify} == {version_label("verify")}
    # ... and the extraction prompt with its CLAIM DETAIL section is still the extract template.
    assert {row["prompt_version"] for row in rows if row["stage"] == "extract"} == {version_label("extract")}
    assert any(SUPPORT_MARKER in request.prompt for request in fake_models.requests if request.kind == "verify")


async def test_failed_calls_are_ledgered_with_their_retries(database_url, fake_models):
    fake_models.reset()
    fake_models.script("fake/checker-b", fail(503))
    fake_models.script("fake/reporter", fail(400))
    settings = inprocess_settings(fake_models.base_url, database_url)
    events, result, _ = await run(settings, content_request())
    rows = ledger_rows(database_url, events[0].message_id)

    assert_rows_match_the_server(rows, fake_models)
    [checker_b] = [row for row in rows if row["model"] == "fake/checker-b"]
    assert checker_b["outcome"] == "ModelProviderError(503)" and checker_b["attempts"] == 2  # one retry
    assert checker_b["prompt_tokens"] == 0 and checker_b["prompt_version"] == version_label("verify")
    # The reporter's failures end in the fallback table and the question as title: still ledgered.
    reporter = sorted(row["stage"] for row in rows if row["model"] == "fake/reporter")
    assert reporter == ["report", "title"]
    assert all(row["outcome"] == "ModelProviderError(400)" for row in rows if row["model"] == "fake/reporter")
    usage = payload(events, "complete").usage
    assert usage.calls == 5 and usage.failed_calls == 3


async def test_a_council_run_ledgers_every_call(database_url, fake_models):
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url)
    script_answers(fake_models)
    request = council_request()
    events, result, _ = await run(settings, request)
    assert kinds(events)[-1] == "complete"
    rows = ledger_rows(database_url, events[0].message_id)

    assert_rows_match_the_server(rows, fake_models)
    assert {row["mode"] for row in rows} == {"council"}
    assert len(rows) == len(fake_models.requests) >= 5
    assert {"generate", "council_check", "title"} <= {row["stage"] for row in rows}
    assert payload(events, "complete").usage.calls == len(rows) == result.usage.calls


async def test_an_entailment_run_ledgers_every_agent_call(database_url, fake_models):
    from tests.test_entailment_mode import MODEL, SUPPORTED_ITEM, entailment_request

    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url, default_entailment_model=MODEL)
    events, result, _ = await run(settings, entailment_request(SUPPORTED_ITEM))
    assert kinds(events)[-1] == "complete"
    rows = ledger_rows(database_url, events[0].message_id)

    assert_rows_match_the_server(rows, fake_models)
    assert {row["mode"] for row in rows} == {"entailment"}
    agents = [row for row in rows if row["model"] == MODEL]
    assert len(agents) >= 3 and all(row["prompt_version"].startswith("entailment_") for row in agents)
    assert payload(events, "complete").usage.calls == len(rows) == result.usage.calls
