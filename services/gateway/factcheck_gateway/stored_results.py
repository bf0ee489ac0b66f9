"""A stored run as GetResult returns it, and its ListResults row, for every mode.

The fields every run has come from its messages row; its mode fills in its own sections
from its stage rows (services/gateway/factcheck_gateway/modes/*/result.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from google.protobuf.timestamp_pb2 import Timestamp

from factcheck.v1 import factcheck_pb2
from factcheck_gateway.ledger.totals import UsageTotals
from factcheck_gateway.store.ledger_queries import LedgerStore
from factcheck_gateway.store.stage_store import MessageRecord, StageRecord, StageStore

UNKNOWN_MODEL = "unknown"


def load_result(store: StageStore, message_id: str, tenant_id: str) -> factcheck_pb2.FactCheckResult | None:
    """The full result of one run, or None if there is no such message in `tenant_id`."""
    from factcheck_gateway.modes import mode_named  # the modes build on this module

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
    store: StageStore, page_size: int, page_token: str | None, tenant_id: str
) -> tuple[list[factcheck_pb2.ResultSummary], str | None]:
    """One page of ListResults, each run with its usage (one query for the page)."""
    records, next_token = store.list_messages(page_size, page_token, tenant_id=tenant_id)
    usage = LedgerStore(store.engine).run_usage([record.id for record in records])
    return [message_summary(record, usage.get(record.id, UsageTotals())) for record in records], next_token


def message_summary(record: MessageRecord, usage: UsageTotals | None = None) -> factcheck_pb2.ResultSummary:
    """One ListResults row."""
    from factcheck_gateway.modes import mode_named

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


def find_stage(stages: list[StageRecord], stage_type: str) -> StageRecord | None:
    return next((s for s in stages if s.stage_type == stage_type), None)


def model_of(stage: StageRecord | None) -> str:
    return (stage.model if stage else None) or UNKNOWN_MODEL


def response_time_of(stage: StageRecord | None) -> int:
    return (stage.response_time_ms if stage else None) or 0


def status_proto(status: str) -> factcheck_pb2.MessageStatus:
    """A stored status (COMPLETE, ...) as the proto enum; UNSPECIFIED for a name it does not know."""
    name = f"MESSAGE_STATUS_{status}"
    if name not in factcheck_pb2.MessageStatus.keys():
        return factcheck_pb2.MESSAGE_STATUS_UNSPECIFIED
    return cast(factcheck_pb2.MessageStatus, factcheck_pb2.MessageStatus.Value(name))  # (Value() is typed int)


def timestamp(value: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp
