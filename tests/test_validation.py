"""Run request validation: the request's rules (docs/api.md#statuses-and-reasons), each with a message a person
understands."""

from __future__ import annotations

import pytest

from factcheck.kit.security.tenants import DEFAULT_TENANT
from factcheck.kit.settings import Settings
from factcheck.v1 import common_pb2, council_pb2, entailment_pb2, factcheck_pb2
from factcheck_gateway.mode_dispatch import validate_run_request
from factcheck_gateway.modes.fact_check.plan import BIAS_WARNING, RunPlan
from factcheck_gateway.request_validation import ValidationError

SETTINGS = Settings(
    # An endpoint for every provider (validation only asks that one is configured; nothing calls it).
    model_base_url="http://127.0.0.1:9/v1",
    default_generator_model="local/generator",
    default_extractor_model="local/extractor",
    default_checker_models=["local/checker"],
    default_reporter_model="local/reporter",
    stage_timeout_ms=120_000,
)


def fact_check_plan(message: factcheck_pb2.RunRequest, settings: Settings, *, tenant_id: str) -> RunPlan:
    """The plan of a fact-check request (the dispatch returns any mode's plan)."""
    plan = validate_run_request(message, settings, tenant_id=tenant_id)
    assert isinstance(plan, RunPlan)
    return plan


def request(question="Check this", mode=factcheck_pb2.MODE_FACT_CHECK, **config):
    """A RunRequest that always carries a mode_config (possibly empty)."""
    return factcheck_pb2.RunRequest(question=question, mode=mode, mode_config=factcheck_pb2.FactCheckConfig(**config))


def test_content_to_check_with_defaults():
    plan = fact_check_plan(request(content_to_check="Water boils at 100 C."), SETTINGS, tenant_id=DEFAULT_TENANT)
    assert plan.content_to_check == "Water boils at 100 C." and not plan.generates
    assert (plan.extractor_model, plan.checker_models, plan.reporter_model) == (
        "local/extractor",
        ("local/checker",),
        "local/reporter",
    )
    assert (plan.max_content_length, plan.timeout_ms) == (20_000, 120_000)
    assert plan.content_source == "user_provided" and plan.bias_warning is None


def test_no_mode_config_generates_with_the_default_generator():
    plan = fact_check_plan(
        factcheck_pb2.RunRequest(question="Why is the sky blue?", mode=factcheck_pb2.MODE_FACT_CHECK),
        SETTINGS,
        tenant_id=DEFAULT_TENANT,
    )
    assert plan.generates and plan.generator_model == "local/generator"


def test_bias_warning_when_the_generator_also_checks():
    plan = fact_check_plan(
        request(generator_model="openai/o3", checker_models=["openai/o3", "google/gemini-2.5-pro"]),
        SETTINGS,
        tenant_id=DEFAULT_TENANT,
    )
    assert plan.bias_warning == BIAS_WARNING
    plan = fact_check_plan(
        request(content_to_check="text", generator_model="openai/o3", checker_models=["openai/o3"]),
        SETTINGS,
        tenant_id=DEFAULT_TENANT,
    )
    assert plan.bias_warning is None  # nothing is generated, so nothing to be biased towards


def test_request_config_is_what_gets_stored():
    plan = fact_check_plan(
        request(content_to_check="text", max_content_length=500, timeout_ms=30_000), SETTINGS, tenant_id=DEFAULT_TENANT
    )
    assert plan.request_config() == {
        "mode": "fact_check",
        "contentSource": "user_provided",
        "contentToCheck": "text",
        "generatorModel": None,
        "extractorModel": "local/extractor",
        "checkerModels": ["local/checker"],
        "reporterModel": "local/reporter",
        "maxContentLength": 500,
        "timeoutMs": 30_000,
        "useKnowledgeStore": True,
        "evidenceTopK": 3,
    }


def test_pipelined_is_opt_in_and_stored_only_when_chosen():
    settings = Settings(**{**SETTINGS.model_dump(), "pipelined_batch_claims": 3, "pipelined_batches_in_flight": 4})
    plan = fact_check_plan(request(content_to_check="text", pipelined=True), settings, tenant_id=DEFAULT_TENANT)
    assert plan.pipelined and (plan.pipelined_batch_claims, plan.pipelined_batches_in_flight) == (3, 4)
    assert plan.request_config()["pipelined"] is True
    plan = fact_check_plan(request(content_to_check="text"), settings, tenant_id=DEFAULT_TENANT)
    assert not plan.pipelined and "pipelined" not in plan.request_config()


