"""Council mode's request: its config (RunRequest.council_config) checked, with every default applied."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from google.protobuf import json_format

from factcheck.kit.settings import Settings
from factcheck.v1 import council_pb2, factcheck_pb2
from factcheck_gateway.knowledge.passage_store import SourceDocument
from factcheck_gateway.request_validation import (
    RunBasics,
    check,
    check_model,
    identifier,
    stage_timeout_ms,
    storable,
    validate_sources,
)

MIN_RESPONSES, MAX_RESPONSES = 2, 8
MIN_FACT_CHECKERS, MAX_FACT_CHECKERS = 1, 8
MAX_RESPONSE_NAME_CHARS = 200
MAX_RESPONSE_CHARS = 50_000
FIELD = "council_config"


@dataclass(frozen=True)
class SuppliedResponse:
    """An answer the caller already has: who wrote it, and the text."""

    name: str
    text: str


@dataclass(frozen=True)
class CouncilPlan:
    """A validated council request with every default applied."""

    mode_name: ClassVar[str] = "council"

    question: str
    conversation_id: str | None
    tenant_id: str
    # Exactly one of the two: models that answer, or answers the caller supplied.
    council_models: tuple[str, ...]
    responses: tuple[SuppliedResponse, ...]
    fact_checker_models: tuple[str, ...]
    chairman_model: str | None
    reporter_model: str
    timeout_ms: int
    exclude_self_ratings: bool
    sources: tuple[SourceDocument, ...] = ()
    use_knowledge_store: bool = True
    evidence_top_k: int = 3

    @property
    def authors(self) -> tuple[str, ...]:
        """Who wrote response i: its council model, or the supplied response's name."""
        return self.council_models or tuple(response.name for response in self.responses)

    @property
    def responses_supplied(self) -> bool:
        return bool(self.responses)

    def request_config(self) -> dict:
        """The run's configuration as stored in messages.request_config."""
        config = {
            "mode": self.mode_name,
            "councilModels": list(self.council_models),
            "responsesSupplied": self.responses_supplied,
            "responseNames": [response.name for response in self.responses],
            "factCheckerModels": list(self.fact_checker_models),
            "chairmanModel": self.chairman_model,
            "reporterModel": self.reporter_model,
            "timeoutMs": self.timeout_ms,
            "excludeSelfRatings": self.exclude_self_ratings,
            "useKnowledgeStore": self.use_knowledge_store,
            "evidenceTopK": self.evidence_top_k,
        }
        if self.sources:
            config["sources"] = [asdict(source) for source in self.sources]
        return config

    def run_config(self) -> council_pb2.CouncilRunConfig:
        """The resolved config as factcheck_start reports it."""
        config = council_pb2.CouncilRunConfig(
            council_models=self.council_models,
            response_count=len(self.authors),
            fact_checker_models=self.fact_checker_models,
            reporter_model=self.reporter_model,
            timeout_ms=self.timeout_ms,
            exclude_self_ratings=self.exclude_self_ratings,
            responses_supplied=self.responses_supplied,
        )
        if self.chairman_model:
            config.chairman_model = self.chairman_model
        return config


def plan_council(request: factcheck_pb2.RunRequest, settings: Settings, basics: RunBasics) -> CouncilPlan:
    """Check council mode's config and fill in its defaults."""
    check(request.HasField(FIELD), FIELD, "A MODE_COUNCIL run needs council_config (council_models or responses)")
    config = request.council_config
    models, supplied = tuple(config.council_models), config.responses
    check(
        bool(models) != bool(supplied),
        FIELD,
        "council_config must set exactly one of council_models (models that answer) and responses (answers you have)",
    )
    if models:
        _count(f"{FIELD}.council_models", len(models), MIN_RESPONSES, MAX_RESPONSES, "models")
        for index, model in enumerate(models):
            check_model(f"{FIELD}.council_models[{index}]", model, settings)
        _unique(f"{FIELD}.council_models", models)
    responses = tuple(_supplied_response(index, response) for index, response in enumerate(supplied))
    if responses:
        _count(f"{FIELD}.responses", len(responses), MIN_RESPONSES, MAX_RESPONSES, "responses")
        _unique(f"{FIELD}.responses names", [response.name for response in responses])

    fact_checkers = tuple(config.fact_checker_models) or models or tuple(settings.default_checker_models)
    field = f"{FIELD}.fact_checker_models"
    _count(field, len(fact_checkers), MIN_FACT_CHECKERS, MAX_FACT_CHECKERS, "models")
    for index, model in enumerate(fact_checkers):
        check_model(f"{field}[{index}]", model, settings)
    _unique(field, fact_checkers)
    chairman = config.chairman_model or None
    if chairman is not None:
        check_model(f"{FIELD}.chairman_model", chairman, settings)
    reporter = config.reporter_model or settings.default_reporter_model
    check_model(f"{FIELD}.reporter_model", reporter, settings)

    return CouncilPlan(
        question=basics.question,
        conversation_id=basics.conversation_id,
        tenant_id=basics.tenant_id,
        council_models=models,
        responses=responses,
        fact_checker_models=fact_checkers,
        chairman_model=chairman,
        reporter_model=reporter,
        timeout_ms=stage_timeout_ms(config, f"{FIELD}.timeout_ms", settings),
        exclude_self_ratings=config.exclude_self_ratings,
        sources=validate_sources(config.sources, f"{FIELD}.sources"),
        use_knowledge_store=config.use_knowledge_store if config.HasField("use_knowledge_store") else True,
        evidence_top_k=settings.evidence_top_k,
    )


def _count(field: str, count: int, low: int, high: int, what: str) -> None:
    check(low <= count <= high, field, f"{field} must list {low} to {high} {what} (got {count})")


def _unique(field: str, values) -> None:
    repeated = sorted({value for value in values if list(values).count(value) > 1})
    check(not repeated, field, f"{field} must not repeat ({', '.join(repr(v[:40]) for v in repeated[:3])})")


def _supplied_response(index: int, response: council_pb2.NamedResponse) -> SuppliedResponse:
    field = f"{FIELD}.responses[{index}]"
    name = response.name.strip()
    check(name, f"{field}.name", f"{field}.name must say who wrote the response (a model or product name)")
    check(
        len(name) <= MAX_RESPONSE_NAME_CHARS,
        f"{field}.name",
        f"{field}.name must be at most {MAX_RESPONSE_NAME_CHARS} characters",
    )
    identifier(f"{field}.name", name)
    check(response.text.strip(), f"{field}.text", f"{field}.text must contain text")
    check(
        len(response.text) <= MAX_RESPONSE_CHARS,
        f"{field}.text",
        f"{field}.text must be at most {MAX_RESPONSE_CHARS} characters (got {len(response.text)})",
    )
    storable(f"{field}.text", response.text)
    return SuppliedResponse(name=name, text=response.text)


def request_from_config(config: dict[str, Any]) -> council_pb2.CouncilConfig:
    """The resolved council_config of a stored run, from its request_config (CouncilPlan.request_config() and
    the supplied responses, COUNCIL.caller_fields; the keys are CouncilConfig's JSON names, and those that name
    no field are skipped; the sources keep SourceDocument's field names, which ParseDict reads too)."""
    return json_format.ParseDict(config, council_pb2.CouncilConfig(), ignore_unknown_fields=True)
