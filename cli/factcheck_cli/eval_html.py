"""The HTML page of an evaluation: one self-contained document (html_page's frame: inline CSS, the
pages' one script, no network) rendered from templates/evaluation.html.j2 with what this module
computes from the Evaluation.

Per checker and set: the scores, a reliability diagram (SVG: the probability each confidence level
is read as against the share of its verdicts that were right, with the diagonal; each point sized by
its count), the confusion matrix as a heat-map table, and the latency percentiles (SVG bars). Across
checkers: balanced accuracy per set (SVG bars, with chance marked). Then the mistakes: every wrong
answer (claim, label, verdict, the checker's evidence), with filters by checker, set and label (the
pages' one script; without it every mistake shows). Every plot is drawn here as numbers and scales
with its card; every name and text (models, sets, claims, answers) goes through the template's
autoescaping.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from markupsafe import Markup

import factcheck_cli.eval_view as eval_view
import factcheck_cli.view as view
from factcheck.v1 import evaluation_pb2
from factcheck_cli.eval_view import VERDICTS
from factcheck_cli.html_page import frame

EVALUATION_STYLE = Markup(
    (resources.files("factcheck_cli") / "templates" / "evaluation.css").read_text(encoding="utf-8")
)

# The reliability diagram's plot area inside its SVG (viewBox 0 0 RELIABILITY_WIDTH RELIABILITY_HEIGHT).
RELIABILITY_WIDTH, RELIABILITY_HEIGHT = 280, 250
PLOT_LEFT, PLOT_TOP, PLOT_SIZE = 44, 14, 200
POINT_MIN_R, POINT_MAX_R = 3.0, 12.0
# A bin label's characters at the diagram's 10 px font, wide enough for any of them (DejaVu Sans: 0.55-0.7 em).
LABEL_CHAR_WIDTH = 7.0
# The comparison's bars: label column, then the bar's length for a balanced accuracy of 1.
COMPARE_LABEL, COMPARE_BAR, COMPARE_ROW = 230, 360, 26
LATENCY_BAR = 300
GOOD, POOR = (26, 127, 55), (207, 34, 46)
STATUS_CLASSES = {
    evaluation_pb2.EVALUATION_STATUS_COMPLETE: "s-complete",
    evaluation_pb2.EVALUATION_STATUS_PARTIAL: "s-partial",
    evaluation_pb2.EVALUATION_STATUS_FAILED: "s-failed",
    evaluation_pb2.EVALUATION_STATUS_CANCELLED: "s-cancelled",
    evaluation_pb2.EVALUATION_STATUS_RUNNING: "s-running",
}


def render_page(
    evaluation: evaluation_pb2.Evaluation,
    mistakes: Sequence[evaluation_pb2.EvaluationItem] = (),
    limit: int | None = None,
) -> str:
    """The evaluation's page as one HTML string, with its mistakes (wrong answers: at most `limit`, a
    note saying so when there were more)."""
    shown = list(mistakes)[:limit] if limit is not None else list(mistakes)
    rows = [eval_view.item_row(item) for item in shown]
    return frame(
        "evaluation.html.j2",
        extra_style=EVALUATION_STYLE,
        title=f"Evaluation of {', '.join(evaluation.checker_models) or 'no checker'}",
        evaluation_id=evaluation.evaluation_id,
        status=eval_view.status_name(evaluation.status),
        status_class=STATUS_CLASSES.get(evaluation.status, ""),
        note=eval_view.stop_note(evaluation),
        facts=[
            ("Checkers", ", ".join(evaluation.checker_models) or eval_view.NONE),
            ("Sets", eval_view.sets_text(evaluation)),
            ("Draw", eval_view.draw_text(evaluation)),
            ("Answers stored", f"{evaluation.done}/{evaluation.total}"),
            ("Usage", eval_view.usage_text(evaluation.usage)),
            ("Created", view.local_time(evaluation.created_at)),
        ],
        rows=[_row(score) for score in evaluation.scores],
        partial=any(eval_view.score_row(score).partial for score in evaluation.scores),
        partial_note=eval_view.PARTIAL_NOTE,
        comparison=comparison(evaluation.scores),
        panels=[_panel(index, score) for index, score in enumerate(evaluation.scores)],
        thresholds=[eval_view.threshold_row(fitted) for fitted in evaluation.fitted_thresholds],
        verdicts=VERDICTS,
        short=eval_view.SHORT,
        mistakes=rows,
        mistakes_more=len(mistakes) > len(shown),
        mistake_filters=_filters(rows),
    )


def write_page(
    path: Path,
    evaluation: evaluation_pb2.Evaluation,
    mistakes: Sequence[evaluation_pb2.EvaluationItem] = (),
    limit: int | None = None,
) -> None:
    """Write the page to path and say where on stderr (stdout may carry --json output)."""
    path.write_text(render_page(evaluation, mistakes, limit), encoding="utf-8")
    print(f"HTML report written to {path}", file=sys.stderr)


def _filters(rows: Sequence[eval_view.ItemRow]) -> list[tuple[str, str, list[str]]]:
    """The mistakes' filters: (the rows' data attribute, its label, the values it takes)."""
    return [
        ("checker", "Checker", sorted({row.checker for row in rows})),
        ("set", "Set", sorted({row.set for row in rows})),
        ("label", "Label", [label for label in VERDICTS if any(row.label == label for row in rows)]),
    ]


def _row(score: evaluation_pb2.CheckerScore) -> dict:
    """A row of the scores table; `sort` holds each numeric cell's value for the page's sorting."""
    row = eval_view.score_row(score)
    recalls = {item.verdict: item for item in score.verdicts}
    return {
        "row": row,
        "pr": {verdict: f"{row.precision[verdict]} / {row.recall[verdict]}" for verdict in VERDICTS},
        "recall_sort": {
            verdict: (recalls[value].recall if value in recalls and recalls[value].support else -1)
            for verdict, value in zip(VERDICTS, eval_view.VERDICT_VALUES)
        },
        "sort": {
            "balanced_accuracy": score.balanced_accuracy if row.scored else -1,
            "ece": score.expected_calibration_error if row.scored else -1,
            "dos": score.disputed_rate_on_supported if score.HasField("disputed_rate_on_supported") else -1,
            "unreadable": score.unreadable_rate if row.scored else -1,
            "p50": score.latency.p50 if score.latency.count else -1,
            "p95": score.latency.p95 if score.latency.count else -1,
            "tokens": score.usage.total_tokens,
            "cost": score.usage.cost_usd,
            "items": score.items,
        },
    }


def _panel(index: int, score: evaluation_pb2.CheckerScore) -> dict:
    return {
        "index": index,
        "row": eval_view.score_row(score),
        "reliability": reliability(score),
        "confusion": confusion_cells(score),
        "latency": latency(score),
    }


# --- the reliability diagram --------------------------------------------------------------


def _x(probability: float) -> float:
    return PLOT_LEFT + PLOT_SIZE * min(max(probability, 0.0), 1.0)


def _y(probability: float) -> float:
    return PLOT_TOP + PLOT_SIZE * (1 - min(max(probability, 0.0), 1.0))


def reliability(score: evaluation_pb2.CheckerScore) -> dict:
    """The diagram's geometry: the diagonal, the grid, and one point (with a bar down to 0) per bin
    that holds verdicts; a point's area grows with its count."""
    bins = [item for item in score.calibration if item.count > 0]
    largest = max((item.count for item in bins), default=0)
    points = []
    for item in bins:
        radius = POINT_MIN_R + (POINT_MAX_R - POINT_MIN_R) * math.sqrt(item.count / largest)
        x, y = _x(item.stated), _y(item.observed)
        # The label over its point (under it near the top), moved in so it never crosses the plot's edge.
        label = f"{eval_view.confidence_name(item.confidence)} · {item.count}"
        half = LABEL_CHAR_WIDTH * len(label) / 2
        label_x = min(max(x, PLOT_LEFT + half + 2), PLOT_LEFT + PLOT_SIZE - half - 2)
        above = y - radius - 4
        label_y = above if above >= PLOT_TOP + 12 else y + radius + 12
        points.append(
            {
                "confidence": eval_view.confidence_name(item.confidence),
                "stated": item.stated,
                "observed": item.observed,
                "count": item.count,
                "x": round(x, 1),
                "y": round(y, 1),
                "r": round(radius, 1),
                "bar_top": round(y, 1),
                "bar_height": round(_y(0) - y, 1),
                "label": label,
                "label_x": round(label_x, 1),
                "label_y": round(min(label_y, PLOT_TOP + PLOT_SIZE - 4), 1),
            }
        )
    ticks = [
        {"value": f"{value:g}", "x": round(_x(value), 1), "y": round(_y(value), 1)}
        for value in (0.0, 0.25, 0.5, 0.75, 1.0)
    ]
    return {
        "width": RELIABILITY_WIDTH,
        "height": RELIABILITY_HEIGHT,
        "left": PLOT_LEFT,
        "top": PLOT_TOP,
        "right": PLOT_LEFT + PLOT_SIZE,
        "bottom": PLOT_TOP + PLOT_SIZE,
        "size": PLOT_SIZE,
        "ticks": ticks,
        "points": points,
        "ece": eval_view.fraction(score.expected_calibration_error) if score.items else eval_view.NONE,
    }


