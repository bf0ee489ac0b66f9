"""Request validation, mirroring the spec's Zod schema, plus the defaults a run gets.

Every rule fails with a ValidationError (an InvalidArgument naming the bad field) whose
message is shown to the caller as INVALID_ARGUMENT before any event is sent. Messages quote
caller input only as a bounded excerpt.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from factcheck.errors import InvalidArgument
from factcheck.rpc import is_model_id
from factcheck.settings import Settings
from factcheck.text_safety import excerpt, has_unsafe_characters
from factcheck.v1 import common_pb2, entailment_pb2, factcheck_pb2
from services.gateway.knowledge.store import SourceDocument

MAX_CHECKERS = 4
MAX_CONTENT_LENGTH_DEFAULT, MAX_CONTENT_LENGTH_MIN, MAX_CONTENT_LENGTH_MAX = 20_000, 500, 50_000
TIMEOUT_MS_MIN, TIMEOUT_MS_MAX = 30_000, 180_000
# Bounds that keep one request from swamping the suite; content past max_content_length is
# truncated anyway, so a megabyte is far more than any run analyses.
MAX_QUESTION_CHARS = 20_000
MAX_CONTENT_CHARS = 1_000_000
MAX_CONVERSATION_ID_CHARS = 200
# Per-request sources: bounded one by one and in total, so one request cannot swamp retrieval.
MAX_SOURCES = 20
MAX_SOURCE_CHARS = 200_000
MAX_SOURCES_TOTAL_BYTES = 2_000_000
MAX_SOURCE_ID_CHARS, MAX_SOURCE_TITLE_CHARS, MAX_SOURCE_URL_CHARS, MAX_PUBLISHED_AT_CHARS = 255, 500, 2_000, 64
EVIDENCE_TOP_K_MIN, EVIDENCE_TOP_K_MAX = 1, 10

BIAS_WARNING = "Generator and checker share model — results may be biased toward confirming generated content."
MISSING_SOURCE_MESSAGE = "Either contentToCheck or generatorModel must be provided"


class ValidationError(InvalidArgument, ValueError):
    """A request the gateway refuses; str(error) is the message for the caller, `field` the bad field."""


@dataclass(frozen=True)
class RunPlan:
    """A validated request with every default applied: what the pipeline runs."""

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
    # Pipelined verification (services/gateway/pipelined.py), and its batching (from the settings).
    pipelined: bool = False
    pipelined_batch_claims: int = 5
    pipelined_batches_in_flight: int = 4
    # How the checkers verify (FactCheckConfig.checker_strategy): "default" or "entailment_agents".
    checker_strategy: str = "default"

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

    @property
    def checker_strategy_proto(self) -> int:
        if self.checker_strategy == "entailment_agents":
            return entailment_pb2.CHECKER_STRATEGY_ENTAILMENT_AGENTS
        return entailment_pb2.CHECKER_STRATEGY_DEFAULT

    def request_config(self) -> dict:
        """The run's configuration as stored in messages.request_config (spec's camelCase names)."""
        config = {
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
        if self.checker_strategy != "default":
            config["checkerStrategy"] = self.checker_strategy
        return config


def _check(condition: object, field: str, message: str) -> None:
    if not condition:
        raise ValidationError(message, field=field)


def _check_model(field: str, model: str) -> None:
    _check(is_model_id(model), field, f"{field} must be a model id like \"provider/name\" (got '{excerpt(model)}')")


def _bounded(field: str, value: int, low: int, high: int) -> int:
    _check(low <= value <= high, field, f"{field} must be between {low} and {high} (got {value})")
    return value


def _storable(field: str, text: str) -> None:
    """Text the database stores: PostgreSQL cannot hold a NUL character."""
    _check("\x00" not in text, field, f"{field} must not contain NUL characters")


def _identifier(field: str, value: str) -> None:
    """Ids and other one-line fields: no control characters, line breaks or bidi controls."""
    _check(not has_unsafe_characters(value), field, f"{field} must not contain control characters or line breaks")


def validate_run_request(request: factcheck_pb2.RunRequest, settings: Settings, *, tenant_id: str) -> RunPlan:
    """Check a RunRequest of `tenant_id` and fill in defaults; raises ValidationError with a readable message."""
    _check(request.question.strip(), "question", "Question or content description is required")
    _check(
        len(request.question) <= MAX_QUESTION_CHARS,
        "question",
        f"question must be at most {MAX_QUESTION_CHARS} characters",
    )
    _storable("question", request.question)
    _check(
        request.mode == factcheck_pb2.MODE_FACT_CHECK,
        "mode",
        'mode must be MODE_FACT_CHECK ("fact_check"), the only mode this service runs',
    )
    conversation_id = request.conversation_id if request.HasField("conversation_id") else None
    if conversation_id is not None:
        _check(
            0 < len(conversation_id) <= MAX_CONVERSATION_ID_CHARS,
            "conversation_id",
            f"conversation_id must be 1 to {MAX_CONVERSATION_ID_CHARS} characters",
        )
        _identifier("conversation_id", conversation_id)

    config = request.mode_config
    has_config = request.HasField("mode_config")
    content = config.content_to_check or None
    generator = config.generator_model or None
    # Zod refines only a present modeConfig; without one, the default generator answers the question.
    if has_config:
        _check(content is not None or generator is not None, "mode_config", MISSING_SOURCE_MESSAGE)
    if content is not None:
        field = "mode_config.content_to_check"
        _check(
            len(content) <= MAX_CONTENT_CHARS,
            field,
            f"{field} must be at most {MAX_CONTENT_CHARS} characters (got {len(content)})",
        )
        _check(content.strip(), field, f"{field} must contain text")
        _storable(field, content)
    if content is None and generator is None:
        generator = settings.default_generator_model

    checkers = tuple(config.checker_models) or tuple(settings.default_checker_models)
    _check(
        1 <= len(checkers) <= MAX_CHECKERS,
        "mode_config.checker_models",
        f"mode_config.checker_models must list 1 to {MAX_CHECKERS} models (got {len(checkers)})",
    )
    extractor = config.extractor_model or settings.default_extractor_model
    reporter = config.reporter_model or settings.default_reporter_model
    if content is None:
        _check_model("mode_config.generator_model", generator)
    _check_model("mode_config.extractor_model", extractor)
    for index, checker in enumerate(checkers):
        _check_model(f"mode_config.checker_models[{index}]", checker)
    _check_model("mode_config.reporter_model", reporter)

    max_length = MAX_CONTENT_LENGTH_DEFAULT
    if config.HasField("max_content_length"):
        max_length = _bounded(
            "mode_config.max_content_length", config.max_content_length, MAX_CONTENT_LENGTH_MIN, MAX_CONTENT_LENGTH_MAX
        )
    timeout_ms = settings.stage_timeout_ms
    if config.HasField("timeout_ms"):
        timeout_ms = _bounded("mode_config.timeout_ms", config.timeout_ms, TIMEOUT_MS_MIN, TIMEOUT_MS_MAX)

    top_k = settings.evidence_top_k
    if config.HasField("evidence_top_k"):
        top_k = _bounded("mode_config.evidence_top_k", config.evidence_top_k, EVIDENCE_TOP_K_MIN, EVIDENCE_TOP_K_MAX)

    _check(
        config.checker_strategy in entailment_pb2.CheckerStrategy.values(),
        "mode_config.checker_strategy",
        "mode_config.checker_strategy must be CHECKER_STRATEGY_DEFAULT or CHECKER_STRATEGY_ENTAILMENT_AGENTS",
    )
    strategy = (
        "entailment_agents"
        if config.checker_strategy == entailment_pb2.CHECKER_STRATEGY_ENTAILMENT_AGENTS
        else "default"
    )

    return RunPlan(
        question=request.question,
        conversation_id=conversation_id,
        content_to_check=content,
        generator_model=generator if content is None else config.generator_model or None,
        extractor_model=extractor,
        checker_models=checkers,
        reporter_model=reporter,
        max_content_length=max_length,
        timeout_ms=timeout_ms,
        tenant_id=tenant_id,
        sources=validate_sources(config.sources, "mode_config.sources"),
        use_knowledge_store=config.use_knowledge_store if config.HasField("use_knowledge_store") else True,
        evidence_top_k=top_k,
        pipelined=config.pipelined,
        pipelined_batch_claims=settings.pipelined_batch_claims,
        pipelined_batches_in_flight=settings.pipelined_batches_in_flight,
        checker_strategy=strategy,
    )


def validate_sources(
    sources, field: str, *, max_count: int = MAX_SOURCES, name_missing: bool = True
) -> tuple[SourceDocument, ...]:
    """Check caller-supplied documents (request sources, AddDocuments).

    With `name_missing`, documents without an id get source_1, source_2, ... (request
    sources); otherwise the id stays empty for the knowledge store to derive.
    """
    _check(len(sources) <= max_count, field, f"{field} may list at most {max_count} documents (got {len(sources)})")
    total_bytes = sum(len(source.text.encode("utf-8", "surrogatepass")) for source in sources)
    _check(
        total_bytes <= MAX_SOURCES_TOTAL_BYTES,
        field,
        f"{field} may hold at most {MAX_SOURCES_TOTAL_BYTES} bytes of text in all (got {total_bytes})",
    )
    documents = tuple(_source_document(f"{field}[{i}]", source, i, name_missing) for i, source in enumerate(sources))
    ids = [document.id for document in documents if document.id]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    repeated = ", ".join(excerpt(i, 40) for i in duplicates[:5])
    _check(not duplicates, field, f"{field} ids must be unique (repeated: {repeated})")
    return documents


def _source_document(field: str, source: common_pb2.Source, index: int, name_missing: bool) -> SourceDocument:
    _check(source.text.strip(), f"{field}.text", f"{field}.text must contain text")
    _check(
        len(source.text) <= MAX_SOURCE_CHARS,
        f"{field}.text",
        f"{field}.text must be at most {MAX_SOURCE_CHARS} characters",
    )
    _storable(f"{field}.text", source.text)
    for name, limit in (
        ("id", MAX_SOURCE_ID_CHARS),
        ("title", MAX_SOURCE_TITLE_CHARS),
        ("url", MAX_SOURCE_URL_CHARS),
        ("published_at", MAX_PUBLISHED_AT_CHARS),
    ):
        value = getattr(source, name)
        _check(len(value) <= limit, f"{field}.{name}", f"{field}.{name} must be at most {limit} characters")
        _identifier(f"{field}.{name}", value)
    if source.HasField("authority"):
        _check(
            0.0 <= source.authority <= 1.0,
            f"{field}.authority",
            f"{field}.authority must be between 0 and 1 (got {source.authority})",
        )
    default_id = f"source_{index + 1}" if name_missing else ""
    return SourceDocument(
        id=source.id.strip() or default_id,
        title=source.title.strip() or source.id.strip() or default_id,
        url=source.url.strip(),
        text=source.text,
        published_at=source.published_at if source.HasField("published_at") else None,
        authority=source.authority if source.HasField("authority") else None,
    )
