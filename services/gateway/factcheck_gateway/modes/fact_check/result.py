"""Fact-check mode's result, rebuilt from its stage rows (loadFactCheckResult).

Consensus is not stored: it is recomputed from the stored verifications (docs/modes.md#fact-check-mode,
Events and rows), so a result always agrees with the checkers' rows it is shown next to. A run that set
FactCheckConfig.consensus stored its weighting (consensus/weights.py): the consensus is recomputed
with those weights, whatever evaluations were stored since.
"""

from __future__ import annotations

from google.protobuf.json_format import ParseDict

from factcheck.core.domain import ClaimVerification, ExtractedClaim, VerdictSummary
from factcheck.v1 import common_pb2, factcheck_pb2
from factcheck_gateway.consensus import calculate_consensus
from factcheck_gateway.consensus.weights import DEFAULT, STAGE_CONSENSUS, Weighting, stored_weighting
from factcheck_gateway.modes.fact_check import citations, thresholds
from factcheck_gateway.modes.fact_check.investigate import records
from factcheck_gateway.modes.fact_check.stages import (
    STAGE_EXTRACT,
    STAGE_GENERATE,
    STAGE_INVESTIGATE,
    STAGE_REPORT,
    STAGE_RETRIEVE,
    VERIFY_PREFIX,
)
from factcheck_gateway.reviews.states import REVIEW_PREFIX
from factcheck_gateway.runs.run import stored_data
from factcheck_gateway.store.records import MessageRecord, StageRecord
from factcheck_gateway.stored_results import UNKNOWN_MODEL, find_stage, model_of, response_time_of


def fill_fact_check_result(
    result: factcheck_pb2.FactCheckResult, message: MessageRecord, stages: list[StageRecord]
) -> None:
    generate = find_stage(stages, STAGE_GENERATE[0])
    extract = find_stage(stages, STAGE_EXTRACT[0])
    report = find_stage(stages, STAGE_REPORT[0])
    verifies = [s for s in stages if s.stage_type.startswith(VERIFY_PREFIX)]
    claims = [ExtractedClaim.from_json(c) for c in stored_data(extract).get("claims", [])]
    result.content.CopyFrom(_content(message, generate))
    result.extraction.CopyFrom(_extraction(extract, claims))
    weighting = stored_weighting(
        str(message.request_config.get("consensus", DEFAULT)), find_stage(stages, STAGE_CONSENSUS[0])
    )
    checker_models = [str(model) for model in message.request_config.get("checkerModels") or []]
    result.verification.CopyFrom(_verification(verifies, claims, weighting, checker_models))
    result.report.CopyFrom(_report(report))
    retrieve = find_stage(stages, STAGE_RETRIEVE[0])
    if retrieve is not None:
        result.evidence.CopyFrom(_evidence(retrieve))
    investigate = find_stage(stages, STAGE_INVESTIGATE[0])
    if investigate is not None:
        # Review decisions are rows of their own ("review:<claim id>"), written after the run ended.
        decisions = {
            data["claimId"]: data
            for data in (stored_data(s) for s in stages if s.stage_type.startswith(REVIEW_PREFIX))
            if data.get("claimId")
        }
        data = stored_data(investigate)
        result.investigation.CopyFrom(records.result_proto(data, decisions, response_time_of(investigate)))
        result.report.report_text = records.report_text_with_decisions(result.report.report_text, data, decisions)
    citations.fill_result(result, stages)


# --- sections -----------------------------------------------------------------------------------------


def _evidence(retrieve: StageRecord) -> factcheck_pb2.EvidenceResult:
    data = stored_data(retrieve)
    return factcheck_pb2.EvidenceResult(
        claims=[
            common_pb2.ClaimEvidence(claim_id=c["claimId"], passage_ids=c.get("passageIds", []))
            for c in data.get("claims", [])
        ],
        passages=[ParseDict(p, common_pb2.Passage()) for p in data.get("passages", [])],
        method=data.get("method", ""),
        response_time_ms=response_time_of(retrieve),
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
    data = stored_data(extract)
    return factcheck_pb2.ExtractionResult(
        model=model_of(extract),
        claims=[c.to_proto() for c in claims],
        type_breakdown={str(k): int(v) for k, v in (data.get("typeBreakdown") or {}).items()},
        response_time_ms=response_time_of(extract),
    )


def _verification(
    verifies: list[StageRecord],
    claims: list[ExtractedClaim],
    weighting: Weighting | None = None,
    checker_models: list[str] | None = None,
) -> factcheck_pb2.VerificationResult:
    per_checker = [_stored_verifications(stage) for stage in verifies]
    checkers = [_checker(stage, verifications) for stage, verifications in zip(verifies, per_checker)]
    weights = weighting.weights if weighting is not None else None
    models = [model_of(stage) for stage in verifies]
    if weights is None or not set(models) <= set(weights.checkers):
        weights, models = None, []  # the stored weights cover every checker of the run: never taken
    consensus = calculate_consensus(claims, per_checker, weights, models)
    result = factcheck_pb2.VerificationResult(checkers=checkers, consensus=[c.to_proto() for c in consensus])
    if weighting is not None:
        result.consensus_weighting.CopyFrom(weighting.to_proto(checker_models or models))
    return result


def _stored_verifications(stage: StageRecord) -> list[ClaimVerification]:
    items = stored_data(stage).get("verifications") or []
    return [ClaimVerification.from_json(item, checker_model=stage.model) for item in items]


def _checker(stage: StageRecord, verifications: list[ClaimVerification]) -> factcheck_pb2.CheckerResult:
    data = stored_data(stage)
    stored = data.get("summary")
    summary = VerdictSummary.from_json(stored) if stored else VerdictSummary.count(v.verdict for v in verifications)
    result = factcheck_pb2.CheckerResult(
        model=model_of(stage),
        verifications=[v.to_proto() for v in verifications],
        summary=summary.to_proto(),
        response_time_ms=response_time_of(stage),
    )
    threshold = thresholds.result_proto(result.model, data)
    if threshold is not None:  # a binary checker: the threshold its verdicts were read against
        result.threshold.CopyFrom(threshold)
    return result


def _report(report: StageRecord | None) -> factcheck_pb2.ReportResult:
    data = stored_data(report)
    score = data.get("reliabilityScore")
    return factcheck_pb2.ReportResult(
        model=model_of(report),
        reliability_score=int(score) if score is not None else None,
        report_text=(report.content if report else None) or "",
        summary=VerdictSummary.from_json(data).to_proto(),
        response_time_ms=response_time_of(report),
        fallback=bool(data.get("fallback", False)),
        fallback_reason=str(data.get("fallbackReason", "")),
    )