# --- the confusion heat-map ---------------------------------------------------------------


def confusion_cells(score: evaluation_pb2.CheckerScore) -> list[dict]:
    """One row per label: its cells with their count, their share of the row, and a background whose
    strength is that share (green on the diagonal, where the verdict is right; red elsewhere)."""
    rows = []
    for index, (label, counts) in enumerate(zip(VERDICTS, eval_view.confusion(score))):
        total = sum(counts)
        cells = []
        for column, count in enumerate(counts):
            share = count / total if total else 0.0
            red, green, blue = GOOD if column == index else POOR
            cells.append(
                {
                    "count": count,
                    "share": f"{100 * share:.0f}%" if total else "",
                    "style": f"background-color: rgba({red}, {green}, {blue}, {0.08 + 0.72 * share:.2f})"
                    if count
                    else "",
                    "dark": share > 0.55,
                    "right": column == index,
                }
            )
        rows.append({"label": label, "total": total, "cells": cells})
    return rows


# --- latency ------------------------------------------------------------------------------


def latency(score: evaluation_pb2.CheckerScore) -> dict:
    percentiles = score.latency
    values = [("p50", percentiles.p50), ("p90", percentiles.p90), ("p95", percentiles.p95), ("p99", percentiles.p99)]
    values.append(("max", percentiles.max))
    slowest = max((value for _, value in values), default=0)
    return {
        "count": percentiles.count,
        "bars": [
            {
                "name": name,
                "value": f"{value:,} ms",
                "width": round(LATENCY_BAR * value / slowest, 1) if slowest else 0,
                "y": 4 + 22 * position,
            }
            for position, (name, value) in enumerate(values)
        ],
        "width": LATENCY_BAR + 140,
        "height": 8 + 22 * len(values),
    }


