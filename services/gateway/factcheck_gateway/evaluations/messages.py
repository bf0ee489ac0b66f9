"""Stored evaluations and answers as the API's messages (Evaluation, EvaluationItem)."""

from __future__ import annotations

from collections.abc import Sequence

from factcheck.core.domain import confidence_to_proto, verdict_to_proto
from factcheck.evaluation.sets import LabelledItem
from factcheck.v1 import common_pb2, evaluation_pb2, usage_pb2
from factcheck_gateway.evaluations.store import EvaluationRecord, FittedThreshold, StoredAnswer
from factcheck_gateway.evaluations.thresholds import ChosenThreshold, fitted_proto
from factcheck_gateway.ledger.totals import UsageTotals
from factcheck_gateway.stored_results import timestamp

STATUS = {
    "RUNNING": evaluation_pb2.EVALUATION_STATUS_RUNNING,
    "COMPLETE": evaluation_pb2.EVALUATION_STATUS_COMPLETE,
    "PARTIAL": evaluation_pb2.EVALUATION_STATUS_PARTIAL,
    "FAILED": evaluation_pb2.EVALUATION_STATUS_FAILED,
    "CANCELLED": evaluation_pb2.EVALUATION_STATUS_CANCELLED,
}


def drawn_sets(record: EvaluationRecord) -> list[tuple[str, int]]:
    """The evaluation's sets, in order, with the items drawn from each."""
    return [(stored["name"], len(stored["itemIds"])) for stored in record.config["sets"]]


def evaluation_summary(
    record: EvaluationRecord,
    done: int,
    usage: UsageTotals | None,
    headlines: Sequence[evaluation_pb2.ScoreHeadline] = (),
    fitted: Sequence[FittedThreshold] = (),
) -> evaluation_pb2.Evaluation:
    """The stored evaluation without its scores (with its thresholds: the ones it used, the ones it fitted)."""
    config = record.config
    evaluation = evaluation_pb2.Evaluation(
        evaluation_id=record.id,
        status=STATUS[record.status],
        checker_models=config["checkerModels"],
        sets=[
            evaluation_pb2.EvaluationSetSummary(
                name=s["name"], custom=s["custom"], items=len(s["itemIds"]), available=s["available"]
            )
            for s in config["sets"]
        ],
        limit=config.get("limit") or 0,
        seed=config.get("seed") or 0,
        done=done,
        total=record.total,
        usage=(usage or UsageTotals()).to_proto(),
        created_at=timestamp(record.created_at),
        updated_at=timestamp(record.updated_at),
        headlines=headlines,
        last_seq=record.last_seq,
        fit_thresholds=bool(config.get("fitThresholds")),
    )
    if record.error_message is not None:
        evaluation.error_message = record.error_message
    if config.get("thresholdEvaluationId"):
        evaluation.threshold_evaluation_id = config["thresholdEvaluationId"]
    chosen = config.get("checkerThresholds") or {}
    order = {model: index for index, model in enumerate(config["checkerModels"])}
    for model in sorted(chosen, key=lambda m: order.get(m, len(order))):
        evaluation.checker_thresholds.append(ChosenThreshold.from_json(model, chosen[model]).to_proto())
    for found in sorted(fitted, key=lambda f: order.get(f.checker_model, len(order))):
        evaluation.fitted_thresholds.append(fitted_proto(found))
    return evaluation


def evaluation_item(stored: StoredAnswer, item: LabelledItem | None) -> evaluation_pb2.EvaluationItem:
    """One stored answer, with the claim it judged (`item`: None when the set no longer holds it)."""
    answer = stored.result
    message = evaluation_pb2.EvaluationItem(
        checker_model=answer.checker_model,
        set=answer.set_name,
        item_id=answer.item_id,
        claim=item.claim if item is not None else "",
        label=verdict_to_proto(answer.label),
        verdict=(
            verdict_to_proto(answer.verdict)
            if answer.verdict and not answer.unreadable and not answer.failed
            else common_pb2.VERDICT_UNSPECIFIED
        ),
        confidence=(
            confidence_to_proto(answer.confidence)
            if answer.confidence and not answer.unreadable
            else common_pb2.CONFIDENCE_UNSPECIFIED
        ),
        correct=answer.correct,
        unreadable=answer.unreadable,
        failed=answer.failed,
        answer=answer.answer or "",
        cached=answer.cached,
        usage=usage_pb2.RunUsage(
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            cached_tokens=answer.cached_tokens,
            total_tokens=answer.prompt_tokens + answer.completion_tokens,
            cost_usd=answer.cost_usd,
        ),
        evidence_passages=len(item.evidence) if item is not None else 0,
        created_at=timestamp(stored.created_at),
    )
    if answer.error is not None:
        message.error = answer.error
    if answer.correction:
        message.correction = answer.correction
    if answer.latency_ms is not None:
        message.latency_ms = answer.latency_ms
    if answer.support_probability is not None:
        message.support_probability = answer.support_probability
    if answer.support_threshold is not None:
        message.support_threshold = answer.support_threshold
    return message
