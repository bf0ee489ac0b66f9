"""What the terminal table and the HTML page of an evaluation both show, as plain values: each
checker's scores on each set formatted once, the confusion matrix, and the names of statuses and
verdicts. Nothing here prints; eval_render and eval_html lay these values out.
"""

from __future__ import annotations

from dataclasses import dataclass

import factcheck.cli.view as view
from factcheck.core.domain import verdict_to_proto
from factcheck.evaluation.sets import LABELS
from factcheck.text.wording import counted
from factcheck.v1 import evaluation_pb2

# The order of the confusion matrix's rows (labels) and columns (verdicts), as the proto gives it.
VERDICTS = LABELS  # the order of the confusion matrix and the per-verdict scores
VERDICT_VALUES = tuple(verdict_to_proto(name) for name in VERDICTS)
SHORT = {"VERIFIED": "VER", "DISPUTED": "DIS", "UNVERIFIABLE": "UNV"}
NONE = "—"
# The stated confidence read as a probability (CheckerScore.expected_calibration_error).
CONFIDENCES = ("HIGH", "MEDIUM", "LOW")


def status_name(status: int) -> str:
    """ "COMPLETE"; a status this client does not know by its number."""
    try:
        return evaluation_pb2.EvaluationStatus.Name(status).removeprefix("EVALUATION_STATUS_")
    except ValueError:
        return f"STATUS {status}"


def verdict_name(verdict: int) -> str:
    return view.verdict_name(verdict)


def confidence_name(confidence: int) -> str:
    return view.confidence_name(confidence)


def fraction(value: float) -> str:
    """A 0-1 score with three decimals."""
    return f"{value:.3f}"


def percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def cost(value: float) -> str:
    return f"${value:.4f}" if value else "$0"


def verdict_scores(score: evaluation_pb2.CheckerScore) -> dict[str, evaluation_pb2.VerdictScore]:
    """The per-verdict scores by verdict name (a verdict the gateway sent none for is absent)."""
    return {verdict_name(item.verdict): item for item in score.verdicts}


def precision_recall(item: evaluation_pb2.VerdictScore | None) -> tuple[str, str]:
    """Precision and recall as text; "—" where it is undefined (never predicted, never labelled)."""
    if item is None:
        return NONE, NONE
    precision = fraction(item.precision) if item.predicted else NONE
    recall = fraction(item.recall) if item.support else NONE
    return precision, recall


def confusion(score: evaluation_pb2.CheckerScore) -> list[list[int]]:
    """The 3×3 matrix (rows: label, columns: verdict); zeros where the gateway sent fewer than 9 counts."""
    counts = list(score.confusion)[:9]
    counts += [0] * (9 - len(counts))
    return [counts[row * 3 : row * 3 + 3] for row in range(3)]


@dataclass(frozen=True)
class ScoreRow:
    """One checker on one set, every value as it is shown."""

    checker: str
    set: str
    items: str
    balanced_accuracy: str
    accuracy: str
    precision: dict[str, str]
    recall: dict[str, str]
    ece: str
    disputed_on_supported: str
    unreadable: str
    p50: str
    p95: str
    tokens: str
    cost: str
    cached: str
    failed: str
    scored: bool  # at least one item was scored (the fractions mean something)


def score_row(score: evaluation_pb2.CheckerScore) -> ScoreRow:
    scored = score.items > 0
    by_verdict = verdict_scores(score)
    precision, recall = {}, {}
    for name in VERDICTS:
        precision[name], recall[name] = precision_recall(by_verdict.get(name)) if scored else (NONE, NONE)
    timed = score.latency.count > 0
    return ScoreRow(
        checker=score.checker_model,
        set=score.set,
        items=f"{score.items}/{score.total}",
        balanced_accuracy=fraction(score.balanced_accuracy) if scored else NONE,
        accuracy=fraction(score.accuracy) if scored else NONE,
        precision=precision,
        recall=recall,
        ece=fraction(score.expected_calibration_error) if scored else NONE,
        disputed_on_supported=(
            percent(score.disputed_rate_on_supported) if score.HasField("disputed_rate_on_supported") else NONE
        ),
        unreadable=percent(score.unreadable_rate) if scored else NONE,
        p50=f"{score.latency.p50:,} ms" if timed else NONE,
        p95=f"{score.latency.p95:,} ms" if timed else NONE,
        tokens=f"{score.usage.total_tokens:,}",
        cost=cost(score.usage.cost_usd),
        cached=str(score.cached),
        failed=str(score.failed),
        scored=scored,
    )


def sets_text(evaluation: evaluation_pb2.Evaluation) -> str:
    """ "factcheck-bench (5 of 985), mine (custom, 12)"."""
    parts = []
    for summary in evaluation.sets:
        drawn = f"{summary.items} of {summary.available}" if summary.available != summary.items else str(summary.items)
        parts.append(f"{summary.name} ({'custom, ' if summary.custom else ''}{drawn})")
    return ", ".join(parts) or NONE


def draw_text(evaluation: evaluation_pb2.Evaluation) -> str:
    """ "limit N per set, seed S" (the draw), or "every item"."""
    if evaluation.limit:
        return f"limit {evaluation.limit} per set, seed {evaluation.seed}"
    return "every item"


def usage_text(usage) -> str:
    """ "1,234 tokens, $0.0012, 40 calls (2 failed), 10 cache hits"."""
    parts = [counted(usage.total_tokens, "token"), cost(usage.cost_usd), counted(usage.calls, "call")]
    if usage.failed_calls:
        parts[-1] += f" ({usage.failed_calls:,} failed)"
    if usage.cache_hits:
        parts.append(counted(usage.cache_hits, "cache hit"))
    return ", ".join(parts)


def stop_note(evaluation: evaluation_pb2.Evaluation) -> str:
    """Why an evaluation that is not COMPLETE stopped, and how to go on ("" for a complete one)."""
    status = evaluation.status
    reason = evaluation.error_message if evaluation.HasField("error_message") else ""
    resume = f"factcheck eval resume {evaluation.evaluation_id}"
    if status == evaluation_pb2.EVALUATION_STATUS_PARTIAL:
        why = reason or "the budget ran out"
        return (
            f"Stopped before every item was judged ({why}); the scores cover the items judged. "
            f"Continue with: {resume} (add --max-cost-usd X or --max-tokens N when the budget ran out)"
        )
    if status == evaluation_pb2.EVALUATION_STATUS_CANCELLED:
        return f"Cancelled{f' ({reason})' if reason else ''}; the items judged are stored. Continue with: {resume}"
    if status == evaluation_pb2.EVALUATION_STATUS_FAILED:
        return f"Failed: {reason or 'no reason given'}. The items judged are stored; continue with: {resume}"
    if status == evaluation_pb2.EVALUATION_STATUS_RUNNING:
        return f"Still running, or stopped with its gateway ({evaluation.done} of {evaluation.total} answers stored); continue a stopped one with: {resume}"
    return ""
