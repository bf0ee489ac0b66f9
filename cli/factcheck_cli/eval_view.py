"""What the terminal table and the HTML page of an evaluation both show, as plain values: each
checker's scores on each set formatted once, the confusion matrix, and the names of statuses and
verdicts. Nothing here prints; eval_render and eval_html lay these values out.
"""

from __future__ import annotations

from dataclasses import dataclass

import factcheck_cli.view as view
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


def fraction(value: float, digits: int = 3) -> str:
    """A 0-1 score, rounded (2/3 is 0.667, or 0.67 with two digits)."""
    return f"{value:.{digits}f}"


def percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def cost(value: float) -> str:
    return f"${value:.4f}" if value else "$0"


def verdict_scores(score: evaluation_pb2.CheckerScore) -> dict[str, evaluation_pb2.VerdictScore]:
    """The per-verdict scores by verdict name (a verdict the gateway sent none for is absent)."""
    return {verdict_name(item.verdict): item for item in score.verdicts}


def precision_recall(item: evaluation_pb2.VerdictScore | None) -> tuple[str, str]:
    """Precision and recall as text with two decimals, rounded; "—" where it is undefined (never
    predicted, never labelled)."""
    if item is None:
        return NONE, NONE
    precision = fraction(item.precision, 2) if item.predicted else NONE
    recall = fraction(item.recall, 2) if item.support else NONE
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
    # Scored on fewer items than were drawn (the evaluation stopped early, or calls failed): the fractions
    # are the items judged's, not the set's.
    partial: bool = False

    @property
    def headline(self) -> str:
        """The balanced accuracy as a headline shows it: marked when it rests on part of the set."""
        return f"{self.balanced_accuracy}{PARTIAL_MARK}" if self.partial else self.balanced_accuracy


# Marks a score that rests on fewer items than were drawn (PARTIAL_NOTE says so under the table).
PARTIAL_MARK = "*"
PARTIAL_NOTE = (
    "* scored on fewer items than were drawn (the evaluation stopped early, or checker calls failed): "
    "these figures are the judged items', not the set's"
)


def is_partial(items: int, total: int) -> bool:
    return 0 < items < total


def headline_value(item: evaluation_pb2.ScoreHeadline | None) -> str:
    """ "0.586", "0.500*" on part of the set, "—" when nothing was scored."""
    if item is None or not item.items:
        return NONE
    return f"{fraction(item.balanced_accuracy)}{PARTIAL_MARK if is_partial(item.items, item.total) else ''}"


def headline_lines(evaluation: evaluation_pb2.Evaluation) -> list[str]:
    """Per checker (the checkers' order): its name and its balanced accuracy on each set (the sets' order)."""
    found = {(item.checker_model, item.set): item for item in evaluation.headlines}
    return [
        f"{model}: " + " · ".join(headline_value(found.get((model, summary.name))) for summary in evaluation.sets)
        for model in evaluation.checker_models
    ]


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
        partial=is_partial(score.items, score.total),
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
        failed = sum(score.failed for score in evaluation.scores)
        listed = (
            f"; the failed calls and why: factcheck eval show {evaluation.evaluation_id} --items --failed"
            if failed
            else ""
        )
        return (
            f"Stopped before every item was judged: {why.rstrip('.')}. The scores cover only the items judged. "
            f"Continue with: {resume} (add --max-cost-usd X or --max-tokens N when the budget ran out){listed}"
        )
    if status == evaluation_pb2.EVALUATION_STATUS_CANCELLED:
        return f"Cancelled{f' ({reason})' if reason else ''}; the items judged are stored. Continue with: {resume}"
    if status == evaluation_pb2.EVALUATION_STATUS_FAILED:
        return f"Failed: {reason or 'no reason given'}. The items judged are stored; continue with: {resume}"
    if status == evaluation_pb2.EVALUATION_STATUS_RUNNING:
        return (
            f"Still running ({evaluation.done} of {counted(evaluation.total, 'answer')} stored): "
            f"factcheck eval watch {evaluation.evaluation_id} follows it"
        )
    return ""


# --- answers ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ItemRow:
    """One checker's answer on one item, every value as it is shown."""

    checker: str
    set: str
    item_id: str
    claim: str
    label: str
    verdict: str  # the verdict, or "unreadable", or "failed"
    confidence: str
    outcome: str  # "right", "wrong", "unreadable" (wrong too) or "failed" (not scored)
    answer: str  # the checker's evidence, what it said when unreadable, or why the call failed
    correction: str
    latency: str
    cached: bool


