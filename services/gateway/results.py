"""Rebuild a stored fact-check from its stage rows (spec section G, loadFactCheckResult).

Consensus is not stored: it is recomputed from the stored verifications, as the spec
does, so a result always agrees with the checkers' rows it is shown next to.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.protobuf.json_format import ParseDict
from google.protobuf.timestamp_pb2 import Timestamp

from factcheck.domain import ClaimVerification, ExtractedClaim, VerdictSummary
from factcheck.v1 import common_pb2, factcheck_pb2
from services.gateway.consensus import calculate_consensus
from services.gateway.store.models import STAGE_EXTRACT, STAGE_GENERATE, STAGE_REPORT, STAGE_RETRIEVE, VERIFY_PREFIX
from services.gateway.store.store import MessageRecord, StageRecord, StageStore

UNKNOWN_MODEL = "unknown"


def load_fact_check_result(store: StageStore, message_id: str, tenant_id: str) -> factcheck_pb2.FactCheckResult | None:
    """The full result of one run, or None if there is no such message in `tenant_id`."""
    message = store.get_message(message_id, tenant_id=tenant_id)
    if message is None:
        return None
    stages = store.get_stages(message_id)
    generate = _find(stages, STAGE_GENERATE[0])
    extract = _find(stages, STAGE_EXTRACT[0])
    report = _find(stages, STAGE_REPORT[0])
    verifies = [s for s in stages if s.stage_type.startswith(VERIFY_PREFIX)]

    claims = [ExtractedClaim.from_json(c) for c in _data(extract).get("claims", [])]
    result = factcheck_pb2.FactCheckResult(
        message_id=message.id,
        conversation_id=message.conversation_id,
        question=message.question,
        status=_status(message.status),
        title=message.title,
        content=_content(message, generate),
        extraction=_extraction(extract, claims),
        verification=_verification(verifies, claims),
        report=_report(report),
        created_at=timestamp(message.created_at),
        updated_at=timestamp(message.updated_at),
    )
    retrieve = _find(stages, STAGE_RETRIEVE[0])
    if retrieve is not None:
        result.evidence.CopyFrom(_evidence(retrieve))
    if message.error_message is not None:
        result.error_message = message.error_message
    result.failures.extend(factcheck_pb2.StageFailure(**failure) for failure in message.failures)
    if message.request_id is not None:
        result.request_id = message.request_id
    return result


def message_summary(record: MessageRecord) -> factcheck_pb2.ResultSummary:
    """One ListResults row."""
    return factcheck_pb2.ResultSummary(
        message_id=record.id,
        conversation_id=record.conversation_id,
        question=record.question,
        title=record.title,
        status=_status(record.status),
        created_at=timestamp(record.created_at),
        updated_at=timestamp(record.updated_at),
    )


# --- sections -----------------------------------------------------------------------------------------


def _evidence(retrieve: StageRecord) -> factcheck_pb2.EvidenceResult:
    data = _data(retrieve)
    return factcheck_pb2.EvidenceResult(
        claims=[
            common_pb2.ClaimEvidence(claim_id=c["claimId"], passage_ids=c.get("passageIds", []))
            for c in data.get("claims", [])
        ],
        passages=[ParseDict(p, common_pb2.Passage()) for p in data.get("passages", [])],
        method=data.get("method", ""),
        response_time_ms=_response_time(retrieve),
    )


def _content(message: MessageRecord, generate: StageRecord | None) -> factcheck_pb2.ContentResult:
    """Generated text when there is a generate row, else the user's content.

    Without a generate row the request decides the source, so a generated run that
    failed before its content was stored is not mislabelled as user content.
    """
    if generate is not None:
        return factcheck_pb2.ContentResult(
            source=factcheck_pb2.CONTENT_SOURCE_GENERATED,
            model=generate.model or UNKNOWN_MODEL,
            text=generate.content or "",
            response_time_ms=generate.response_time_ms or 0,
        )
    config = message.request_config
    generated = config.get("contentSource") == "generated"
    return factcheck_pb2.ContentResult(
        source=factcheck_pb2.CONTENT_SOURCE_GENERATED if generated else factcheck_pb2.CONTENT_SOURCE_USER_PROVIDED,
        text=config.get("contentToCheck") or "",
    )


def _extraction(extract: StageRecord | None, claims: list[ExtractedClaim]) -> factcheck_pb2.ExtractionResult:
    data = _data(extract)
    return factcheck_pb2.ExtractionResult(
        model=_model(extract),
        claims=[c.to_proto() for c in claims],
        type_breakdown={str(k): int(v) for k, v in (data.get("typeBreakdown") or {}).items()},
        response_time_ms=_response_time(extract),
    )


def _verification(verifies: list[StageRecord], claims: list[ExtractedClaim]) -> factcheck_pb2.VerificationResult:
    per_checker = [_stored_verifications(stage) for stage in verifies]
    checkers = [_checker(stage, verifications) for stage, verifications in zip(verifies, per_checker)]
    consensus = calculate_consensus(claims, per_checker)
    return factcheck_pb2.VerificationResult(checkers=checkers, consensus=[c.to_proto() for c in consensus])


def _stored_verifications(stage: StageRecord) -> list[ClaimVerification]:
    items = _data(stage).get("verifications") or []
    return [ClaimVerification.from_json(item, checker_model=stage.model) for item in items]


def _checker(stage: StageRecord, verifications: list[ClaimVerification]) -> factcheck_pb2.CheckerResult:
    stored = _data(stage).get("summary")
    summary = VerdictSummary.from_json(stored) if stored else VerdictSummary.count(v.verdict for v in verifications)
    return factcheck_pb2.CheckerResult(
        model=_model(stage),
        verifications=[v.to_proto() for v in verifications],
        summary=summary.to_proto(),
        response_time_ms=_response_time(stage),
    )


def _report(report: StageRecord | None) -> factcheck_pb2.ReportResult:
    data = _data(report)
    score = data.get("reliabilityScore")
    return factcheck_pb2.ReportResult(
        model=_model(report),
        reliability_score=int(score) if score is not None else None,
        report_text=(report.content if report else None) or "",
        summary=VerdictSummary.from_json(data).to_proto(),
        response_time_ms=_response_time(report),
        fallback=bool(data.get("fallback", False)),
    )


# --- helpers ------------------------------------------------------------------------------------------


def _find(stages: list[StageRecord], stage_type: str) -> StageRecord | None:
    return next((s for s in stages if s.stage_type == stage_type), None)


def _data(stage: StageRecord | None) -> dict[str, Any]:
    return stage.parsed_data if stage is not None and stage.parsed_data else {}


def _model(stage: StageRecord | None) -> str:
    return (stage.model if stage else None) or UNKNOWN_MODEL


def _response_time(stage: StageRecord | None) -> int:
    return (stage.response_time_ms if stage else None) or 0


def _status(status: str) -> int:
    name = f"MESSAGE_STATUS_{status}"
    return factcheck_pb2.MessageStatus.Value(name) if name in factcheck_pb2.MessageStatus.keys() else 0


def timestamp(value: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp
