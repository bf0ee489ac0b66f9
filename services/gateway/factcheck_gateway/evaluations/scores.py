"""An evaluation's answers as the API shows them: per checker and set, the metrics of
factcheck.evaluation.metrics (one place for them) with what the answers cost from the ledger."""

from __future__ import annotations

from collections.abc import Sequence

from factcheck.core.domain import confidence_to_proto, verdict_to_proto
from factcheck.evaluation.metrics import ScoredItem, score
from factcheck.v1 import evaluation_pb2, usage_pb2
from factcheck_gateway.evaluations.store import ItemResult


def checker_score(model: str, set_name: str, total: int, answers: Sequence[ItemResult]) -> evaluation_pb2.CheckerScore:
    """One checker's scores on one set, from its stored answers (failed calls are counted, not scored)."""
    judged = [a for a in answers if not a.failed]
    scores = score(
        [
            ScoredItem(
                gold=a.label,
                predicted=a.verdict or "UNVERIFIABLE",
                confidence=a.confidence or "LOW",
                unreadable=a.unreadable,
                latency_ms=a.latency_ms,
                cached=a.cached,
            )
            for a in judged
        ]
    )
    result = evaluation_pb2.CheckerScore(
        checker_model=model,
        set=set_name,
        items=scores.items,
        total=total,
        balanced_accuracy=scores.balanced_accuracy,
        accuracy=scores.accuracy,
        verdicts=[
            evaluation_pb2.VerdictScore(
                verdict=verdict_to_proto(c.verdict),
                precision=c.precision,
                recall=c.recall,
                support=c.support,
                predicted=c.predicted,
            )
            for c in scores.classes
        ],
        confusion=[count for row in scores.confusion for count in row],
        expected_calibration_error=scores.expected_calibration_error or 0.0,
        calibration=[
            evaluation_pb2.CalibrationBin(
                confidence=confidence_to_proto(b.confidence),
                stated=b.stated,
                observed=b.accuracy,
                count=b.count,
            )
            for b in scores.calibration
        ],
        unreadable_rate=scores.unreadable_rate,
        usage=_usage(answers),
        cached=scores.cached,
        failed=len(answers) - len(judged),
    )
    if scores.disputed_rate_on_supported is not None:
        result.disputed_rate_on_supported = scores.disputed_rate_on_supported
    if scores.latency is not None:
        result.latency.CopyFrom(
            evaluation_pb2.LatencyPercentiles(
                p50=scores.latency.p50_ms,
                p90=scores.latency.p90_ms,
                p95=scores.latency.p95_ms,
                p99=scores.latency.p99_ms,
                max=scores.latency.max_ms,
                count=scores.latency.count,
            )
        )
    return result


def _usage(answers: Sequence[ItemResult]) -> usage_pb2.RunUsage:
    """The answers' ledger rows, summed (each answer stores its rows' tokens and cost)."""
    prompt = sum(a.prompt_tokens for a in answers)
    completion = sum(a.completion_tokens for a in answers)
    return usage_pb2.RunUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        cost_usd=sum(a.cost_usd for a in answers),
        calls=sum(1 for a in answers if not a.cached),
        failed_calls=sum(1 for a in answers if a.failed),
        cache_hits=sum(1 for a in answers if a.cached),
    )