def outcome(item: evaluation_pb2.EvaluationItem) -> str:
    if item.failed:
        return "failed"
    if item.unreadable:
        return "unreadable"
    return "right" if item.correct else "wrong"


def item_row(item: evaluation_pb2.EvaluationItem) -> ItemRow:
    kind = outcome(item)
    return ItemRow(
        checker=item.checker_model,
        set=item.set,
        item_id=item.item_id,
        claim=item.claim or NONE,
        label=verdict_name(item.label),
        verdict=kind if kind in ("failed", "unreadable") else verdict_name(item.verdict),
        confidence=confidence_name(item.confidence) if item.confidence else NONE,
        outcome=kind,
        answer=(item.error if item.failed else item.answer) or NONE,
        correction=item.correction or "",
        latency="cache" if item.cached else (f"{item.latency_ms:,} ms" if item.HasField("latency_ms") else NONE),
        cached=item.cached,
    )


# The columns of `eval show --jsonl / --csv`, in order: one record per answer, for a notebook.
RECORD_FIELDS = (
    "evaluation_id", "checker_model", "set", "item_id", "claim", "label", "verdict", "correct", "unreadable",
    "failed", "error", "confidence", "answer", "correction", "latency_ms", "cached", "prompt_tokens",
    "completion_tokens", "cached_tokens", "cost_usd", "evidence_passages", "support_probability",
    "support_threshold",
)  # fmt: skip


def item_record(evaluation_id: str, item: evaluation_pb2.EvaluationItem) -> dict:
    """An answer as one flat record: verdicts and labels by name (VERIFIED, ...), None where there is none."""
    return {
        "evaluation_id": evaluation_id,
        "checker_model": item.checker_model,
        "set": item.set,
        "item_id": item.item_id,
        "claim": item.claim,
        "label": verdict_name(item.label),
        "verdict": verdict_name(item.verdict) if item.verdict else None,
        "correct": item.correct,
        "unreadable": item.unreadable,
        "failed": item.failed,
        "error": item.error if item.HasField("error") else None,
        "confidence": confidence_name(item.confidence) if item.confidence else None,
        "answer": item.answer or None,
        "correction": item.correction if item.HasField("correction") else None,
        "latency_ms": item.latency_ms if item.HasField("latency_ms") else None,
        "cached": item.cached,
        "prompt_tokens": item.usage.prompt_tokens,
        "completion_tokens": item.usage.completion_tokens,
        "cached_tokens": item.usage.cached_tokens,
        "cost_usd": item.usage.cost_usd,
        "evidence_passages": item.evidence_passages,
        "support_probability": item.support_probability if item.HasField("support_probability") else None,
        "support_threshold": item.support_threshold if item.HasField("support_threshold") else None,
    }


# --- thresholds -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ThresholdRow:
    """One checker's fitted threshold (or why none), every value as it is shown."""

    checker: str
    set: str
    threshold: str
    balanced_accuracy: str
    evaluated: str  # the threshold the answers were read against, and its balanced accuracy
    items: str
    error: str


def threshold_row(fitted: evaluation_pb2.FittedThreshold) -> ThresholdRow:
    evaluated = NONE
    if fitted.HasField("evaluated_threshold"):
        evaluated = f"{fitted.evaluated_threshold:.4g} → {fraction(fitted.evaluated_balanced_accuracy)}"
    return ThresholdRow(
        checker=fitted.checker_model,
        set=fitted.set,
        threshold=f"{fitted.threshold:.6g}" if fitted.HasField("threshold") else NONE,
        balanced_accuracy=fraction(fitted.balanced_accuracy) if fitted.HasField("threshold") else NONE,
        evaluated=evaluated,
        items=(
            f"{fitted.items:,} ({fitted.verified_items:,} VERIFIED, {fitted.fixed_items:,} fixed, "
            f"{counted(fitted.candidates, 'candidate')})"
        ),
        error=fitted.error if fitted.HasField("error") else "",
    )


def unfitted_lines(evaluation: evaluation_pb2.Evaluation) -> list[str]:
    """Why a complete evaluation asked to fit thresholds has none for a checker (one line each)."""
    if not evaluation.fit_thresholds or evaluation.status != evaluation_pb2.EVALUATION_STATUS_COMPLETE:
        return []
    return [
        f"no threshold was fitted for {fitted.checker_model} on {fitted.set}: {fitted.error}"
        for fitted in evaluation.fitted_thresholds
        if not fitted.HasField("threshold")
    ]
