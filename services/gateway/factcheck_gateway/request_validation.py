"""Request validation shared by every mode, mirroring the request schema.

`validate_run_request` (mode_dispatch.py) checks what every run has (question, conversation id,
mode, and that the config set is the mode's own) with these rules, then hands the request to its
mode, which checks its config and fills in defaults (services/gateway/factcheck_gateway/modes/*/plan.py).
Every rule fails with a ValidationError (an InvalidArgument naming the bad field) whose message is shown to the
caller as INVALID_ARGUMENT before any event is sent. Messages quote caller input only as a
bounded excerpt.

Which `local/` engines and `onnx/` names exist is what the checker serves: the servicer asks it
(servable_models.py) and validates within `checking_against(answer)`; without one (a direct call), the
engines registered in this process stand for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from factcheck.kit.errors import InvalidArgument
from factcheck.kit.rpc import is_model_id
from factcheck.kit.settings import Settings
from factcheck.models.availability import ServableModels, check_servable, grounding_kind
from factcheck.models.errors import ModelNotConfiguredError
from factcheck.models.local import CHECKER
from factcheck.text.text_safety import excerpt, has_unsafe_characters
from factcheck.v1 import common_pb2
from factcheck_gateway.knowledge.passage_store import SourceDocument
from factcheck_gateway.ledger.budget import BudgetCarrier

TIMEOUT_MS_MIN, TIMEOUT_MS_MAX = 30_000, 180_000
# Bounds that keep one request from swamping the suite.
MAX_CONVERSATION_ID_CHARS = 200
# Per-request sources: bounded one by one and in total, so one request cannot swamp retrieval.
MAX_SOURCES = 20
MAX_SOURCE_CHARS = 200_000
MAX_SOURCES_TOTAL_BYTES = 2_000_000
# A run budget's bounds (services/gateway/factcheck_gateway/ledger/budget.py): a typo must not mean nonsense.
MAX_COST_USD_LIMIT = 1_000_000.0
MAX_TOKENS_LIMIT = 10**12
MAX_SOURCE_ID_CHARS, MAX_SOURCE_TITLE_CHARS, MAX_SOURCE_URL_CHARS, MAX_PUBLISHED_AT_CHARS = 255, 500, 2_000, 64


# What the checker serves, for the validation running in this context (None: this process's engines).
_served: ContextVar[ServableModels | None] = ContextVar("served_models", default=None)


@contextmanager
def checking_against(served: ServableModels) -> Iterator[None]:
    """Validate the models named within this block against `served` (what the checker answered)."""
    token = _served.set(served)
    try:
        yield
    finally:
        _served.reset(token)


class ValidationError(InvalidArgument, ValueError):
    """A request the gateway refuses; str(error) is the message for the caller, `field` the bad field."""


@dataclass(frozen=True)
class RunBasics:
    """What every run's request has, checked: the mode's plan is built from these and its config."""

    question: str
    conversation_id: str | None
    # Whose run this is: it is stored with the run, and retrieval searches only this tenant's documents.
    # Not part of the request (it comes from the caller's token).
    tenant_id: str


def check(condition: object, field: str, message: str) -> None:
    if not condition:
        raise ValidationError(message, field=field)


def check_model(field: str, model: str, settings: Settings, role: str | None = None) -> None:
    """A model id this suite can serve (in `role`, when given): a local/ engine the checker serves that can fill
    it (`checking_against`), an onnx/ name with a folder, or a provider with an endpoint configured and a dialect
    the suite speaks (the gateway's settings are the services': deployments give them the same model settings). A
    grounding model (an onnx/ one, or one of a grounding dialect) only verifies claims against passages: only a
    checker field (`role` CHECKER) takes one."""
    check(is_model_id(model), field, f"{field} must be a model id like \"provider/name\" (got '{excerpt(model)}')")
    try:
        check_servable(model, settings, role, _served.get())
    except ModelNotConfiguredError as error:
        raise ValidationError(f"{field}: {error}", field=field) from error
    kind = grounding_kind(model, settings)
    if kind is not None and role != CHECKER:
        raise ValidationError(
            f"{field}: {excerpt(model)} is a grounding model ({kind}): it only verifies claims against passages, "
            f"as a checker model; {field} needs a chat model (name one for it)",
            field=field,
        )


def check_checker_model(field: str, model: str, settings: Settings) -> None:
    """A model that can check claims: a local/ engine that verifies (not local/reporter, local/generator,
    ...), or a provider's model."""
    check_model(field, model, settings, CHECKER)