@pytest.mark.parametrize(
    "message, expected",
    [
        (request(question="", content_to_check="x"), "Question or content description is required"),
        (request(question="   ", content_to_check="x"), "Question or content description is required"),
        (request(question="q" * 20_001, content_to_check="x"), "question must be at most 20000 characters"),
        (request(mode=factcheck_pb2.MODE_UNSPECIFIED, content_to_check="x"), "mode must be one of MODE_FACT_CHECK"),
        (request(mode=7, content_to_check="x"), "mode must be one of MODE_FACT_CHECK"),
        (request(), "Either contentToCheck or generatorModel must be provided"),
        (request(content_to_check=""), "Either contentToCheck or generatorModel must be provided"),
        (request(content_to_check=" \n "), "mode_config.content_to_check must contain text"),
        (
            request(content_to_check="x", checker_models=["a/1", "a/2", "a/3", "a/4", "a/5"]),
            "mode_config.checker_models must list 1 to 4 models (got 5)",
        ),
        (
            request(content_to_check="x", max_content_length=499),
            "mode_config.max_content_length must be between 500 and 50000 (got 499)",
        ),
        (
            request(content_to_check="x", max_content_length=50_001),
            "mode_config.max_content_length must be between 500 and 50000",
        ),
        (
            request(content_to_check="x", timeout_ms=29_999),
            "mode_config.timeout_ms must be between 30000 and 180000 (got 29999)",
        ),
        (request(content_to_check="x", timeout_ms=180_001), "mode_config.timeout_ms must be between 30000 and 180000"),
        (
            request(content_to_check="x", timeout_ms=-5),
            "mode_config.timeout_ms must be between 30000 and 180000 (got -5)",
        ),
        (
            request(content_to_check="x", extractor_model="gpt4"),
            'mode_config.extractor_model must be a model id like "provider/name"',
        ),
        (
            request(content_to_check="x", checker_models=["a/b", " "]),
            "mode_config.checker_models[1] must be a model id",
        ),
        (request(generator_model="/o3"), "mode_config.generator_model must be a model id"),
        (request(content_to_check="x", reporter_model="openai/"), "mode_config.reporter_model must be a model id"),
        (request(content_to_check="x" * 1_000_001), "mode_config.content_to_check must be at most 1000000 characters"),
    ],
)
def test_invalid_requests_are_refused_with_a_clear_message(message, expected):
    with pytest.raises(ValidationError) as raised:
        validate_run_request(message, SETTINGS, tenant_id=DEFAULT_TENANT)
    assert expected in str(raised.value)


def test_conversation_id_is_kept_and_bounded():
    message = request(content_to_check="x")
    message.conversation_id = "conv-1"
    assert validate_run_request(message, SETTINGS, tenant_id=DEFAULT_TENANT).conversation_id == "conv-1"
    message.conversation_id = "c" * 201
    with pytest.raises(ValidationError, match="conversation_id must be 1 to 200 characters"):
        validate_run_request(message, SETTINGS, tenant_id=DEFAULT_TENANT)


def _source(**fields) -> common_pb2.Source:
    return common_pb2.Source(**{"text": "The Paris Agreement was adopted in 2015.", **fields})


def test_sources_become_documents_with_ids_and_are_stored_in_the_request():
    plan = fact_check_plan(
        request(
            content_to_check="x", sources=[_source(id="un", title="UN", authority=0.9), _source()], evidence_top_k=5
        ),
        SETTINGS,
        tenant_id=DEFAULT_TENANT,
    )
    assert [(s.id, s.title, s.authority) for s in plan.sources] == [("un", "UN", 0.9), ("source_2", "source_2", None)]
    assert plan.evidence_top_k == 5 and plan.use_knowledge_store
    assert [s["id"] for s in plan.request_config()["sources"]] == ["un", "source_2"]


