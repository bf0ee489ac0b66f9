"""An evaluation's answers as the API shows them: per checker and set, the metrics of
factcheck.evaluation.metrics (one place for them) with what the answers cost from the ledger, and the
headline (balanced accuracy and coverage) ListEvaluations gives from counted answers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from factcheck.core.domain import confidence_to_proto, verdict_to_proto
from factcheck.evaluation.metrics import ScoredItem, balanced_accuracy, score
from factcheck.evaluation.sets import LABELS
from factcheck.v1 import evaluation_pb2, usage_pb2
from factcheck_gateway.evaluations.store import ItemResult

# One group of answers as EvaluationStore.answer_counts counts them:
# (checker, set, label, verdict, unreadable, failed, count).
AnswerCount = tuple[str, str, str, str | None, bool, bool, int]


def checker_score(model: str, set_name: str, total: int, answers: Sequence[ItemResult]) -> evaluation_pb2.CheckerScore:
    """One checker's scores on one set, from its stored answers (failed calls are counted, not scored)."""
    judged = [a for a in answers if not a.failed]
    scores = score(
        [
            ScoredItem(
                gold=a.label,
                predicted=a.verdict or "UNVERIFIABLE",  # (ignored when unreadable)
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
        usage=answers_usage(answers),
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


def headline(score: evaluation_pb2.CheckerScore) -> evaluation_pb2.ScoreHeadline:
    """A computed score's headline."""
    return evaluation_pb2.ScoreHeadline(
        checker_model=score.checker_model,
        set=score.set,
        items=score.items,
        total=score.total,
        balanced_accuracy=score.balanced_accuracy,
        failed=score.failed,
    )


def headlines(
    checker_models: Sequence[str], sets: Sequence[tuple[str, int]], counts: Iterable[AnswerCount]
) -> list[evaluation_pb2.ScoreHeadline]:
    """Per checker, then per set ((name, items drawn)), the headline from counted answers: the same
    balanced accuracy CheckerScore has (an unreadable answer counts in its label's support, never as right)."""
    support: dict[tuple[str, str], list[int]] = {}
    correct: dict[tuple[str, str], list[int]] = {}
    failed: dict[tuple[str, str], int] = {}
    for model, set_name, label, verdict, unreadable, is_failed, count in counts:
        key = (model, set_name)
        if is_failed:
            failed[key] = failed.get(key, 0) + count
            continue
        if label not in LABELS:
            continue
        index = LABELS.index(label)
        support.setdefault(key, [0, 0, 0])[index] += count
        if not unreadable and verdict == label:
            correct.setdefault(key, [0, 0, 0])[index] += count
    found = []
    for model in checker_models:
        for set_name, total in sets:
            key = (model, set_name)
            labelled = support.get(key, [0, 0, 0])
            found.append(
                evaluation_pb2.ScoreHeadline(
                    checker_model=model,
                    set=set_name,
                    items=sum(labelled),
                    total=total,
                    balanced_accuracy=balanced_accuracy(labelled, correct.get(key, [0, 0, 0])),
                    failed=failed.get(key, 0),
                )
            )
    return found


def answers_usage(answers: Sequence[ItemResult]) -> usage_pb2.RunUsage:
    """The answers' ledger rows, summed (each answer stores its rows' tokens and cost)."""
    prompt = sum(a.prompt_tokens for a in answers)
    completion = sum(a.completion_tokens for a in answers)
    return usage_pb2.RunUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=sum(a.cached_tokens for a in answers),
        total_tokens=prompt + completion,
        cost_usd=sum(a.cost_usd for a in answers),
        calls=sum(1 for a in answers if not a.cached),
        failed_calls=sum(1 for a in answers if a.failed),
        cache_hits=sum(1 for a in answers if a.cached),
    )
