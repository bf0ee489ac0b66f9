"""The gateway's per-mode lookups, above both the modes and the run machinery: a request's mode
plans it, a stored run's mode fills in its result and rebuilds its request from its stored config (a
resumed run), and a run gets its mode's steps (the run
machinery, runs/, knows no mode: RunRegistry is handed this module as its `ModeLookup`).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from sqlalchemy.engine import Engine

from factcheck.kit.errors import MAX_QUESTION_CHARS
from factcheck.kit.settings import Settings
from factcheck.v1 import factcheck_pb2
from factcheck_gateway.ledger.queries import LedgerStore
from factcheck_gateway.ledger.totals import UsageTotals
from factcheck_gateway.modes import MODES, Mode, Plan, mode_named
from factcheck_gateway.request_validation import (
    MAX_CONVERSATION_ID_CHARS,
    RunBasics,
    ValidationError,
    check,
    check_budget,
    identifier,
    storable,
)
from factcheck_gateway.store.records import RESUMABLE, MessageRecord
from factcheck_gateway.store.stage_store import StageStore
from factcheck_gateway.stored_results import status_proto, timestamp


def mode_of(plan: Plan) -> Mode:
    """The mode that made `plan`."""
    return mode_named(plan.mode_name)


# --- requests -----------------------------------------------------------------------------------------


def checker_fields(plan: Plan) -> tuple[tuple[str, str], ...]:
    """The plan's checker models with their request fields (none for a mode without checkers)."""
    fields = mode_of(plan).checker_fields
    return fields(plan) if fields is not None else ()


def check_stored(plan: Plan, engine: Engine) -> None:
    """What the plan names in the store checked (ValidationError), for a mode that names something."""
    check = mode_of(plan).check_stored
    if check is not None:
        check(plan, engine)


def validate_run_request(request: factcheck_pb2.RunRequest, settings: Settings, *, tenant_id: str) -> Plan:
    """Check a RunRequest of `tenant_id` and plan it with its mode; raises ValidationError with a readable message."""
    check(request.question.strip(), "question", "Question or content description is required")
    check(
        len(request.question) <= MAX_QUESTION_CHARS,
        "question",
        f"question must be at most {MAX_QUESTION_CHARS} characters",
    )
    storable("question", request.question)
    mode = MODES.get(request.mode)
    names = ", ".join(factcheck_pb2.Mode.Name(value) for value in MODES)
    check(mode is not None, "mode", f"mode must be one of {names}")
    assert mode is not None  # (check raised)
    for other in MODES.values():
        if other is not mode and request.HasField(other.config_field):
            raise ValidationError(
                f"{other.config_field} is the config of {factcheck_pb2.Mode.Name(other.value)}; "
                f"a {factcheck_pb2.Mode.Name(mode.value)} run takes {mode.config_field}",
                field=other.config_field,
            )
    conversation_id = request.conversation_id if request.HasField("conversation_id") else None
    if conversation_id is not None:
        check(
            0 < len(conversation_id) <= MAX_CONVERSATION_ID_CHARS,
            "conversation_id",
            f"conversation_id must be 1 to {MAX_CONVERSATION_ID_CHARS} characters",
        )
        identifier("conversation_id", conversation_id)
    check_budget(request)
    return mode.plan(request, settings, RunBasics(request.question, conversation_id, tenant_id))


def stored_config(request: factcheck_pb2.RunRequest, plan: Plan) -> dict[str, Any]:
    """The run's request_config: the plan's resolved config, the fields resume needs that the plan does not
    resolve (`caller_config`), and RESUMABLE. The only stored copy of the request (`resume_request`)."""
    return {**plan.request_config(), **caller_config(request), RESUMABLE: True}


def caller_config(request: factcheck_pb2.RunRequest) -> dict[str, Any]:
    """The request's fields that no plan resolves, each only when set, in protobuf's JSON mapping: the budget
    ("budget") and the mode's `caller_fields` (keys of the mode's config). Migration 0017 stores them too."""
    config: dict[str, Any] = {}
    if request.HasField("budget"):
        config["budget"] = json_format.MessageToDict(request.budget)
    mode = MODES.get(request.mode)
    if mode is not None and mode.caller_fields:
        only = getattr(factcheck_pb2.RunRequest(), mode.config_field)
        only.CopyFrom(getattr(request, mode.config_field))
        for field, _ in only.ListFields():
            if field.name not in mode.caller_fields:
                only.ClearField(field.name)
        config.update(json_format.MessageToDict(only))
    return config