@pytest.mark.parametrize(
    "sources, expected",
    [
        ([_source()] * 21, "mode_config.sources may list at most 20 documents (got 21)"),
        ([_source(text="x" * 200_001)], "mode_config.sources[0].text must be at most 200000 characters"),
        ([_source(text="é" * 150_000)] * 10, "may hold at most 2000000 bytes of text in all"),
        ([_source(text="  ")], "mode_config.sources[0].text must contain text"),
        ([_source(id="a"), _source(id="a")], "mode_config.sources ids must be unique (repeated: a)"),
        ([_source(authority=1.5)], "mode_config.sources[0].authority must be between 0 and 1 (got 1.5)"),
        ([_source(url="u" * 2001)], "mode_config.sources[0].url must be at most 2000 characters"),
    ],
)
def test_bad_sources_are_refused(sources, expected):
    with pytest.raises(ValidationError) as raised:
        validate_run_request(request(content_to_check="x", sources=sources), SETTINGS, tenant_id=DEFAULT_TENANT)
    assert expected in str(raised.value)


def test_evidence_top_k_is_bounded():
    with pytest.raises(ValidationError, match="mode_config.evidence_top_k must be between 1 and 10"):
        validate_run_request(request(content_to_check="x", evidence_top_k=11), SETTINGS, tenant_id=DEFAULT_TENANT)


# --- models that cannot be served are refused before the run starts ---------------------------------------

NO_ENDPOINT = Settings(**{**SETTINGS.model_dump(), "model_base_url": None, "model_providers": {}})


def test_an_unknown_local_engine_is_refused_naming_the_available_ones():
    with pytest.raises(ValidationError) as refused:
        fact_check_plan(request(content_to_check="text", checker_models=["local/chekcer"]), SETTINGS, tenant_id="t")
    assert refused.value.field == "mode_config.checker_models[0]"
    message = str(refused.value)
    assert message.startswith("mode_config.checker_models[0]: model 'local/chekcer': unknown local engine 'chekcer'")
    # A checker field names only the engines that check (issue 42: not local/generator or local/reporter).
    assert "(available: checker, checker-lexical," in message and "generator" not in message


def test_a_provider_without_an_endpoint_is_refused_naming_the_settings():
    with pytest.raises(ValidationError) as refused:
        fact_check_plan(request(content_to_check="text", checker_models=["openai/gpt-4o"]), NO_ENDPOINT, tenant_id="t")
    assert str(refused.value) == (
        "mode_config.checker_models[0]: model 'openai/gpt-4o': no endpoint configured for provider 'openai': set "
        "FACTCHECK_MODEL_BASE_URL (or add 'openai' to FACTCHECK_MODEL_PROVIDERS), or use a local/ model"
    )
    # Its own endpoint is enough, and local/ models need none.
    with_openai = Settings(
        **{**NO_ENDPOINT.model_dump(), "model_providers": {"openai": {"base_url": "http://127.0.0.1:9/v1"}}}
    )
    plan = fact_check_plan(
        request(content_to_check="text", checker_models=["openai/gpt-4o"]), with_openai, tenant_id="t"
    )
    assert plan.checker_models == ("openai/gpt-4o",)
    assert fact_check_plan(request(content_to_check="text"), NO_ENDPOINT, tenant_id="t").checker_models == (
        "local/checker",
    )


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (request(generator_model="local/gpt"), "mode_config.generator_model"),
        (request(content_to_check="text", extractor_model="openai/gpt-4o"), "mode_config.extractor_model"),
        (request(content_to_check="text", reporter_model="anthropic/claude"), "mode_config.reporter_model"),
        (
            request(content_to_check="text", investigate=True, investigator_model="local/nobody"),
            "mode_config.investigator_model",
        ),
        (
            factcheck_pb2.RunRequest(
                question="Q?",
                mode=factcheck_pb2.MODE_COUNCIL,
                council_config=council_pb2.CouncilConfig(council_models=["local/checker", "openai/gpt-4o"]),
            ),
            "council_config.council_models[1]",
        ),
        (
            factcheck_pb2.RunRequest(
                question="Q?",
                mode=factcheck_pb2.MODE_ENTAILMENT,
                entailment_config=entailment_pb2.EntailmentConfig(
                    model="local/entailmnt",
                    items=[entailment_pb2.EntailmentItem(claim="c", source_excerpt="s", source_type="t")],
                ),
            ),
            "entailment_config.model",
        ),
    ],
)
def test_every_mode_refuses_a_model_that_cannot_be_served(message, field):
    with pytest.raises(ValidationError) as refused:
        validate_run_request(message, NO_ENDPOINT, tenant_id=DEFAULT_TENANT)
    assert refused.value.field == field and str(refused.value).startswith(f"{field}: model ")
