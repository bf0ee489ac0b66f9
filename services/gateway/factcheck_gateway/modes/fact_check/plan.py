"""Fact-check mode's request: its config (RunRequest.mode_config) checked, with every default applied."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar

from google.protobuf import json_format

from factcheck.kit.settings import Settings
from factcheck.models.availability import grounding_kind
from factcheck.text.text_safety import excerpt
from factcheck.v1 import entailment_pb2, evaluation_pb2, factcheck_pb2
from factcheck_gateway.consensus.weights import DEFAULT, WEIGHTED, consensus_name, consensus_proto
from factcheck_gateway.knowledge.passage_store import SourceDocument
from factcheck_gateway.modes.fact_check.investigate.options import InvestigateOptions, plan_investigation
from factcheck_gateway.request_validation import (
    RunBasics,
    bounded,
    check,
    check_checker_model,
    check_model,
    identifier,
    stage_timeout_ms,
    storable,
    validate_sources,
)

MAX_CHECKERS = 4
MAX_CONTENT_LENGTH_DEFAULT, MAX_CONTENT_LENGTH_MIN, MAX_CONTENT_LENGTH_MAX = 20_000, 500, 50_000
# Content past max_content_length is truncated anyway, so a megabyte is far more than any run analyses.
MAX_CONTENT_CHARS = 1_000_000
EVIDENCE_TOP_K_MIN, EVIDENCE_TOP_K_MAX = 1, 10
MAX_EVALUATION_ID_CHARS = 255

BIAS_WARNING = "Generator and checker share model — results may be biased toward confirming generated content."
MISSING_SOURCE_MESSAGE = "Either contentToCheck or generatorModel must be provided"


@dataclass(frozen=True)
class RunPlan:
    """A validated fact-check request with every default applied: what the mode's steps run."""

    mode_name: ClassVar[str] = "fact_check"

    question: str
    conversation_id: str | None
    content_to_check: str | None
    generator_model: str | None
    extractor_model: str
    checker_models: tuple[str, ...]
    reporter_model: str
    max_content_length: int
    timeout_ms: int
    # Whose run this is: it is stored with the run, and retrieval searches only this tenant's documents.
    # Not part of the request (it comes from the caller's token), so not in request_config().
    tenant_id: str
    sources: tuple[SourceDocument, ...] = ()
    use_knowledge_store: bool = True
    evidence_top_k: int = 3
    # Pipelined verification (modes/fact_check/pipelined.py), and its batching (from the settings).
    pipelined: bool = False
    pipelined_batch_claims: int = 5
    pipelined_batches_in_flight: int = 4
    # Claim-level citations (modes/fact_check/citations.py) and the model of its review pass.
    citations: bool = False
    citation_review_model: str = ""
    # The verification cache (verification_cache/cached.py): whether to use it, and its TTL.
    use_cache: bool = False
    cache_ttl_s: float = 7 * 24 * 3600.0
    # How the checkers verify (FactCheckConfig.checker_strategy): "default" or "entailment_agents".
    checker_strategy: str = "default"
    # The audit of every checker's answer against the claim's passages (modes/fact_check/audit.py; FACTCHECK_AUDIT).
    audit: bool = True

    def checker_fields(self) -> tuple[tuple[str, str], ...]:
        """Each checker model with its request field."""
        return tuple((f"mode_config.checker_models[{i}]", model) for i, model in enumerate(self.checker_models))

    @property
    def checker_strategy_proto(self) -> entailment_pb2.CheckerStrategy:
        return checker_strategy_proto(self.checker_strategy)

    # The verification loop (FactCheckConfig.investigate): None when off.
    investigation: InvestigateOptions | None = None
    # FactCheckConfig.consensus: "default" (unset: the majority), "majority" or "weighted"
    # (consensus/weights.py), the evaluation it names, and the least answers per label
    # the newest evaluation must hold when it names none (FACTCHECK_CONSENSUS_MIN_ITEMS_PER_LABEL).
    consensus: str = DEFAULT
    consensus_evaluation_id: str | None = None
    consensus_min_items_per_label: int = 20
    # FactCheckConfig.threshold_evaluation_id: the evaluation whose fitted thresholds the binary checkers use
    # (modes/fact_check/thresholds.py).
    threshold_evaluation_id: str | None = None

    @property
    def generates(self) -> bool:
        return self.content_to_check is None

    @property
    def content_source(self) -> str:
        return "generated" if self.generates else "user_provided"

    @property
    def bias_warning(self) -> str | None:
        if self.generates and self.generator_model in self.checker_models:
            return BIAS_WARNING
        return None

    def request_config(self) -> dict:
        """The run's configuration as stored in messages.request_config (camelCase names, as the stored rows')."""
        config: dict[str, Any] = {
            "mode": self.mode_name,
            "contentSource": self.content_source,
            "generatorModel": self.generator_model,
            "extractorModel": self.extractor_model,
            "checkerModels": list(self.checker_models),
            "reporterModel": self.reporter_model,
            "maxContentLength": self.max_content_length,
            "timeoutMs": self.timeout_ms,
            "useKnowledgeStore": self.use_knowledge_store,
            "evidenceTopK": self.evidence_top_k,
        }
        if self.sources:
            config["sources"] = [asdict(source) for source in self.sources]
        if self.content_to_check is not None:
            config["contentToCheck"] = self.content_to_check
        if self.pipelined:
            config["pipelined"] = True
        if self.citations:
            config["citations"] = True
            config["citationReviewModel"] = self.citation_review_model
        if self.checker_strategy != "default":
            config["checkerStrategy"] = self.checker_strategy
        if self.investigation is not None:
            config.update(self.investigation.request_config())
        if self.consensus != DEFAULT:
            config["consensus"] = self.consensus
        if self.consensus_evaluation_id:
            config["consensusEvaluationId"] = self.consensus_evaluation_id
        if self.threshold_evaluation_id:
            config["thresholdEvaluationId"] = self.threshold_evaluation_id
        return config