# --- the comparison across checkers -------------------------------------------------------


def comparison(scores) -> list[dict]:
    """Per set (in the order they first appear), each checker's balanced accuracy as a bar; chance is
    1 / the number of verdicts the set's labels hold."""
    by_set: dict[str, list[evaluation_pb2.CheckerScore]] = {}
    for score in scores:
        by_set.setdefault(score.set, []).append(score)
    charts = []
    for index, (name, members) in enumerate(by_set.items()):
        labels = max(
            (sum(1 for item in score.verdicts if item.support > 0) for score in members),
            default=0,
        )
        chance = 1 / labels if labels else None
        bars = []
        for position, score in enumerate(members):
            value = score.balanced_accuracy if score.items else 0.0
            bars.append(
                {
                    "checker": score.checker_model,
                    "value": eval_view.fraction(score.balanced_accuracy) if score.items else eval_view.NONE,
                    "width": round(COMPARE_BAR * min(max(value, 0.0), 1.0), 1),
                    "y": 6 + COMPARE_ROW * position,
                }
            )
        charts.append(
            {
                "index": index,
                "set": name,
                "bars": bars,
                "label_width": COMPARE_LABEL,
                "bar_width": COMPARE_BAR,
                "width": COMPARE_LABEL + COMPARE_BAR + 70,
                "height": 12 + COMPARE_ROW * len(members),
                "chance_x": None if chance is None else round(COMPARE_LABEL + COMPARE_BAR * chance, 1),
                "chance": None if chance is None else f"{chance:.2f}",
            }
        )
    return charts