def resume_request(record: MessageRecord) -> factcheck_pb2.RunRequest | None:
    """The request a stored run resumes with, rebuilt from its request_config by its mode; None for a run
    stored before runs were durable. Raises ValueError when the config cannot be read as a request."""
    if not record.resumable:
        return None
    config = record.request_config
    mode = mode_named(config.get("mode"))
    request = factcheck_pb2.RunRequest(
        question=record.question, mode=mode.value, conversation_id=record.conversation_id
    )
    if record.request_id is not None:
        request.request_id = record.request_id
    try:
        if "budget" in config:
            json_format.ParseDict(config["budget"], request.budget)
        getattr(request, mode.config_field).CopyFrom(mode.request_from_config(config))
    except json_format.ParseError as error:
        raise ValueError(str(error)) from error
    return request


# --- stored runs --------------------------------------------------------------------------------------


def load_result(store: StageStore, message_id: str, tenant_id: str) -> factcheck_pb2.FactCheckResult | None:
    """The full result of one run, or None if there is no such message in `tenant_id`."""
    message = store.get_message(message_id, tenant_id=tenant_id)
    if message is None:
        return None
    mode = mode_named(message.request_config.get("mode"))
    result = factcheck_pb2.FactCheckResult(
        message_id=message.id,
        conversation_id=message.conversation_id,
        question=message.question,
        status=status_proto(message.status),
        title=message.title,
        created_at=timestamp(message.created_at),
        updated_at=timestamp(message.updated_at),
        mode=mode.value,
    )
    mode.fill_result(result, message, store.get_stages(message_id))
    if message.error_message is not None:
        result.error_message = message.error_message
    result.failures.extend(factcheck_pb2.StageFailure(**failure) for failure in message.failures)
    if message.request_id is not None:
        result.request_id = message.request_id
    usage = LedgerStore(store.engine).run_usage([message_id]).get(message_id, UsageTotals())
    result.usage.CopyFrom(usage.to_proto())
    return result


def list_results(
    store: StageStore,
    page_size: int,
    page_token: str | None,
    tenant_id: str,
    status: factcheck_pb2.MessageStatus = factcheck_pb2.MESSAGE_STATUS_UNSPECIFIED,
    mode: factcheck_pb2.Mode = factcheck_pb2.MODE_UNSPECIFIED,
) -> tuple[list[factcheck_pb2.ResultSummary], str | None]:
    """One page of ListResults, each run with its usage (one query for the page); only runs with `status`
    and of `mode` when they are set (known values: the servicer checked them)."""
    records, next_token = store.list_messages(
        page_size,
        page_token,
        tenant_id=tenant_id,
        status=factcheck_pb2.MessageStatus.Name(status).removeprefix("MESSAGE_STATUS_") if status else None,
        modes=stored_mode_names(mode) if mode else None,
    )
    usage = LedgerStore(store.engine).run_usage([record.id for record in records])
    return [message_summary(record, usage.get(record.id, UsageTotals())) for record in records], next_token


def stored_mode_names(mode: factcheck_pb2.Mode) -> tuple[str | None, ...]:
    """The request_config["mode"] values of a mode's runs; runs stored before modes existed (None) are fact-checks."""
    name = MODES[mode].name
    return (name, None) if MODES[mode] is mode_named(None) else (name,)


def message_summary(record: MessageRecord, usage: UsageTotals | None = None) -> factcheck_pb2.ResultSummary:
    """One ListResults row."""
    return factcheck_pb2.ResultSummary(
        usage=(usage or UsageTotals()).to_proto(),
        message_id=record.id,
        conversation_id=record.conversation_id,
        question=record.question,
        title=record.title,
        status=status_proto(record.status),
        created_at=timestamp(record.created_at),
        updated_at=timestamp(record.updated_at),
        mode=mode_named(record.request_config.get("mode")).value,
    )