def plan_fact_check(request: factcheck_pb2.RunRequest, settings: Settings, basics: RunBasics) -> RunPlan:
    """Check fact-check mode's config (mode_config) and fill in its defaults."""
    config = request.mode_config
    has_config = request.HasField("mode_config")
    content = config.content_to_check or None
    generator = config.generator_model or None
    # Zod refines only a present modeConfig; without one, the default generator answers the question.
    if has_config:
        check(content is not None or generator is not None, "mode_config", MISSING_SOURCE_MESSAGE)
    if content is not None:
        field = "mode_config.content_to_check"
        check(
            len(content) <= MAX_CONTENT_CHARS,
            field,
            f"{field} must be at most {MAX_CONTENT_CHARS} characters (got {len(content)})",
        )
        check(content.strip(), field, f"{field} must contain text")
        storable(field, content)
    if content is None and generator is None:
        generator = settings.default_generator_model

    checkers = tuple(config.checker_models) or tuple(settings.default_checker_models)
    check(
        1 <= len(checkers) <= MAX_CHECKERS,
        "mode_config.checker_models",
        f"mode_config.checker_models must list 1 to {MAX_CHECKERS} models (got {len(checkers)})",
    )
    extractor = config.extractor_model or settings.default_extractor_model
    reporter = config.reporter_model or settings.default_reporter_model
    if content is None:
        assert generator is not None  # the default, when the request has neither
        check_model("mode_config.generator_model", generator, settings)
    check_model("mode_config.extractor_model", extractor, settings)
    for index, checker in enumerate(checkers):
        check_checker_model(f"mode_config.checker_models[{index}]", checker, settings)
    check_model("mode_config.reporter_model", reporter, settings)

    max_length = MAX_CONTENT_LENGTH_DEFAULT
    if config.HasField("max_content_length"):
        max_length = bounded(
            "mode_config.max_content_length", config.max_content_length, MAX_CONTENT_LENGTH_MIN, MAX_CONTENT_LENGTH_MAX
        )
    timeout_ms = stage_timeout_ms(config, "mode_config.timeout_ms", settings)

    wants_citations = config.citations
    review_model = config.citation_review_model or (checkers[0] if wants_citations else "")
    if wants_citations:
        # Citations are judged per claim after the whole verification: not with pipelined batches.
        check(not config.pipelined, "mode_config.citations", "mode_config.citations cannot be combined with pipelined")
        check_model("mode_config.citation_review_model", review_model, settings)

    top_k = settings.evidence_top_k
    if config.HasField("evidence_top_k"):
        top_k = bounded("mode_config.evidence_top_k", config.evidence_top_k, EVIDENCE_TOP_K_MIN, EVIDENCE_TOP_K_MAX)

    check(
        config.checker_strategy in entailment_pb2.CheckerStrategy.values(),
        "mode_config.checker_strategy",
        "mode_config.checker_strategy must be CHECKER_STRATEGY_DEFAULT or CHECKER_STRATEGY_ENTAILMENT_AGENTS",
    )
    entailment = config.checker_strategy == entailment_pb2.CHECKER_STRATEGY_ENTAILMENT_AGENTS
    grounding = [model for model in checkers if grounding_kind(model, settings) is not None]
    check(
        not (entailment and grounding),
        "mode_config.checker_strategy",
        f"{excerpt(grounding[0]) if grounding else ''} is a grounding model: it reads claims against passages and "
        "cannot be the entailment agents (CHECKER_STRATEGY_ENTAILMENT_AGENTS needs chat models as checkers)",
    )
    consensus = consensus_name(config.consensus)
    check(
        consensus is not None,
        "mode_config.consensus",
        "mode_config.consensus must be CONSENSUS_UNSPECIFIED, CONSENSUS_MAJORITY or CONSENSUS_WEIGHTED",
    )
    assert consensus is not None  # check() raised otherwise
    pinned = config.consensus_evaluation_id if config.HasField("consensus_evaluation_id") else None
    if pinned is not None:
        field = "mode_config.consensus_evaluation_id"
        check(
            consensus == WEIGHTED,
            field,
            f"{field} names the evaluation to weigh by: it needs mode_config.consensus = CONSENSUS_WEIGHTED",
        )
        _check_evaluation_id(field, pinned)
    thresholds_from = config.threshold_evaluation_id if config.HasField("threshold_evaluation_id") else None
    if thresholds_from is not None:
        _check_evaluation_id("mode_config.threshold_evaluation_id", thresholds_from)

    return RunPlan(
        question=basics.question,
        conversation_id=basics.conversation_id,
        content_to_check=content,
        generator_model=generator if content is None else config.generator_model or None,
        extractor_model=extractor,
        checker_models=checkers,
        reporter_model=reporter,
        max_content_length=max_length,
        timeout_ms=timeout_ms,
        tenant_id=basics.tenant_id,
        sources=validate_sources(config.sources, "mode_config.sources"),
        use_knowledge_store=config.use_knowledge_store if config.HasField("use_knowledge_store") else True,
        evidence_top_k=top_k,
        pipelined=config.pipelined,
        pipelined_batch_claims=settings.pipelined_batch_claims,
        pipelined_batches_in_flight=settings.pipelined_batches_in_flight,
        citations=wants_citations,
        citation_review_model=review_model,
        # The cache holds plain verifications and extractions: a run with citations asks its models for
        # more (support tiers, claim profiles), so it never reads or fills the cache.
        use_cache=(config.use_cache if config.HasField("use_cache") else settings.cache_enabled)
        and not wants_citations,
        cache_ttl_s=settings.cache_ttl_s,
        checker_strategy="entailment_agents" if entailment else "default",
        audit=settings.audit,
        investigation=plan_investigation(config, settings, checkers),
        consensus=consensus,
        consensus_evaluation_id=pinned,
        consensus_min_items_per_label=settings.consensus_min_items_per_label,
        threshold_evaluation_id=thresholds_from,
    )


