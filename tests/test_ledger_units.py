"""The ledger's pieces without the services: prices, budgets, stages, prompt versions."""

from __future__ import annotations

import grpc
import pytest

from factcheck.core.prompt_versions import PROMPT_VERSIONS, prompt_version_of, version_label
from factcheck.kit.settings import Settings
from factcheck.models.calls import MODEL_CALLS_METADATA, calls_from_metadata
from factcheck.v1 import factcheck_pb2, usage_pb2
from factcheck_checker.verification_prompts import build_verification_prompt
from factcheck_extractor.extraction_prompts import build_extraction_prompt, build_profiled_extraction_prompt
from factcheck_gateway.ledger.budget import Budget, BudgetExceeded, run_budget
from factcheck_gateway.ledger.pricing import Pricing
from factcheck_gateway.ledger.run_ledger import RunLedger, stage_of
from factcheck_gateway.ledger.totals import UsageTotals


def test_prices_come_from_the_model_then_its_provider_and_local_models_are_free():
    pricing = Pricing.from_settings(
        Settings(
            model_prices={
                "openai/gpt-4o": {"input": 2.5, "output": 10, "cached_input": 1.25},
                "openai": {"input": 1, "output": 2},
            }
        )
    )
    gpt4o, o3, local = (pricing.price_of(m) for m in ("openai/gpt-4o", "openai/o3", "local/checker"))
    assert gpt4o is not None and o3 is not None and local is not None
    assert gpt4o.cost(1_000_000, 0, 0) == pytest.approx(2.5)
    assert gpt4o.cost(1_000_000, 1_000_000, 400_000) == pytest.approx(0.6 * 2.5 + 0.4 * 1.25 + 10)
    assert o3.cost(0, 1_000_000, 0) == pytest.approx(2)
    assert local.cost(10**6, 10**6, 0) == 0
    assert pricing.price_of("anthropic/claude") is None


def test_a_request_budget_beats_the_tenants_which_beats_the_gateways():
    settings = Settings(run_max_cost_usd=1.0, run_max_tokens=1000, tenant_budgets={"acme": {"max_tokens": 50}})
    request = factcheck_pb2.RunRequest()
    assert run_budget(request, settings, "other") == Budget(1.0, 1000)
    assert run_budget(request, settings, "acme") == Budget(1.0, 50)
    request.budget.max_cost_usd = 0.25
    assert run_budget(request, settings, "acme") == Budget(0.25, 50)


def test_a_spent_budget_refuses_every_later_call_with_its_reason():
    ledger = RunLedger(budget=Budget(max_tokens=100), spent=UsageTotals(total_tokens=60))  # a resumed run's spending
    ledger.check()
    ledger.record_call(
        "Verify", usage_pb2.ModelCall(model="fake/a", prompt_tokens=30, completion_tokens=10, outcome="ok")
    )
    with pytest.raises(BudgetExceeded) as refused:
        ledger.check()
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "100 tokens" in (refused.value.details() or "") and "100 used" in str(refused.value)
    with pytest.raises(BudgetExceeded):
        ledger.check()
    assert [row["total_tokens"] for row in ledger.take_rows()] == [40] and ledger.take_rows() == ()


def test_stages_are_named_after_the_rpc():
    assert [stage_of(m) for m in ("Verify", "CouncilCheck", "ExtractStream", "Extract", "Synthesize")] == [
        "verify",
        "council_check",
        "extract",
        "extract",
        "synthesize",
    ]


def test_every_prompt_builder_reports_its_template_version():
    assert prompt_version_of(build_extraction_prompt("Water boils at 100 C.")) == version_label("extract")
    assert prompt_version_of(build_verification_prompt([], "text")) == f"verify@{PROMPT_VERSIONS['verify']}"
    assert prompt_version_of("a prompt from nowhere") == ""
    # An optional section appended to a built prompt is part of its template: the version stays.
    assert prompt_version_of(build_profiled_extraction_prompt("Water boils at 100 C.")) == version_label("extract")
    assert prompt_version_of(build_verification_prompt([], "text") + "\nSUPPORT:") == version_label("verify")


def test_a_mangled_trailer_reports_nothing():
    calls = usage_pb2.ModelCalls(calls=[usage_pb2.ModelCall(model="fake/a", prompt_tokens=3)]).SerializeToString()
    read = calls_from_metadata(((MODEL_CALLS_METADATA, calls),))
    assert read is not None and read[0].prompt_tokens == 3
    assert calls_from_metadata(((MODEL_CALLS_METADATA, b"\xff\xff"),)) is None
    assert calls_from_metadata(()) is None