def bounded(field: str, value: int, low: int, high: int) -> int:
    check(low <= value <= high, field, f"{field} must be between {low} and {high} (got {value})")
    return value


def storable(field: str, text: str) -> None:
    """Text the database stores: PostgreSQL cannot hold a NUL character."""
    check("\x00" not in text, field, f"{field} must not contain NUL characters")


def identifier(field: str, value: str) -> None:
    """Ids and other one-line fields: no control characters, line breaks or bidi controls."""
    check(not has_unsafe_characters(value), field, f"{field} must not contain control characters or line breaks")


def stage_timeout_ms(config, field: str, settings: Settings) -> int:
    """A config's optional `timeout_ms`, bounded, or the gateway's default."""
    if config.HasField("timeout_ms"):
        return bounded(field, config.timeout_ms, TIMEOUT_MS_MIN, TIMEOUT_MS_MAX)
    return settings.stage_timeout_ms


def check_budget(request: BudgetCarrier) -> None:
    """Validate a request's budget (every mode's): non-negative, finite, bounded."""
    if not request.HasField("budget"):
        return
    budget = request.budget
    if budget.HasField("max_cost_usd"):
        value = budget.max_cost_usd
        if not 0 <= value <= MAX_COST_USD_LIMIT:  # NaN fails too
            raise ValidationError(
                f"budget.max_cost_usd must be between 0 and {MAX_COST_USD_LIMIT:.0f}", field="budget.max_cost_usd"
            )
    if budget.HasField("max_tokens") and not 0 <= budget.max_tokens <= MAX_TOKENS_LIMIT:
        raise ValidationError(f"budget.max_tokens must be between 0 and {MAX_TOKENS_LIMIT}", field="budget.max_tokens")


def validate_sources(
    sources, field: str, *, max_count: int = MAX_SOURCES, name_missing: bool = True
) -> tuple[SourceDocument, ...]:
    """Check caller-supplied documents (request sources, AddDocuments).

    With `name_missing`, documents without an id get source_1, source_2, ... (request
    sources); otherwise the id stays empty for the knowledge store to derive.
    """
    check(len(sources) <= max_count, field, f"{field} may list at most {max_count} documents (got {len(sources)})")
    total_bytes = sum(len(source.text.encode("utf-8", "surrogatepass")) for source in sources)
    check(
        total_bytes <= MAX_SOURCES_TOTAL_BYTES,
        field,
        f"{field} may hold at most {MAX_SOURCES_TOTAL_BYTES} bytes of text in all (got {total_bytes})",
    )
    documents = tuple(_source_document(f"{field}[{i}]", source, i, name_missing) for i, source in enumerate(sources))
    ids = [document.id for document in documents if document.id]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    repeated = ", ".join(excerpt(i, 40) for i in duplicates[:5])
    check(not duplicates, field, f"{field} ids must be unique (repeated: {repeated})")
    return documents


def _source_document(field: str, source: common_pb2.Source, index: int, name_missing: bool) -> SourceDocument:
    check(source.text.strip(), f"{field}.text", f"{field}.text must contain text")
    check(
        len(source.text) <= MAX_SOURCE_CHARS,
        f"{field}.text",
        f"{field}.text must be at most {MAX_SOURCE_CHARS} characters",
    )
    storable(f"{field}.text", source.text)
    for name, limit in (
        ("id", MAX_SOURCE_ID_CHARS),
        ("title", MAX_SOURCE_TITLE_CHARS),
        ("url", MAX_SOURCE_URL_CHARS),
        ("published_at", MAX_PUBLISHED_AT_CHARS),
    ):
        value = getattr(source, name)
        check(len(value) <= limit, f"{field}.{name}", f"{field}.{name} must be at most {limit} characters")
        identifier(f"{field}.{name}", value)
    if source.HasField("authority"):
        check(
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