def _check_evaluation_id(field: str, value: str) -> None:
    check(value.strip(), field, f"{field} must not be blank")
    check(len(value) <= MAX_EVALUATION_ID_CHARS, field, f"{field} must be at most {MAX_EVALUATION_ID_CHARS} characters")
    identifier(field, value)


def checker_strategy_proto(name: str) -> entailment_pb2.CheckerStrategy:
    """The proto value of a plan's checker strategy ("default" or "entailment_agents")."""
    if name == "entailment_agents":
        return entailment_pb2.CHECKER_STRATEGY_ENTAILMENT_AGENTS
    return entailment_pb2.CHECKER_STRATEGY_DEFAULT


def request_from_config(config: dict[str, Any]) -> factcheck_pb2.FactCheckConfig:
    """The resolved mode_config of a stored run, from its request_config (RunPlan.request_config(), whose keys
    are FactCheckConfig's JSON names; the keys that name no field are skipped). Two values are the plan's names
    of enum members, and the sources keep SourceDocument's field names (ParseDict reads both spellings)."""
    fields = dict(config)
    if "checkerStrategy" in fields:
        fields["checkerStrategy"] = entailment_pb2.CheckerStrategy.Name(
            checker_strategy_proto(fields["checkerStrategy"])
        )
    if "consensus" in fields:
        fields["consensus"] = evaluation_pb2.Consensus.Name(consensus_proto(fields["consensus"]))
    return json_format.ParseDict(fields, factcheck_pb2.FactCheckConfig(), ignore_unknown_fields=True)
