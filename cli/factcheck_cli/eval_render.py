"""Terminal output of `factcheck eval`: the progress of a running evaluation (a bar on a terminal,
plain lines otherwise, on stderr either way), the score tables and confusion matrices of an
evaluation, and the listings of evaluations and shipped sets.

Every table is the listings' one (`tables.print_table`): a line per row, cut with "…" to fit the
terminal, every value whole with `--wide`; none folds a name across lines.

Model and set names come from the caller or the gateway: they are shown only through
`terminal.plain`, so they can neither restyle nor drive the terminal.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as Bar
from rich.table import Table
from rich.text import Text

import factcheck_cli.eval_view as eval_view
import factcheck_cli.view as view
from factcheck.v1 import evaluation_pb2
from factcheck_cli.eval_view import NONE, SHORT, VERDICTS
from factcheck_cli.tables import Column, print_table
from factcheck_cli.terminal import clean, counted, plain, section, stage_line

STATUS_STYLES = {
    evaluation_pb2.EVALUATION_STATUS_RUNNING: "cyan",
    evaluation_pb2.EVALUATION_STATUS_COMPLETE: "green",
    evaluation_pb2.EVALUATION_STATUS_PARTIAL: "yellow",
    evaluation_pb2.EVALUATION_STATUS_FAILED: "red",
    evaluation_pb2.EVALUATION_STATUS_CANCELLED: "magenta",
}
# Without a terminal, a progress line each time another tenth of the answers is stored.
PLAIN_STEPS = 10


# --- progress -----------------------------------------------------------------------------


def started_line(event: evaluation_pb2.EvaluationEvent) -> Text:
    started = event.started
    sets = ", ".join(f"{summary.name} ({summary.items})" for summary in started.sets)
    resumed = f", {started.done} stored already" if started.done else ""
    return stage_line(
        "started",
        f"evaluation {event.evaluation_id}: {counted(len(started.checker_models), 'checker')} × "
        f"{counted(len(started.sets), 'set')} [{sets}], {counted(started.total, 'answer')}{resumed}",
    )


def score_line(score: evaluation_pb2.CheckerScore) -> Text:
    row = eval_view.score_row(score)
    of_total = f"{score.items} of {counted(score.total, 'item')}"
    on = f"on {of_total} only (partial)" if row.partial else of_total
    return stage_line(
        "score",
        f"{row.checker} on {row.set}: balanced accuracy {row.balanced_accuracy}, ECE {row.ece}, {on}, "
        f"{row.failed} failed",
    )


def finished_line(evaluation: evaluation_pb2.Evaluation) -> Text:
    return stage_line(
        "finished",
        Text(eval_view.status_name(evaluation.status), STATUS_STYLES.get(evaluation.status, "")),
        f" ({evaluation.done}/{counted(evaluation.total, 'answer')} stored)",
    )


class EvalProgress:
    """Shows an evaluation's events on stderr as they arrive.

    On a terminal: a progress bar, with a line above it for the start and each checker's score on
    a set. Otherwise: the same lines as plain text, and a progress line per tenth of the answers.
    """

    def __init__(self, console: Console | None = None) -> None:
        self._console = console or Console(stderr=True, highlight=False)
        self._bar: Bar | None = None
        self._task = None
        self._next_step = 1
        if self._console.is_terminal:
            self._bar = Bar(
                TextColumn("[bold cyan]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("[progress.percentage]{task.percentage:>3.0f}%"),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=self._console,
                transient=True,
            )
            self._task = self._bar.add_task("Evaluating", total=None)
        self.evaluation_id: str | None = None

    def __enter__(self) -> EvalProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def _line(self, line: Text) -> None:
        if self._bar is None:
            print(line.plain, file=sys.stderr, flush=True)
        else:
            self._bar.console.print(line)

    def note(self, text: str) -> None:
        """One line about the connection (lost, followed again), above the bar."""
        self._line(stage_line("note", plain(text)))

    def show(self, event: evaluation_pb2.EvaluationEvent) -> None:
        if event.evaluation_id:
            self.evaluation_id = event.evaluation_id
        kind = event.WhichOneof("event")
        if kind == "started":
            self._line(started_line(event))
            self._advance(event.started.done, event.started.total, "")
        elif kind == "progress":
            progress = event.progress
            self._advance(progress.done, progress.total, f"{progress.checker_model} · {progress.set}")
        elif kind == "score":
            self._line(score_line(event.score))
        elif kind == "finished":
            self._advance(event.finished.done, event.finished.total, "")
            self._line(finished_line(event.finished))

    def _advance(self, done: int, total: int, where: str) -> None:
        if self._bar is not None and self._task is not None:
            description = f"Evaluating {plain(where).plain}" if where else "Evaluating"
            self._bar.update(self._task, completed=done, total=total or None, description=description)
            return
        if total <= 0:
            return
        # A line each time another tenth is done (the last one included), none for the ones in between.
        step = done * PLAIN_STEPS // total
        if step >= self._next_step:
            self._next_step = step + 1
            line = f"{done}/{counted(total, 'answer')} ({100 * done // total}%)"
            print(stage_line("progress", line).plain, file=sys.stderr)


# --- the evaluation -----------------------------------------------------------------------


def render_evaluation(console: Console, evaluation: evaluation_pb2.Evaluation, *, wide: bool = False) -> None:
    """The evaluation's header, its score table per set, cost and latency, and the confusion matrices;
    every table a line per row, cut to fit (`wide`: every value whole)."""
    console.print(header(evaluation))
    note = eval_view.stop_note(evaluation)
    if note:
        console.print(plain(note, "bold yellow"))
    if not evaluation.scores:
        console.print(Text("No scores yet: no checker has answered.", style="dim"))
        return
    drawn = {summary.name: summary for summary in evaluation.sets}
    for name, scores in scores_by_set(evaluation.scores).items():
        summary = drawn.get(name)
        section(console, f"Scores on {clean(name)}{drawn_text(summary)}")
        print_table(console, SCORE_COLUMNS, scores, wide=wide)
    console.print(Text(LEGEND, style="dim"))
    if any(eval_view.score_row(score).partial for score in evaluation.scores):
        console.print(Text(eval_view.PARTIAL_NOTE, style="yellow"))
    section(console, "Cost and latency")
    print_table(console, COST_COLUMNS, evaluation.scores, wide=wide)
    section(console, "Confusion matrices (rows: label, columns: verdict)")
    print_table(console, CONFUSION_COLUMNS, confusion_rows(evaluation.scores), wide=wide)
    if evaluation.fitted_thresholds:
        section(console, "Fitted thresholds (balanced accuracy of VERIFIED against not)")
        print_table(console, THRESHOLD_COLUMNS, evaluation.fitted_thresholds, wide=wide)
        console.print(Text(THRESHOLDS_LEGEND.format(id=evaluation.evaluation_id), style="dim"))
    elif evaluation.fit_thresholds and evaluation.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE:
        console.print(Text("No thresholds were fitted.", style="yellow"))


THRESHOLDS_LEGEND = (
    "THRESHOLD: a claim is VERIFIED from this P(supported); EVALUATED: the threshold the answers were read "
    "against → its balanced accuracy; fixed: answers no threshold makes VERIFIED (DISPUTED, not checked, "
    "unreadable). Use them with `factcheck check --thresholds-from {id}`, and measure them on other items "
    "(a shipped set's test half) with `factcheck eval --thresholds-from {id}`."
)


def _threshold(fitted: evaluation_pb2.FittedThreshold) -> Text:
    row = eval_view.threshold_row(fitted)
    return Text(row.threshold, style="bold") if not row.error else plain(row.error, "bold red")


# Per checker: the threshold fitted (or why none), its balanced accuracy, the one evaluated and its, what it
# rests on.
THRESHOLD_COLUMNS = [
    Column("checker", lambda f: f.checker_model, flexible=True),
    Column("set", lambda f: f.set, flexible=True),
    Column("threshold", _threshold, flexible=True, justify="right"),
    Column("bal. acc", lambda f: eval_view.threshold_row(f).balanced_accuracy, justify="right"),
    Column("evaluated", lambda f: eval_view.threshold_row(f).evaluated, justify="right"),
    Column("items", lambda f: eval_view.threshold_row(f).items, flexible=True),
]


LEGEND = (
    "BAL. ACC: mean recall over the verdicts the labels hold; P/R: precision/recall per verdict (— never given or "
    "never labelled); ECE: expected calibration error; DIS|SUP: items labelled VERIFIED called DISPUTED; "
    "UNREAD.: answers that could not be read (counted as wrong)"
)


def drawn_text(summary: evaluation_pb2.EvaluationSetSummary | None) -> str:
    """ " (10 of 985 items)", " (custom, 12 items)"."""
    if summary is None:
        return ""
    custom = "custom, " if summary.custom else ""
    if summary.available and summary.available != summary.items:
        return f" ({custom}{summary.items} of {counted(summary.available, 'item')})"
    return f" ({custom}{counted(summary.items, 'item')})"


def header(evaluation: evaluation_pb2.Evaluation) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold", no_wrap=True)
    grid.add_column()
    status = evaluation.status
    grid.add_row("Evaluation", plain(evaluation.evaluation_id))
    grid.add_row("Status", Text(eval_view.status_name(status), STATUS_STYLES.get(status, "")))
    grid.add_row("Checkers", plain(", ".join(evaluation.checker_models) or NONE))
    grid.add_row("Sets", plain(eval_view.sets_text(evaluation)))
    grid.add_row("Draw", eval_view.draw_text(evaluation))
    grid.add_row("Answers", f"{evaluation.done}/{evaluation.total} stored")
    if evaluation.checker_thresholds:
        used = "; ".join(
            f"{threshold.checker_model} {view.checker_threshold_text(threshold)}"
            for threshold in evaluation.checker_thresholds
        )
        grid.add_row("Thresholds", plain(used))
    grid.add_row("Usage", eval_view.usage_text(evaluation.usage))
    grid.add_row("Created", view.local_time(evaluation.created_at))
    return grid


def _headline(score: evaluation_pb2.CheckerScore) -> Text:
    row = eval_view.score_row(score)
    return Text(row.headline, style="bold yellow" if row.partial else "bold")


def _precision_recall(verdict: str) -> Column:
    def cell(score: evaluation_pb2.CheckerScore) -> str:
        row = eval_view.score_row(score)
        return f"{row.precision[verdict]}/{row.recall[verdict]}"

    return Column(f"{SHORT[verdict]} P/R", cell, justify="right")


# Per checker on one set (`Scores on SET`): items, balanced accuracy, per-verdict precision/recall,
# calibration, DISPUTED on supported claims and unreadable answers.
SCORE_COLUMNS = [
    Column("checker", lambda s: s.checker_model, flexible=True),
    Column("items", lambda s: eval_view.score_row(s).items, justify="right"),
    Column("bal. acc", _headline, justify="right"),
    *(_precision_recall(verdict) for verdict in VERDICTS),
    Column("ECE", lambda s: eval_view.score_row(s).ece, justify="right"),
    Column("DIS|sup", lambda s: eval_view.score_row(s).disputed_on_supported, justify="right"),
    Column("unread.", lambda s: eval_view.score_row(s).unreadable, justify="right"),
]


def scores_by_set(scores) -> dict[str, list[evaluation_pb2.CheckerScore]]:
    """The scores grouped by set, sets in the order they first appear."""
    by_set: dict[str, list[evaluation_pb2.CheckerScore]] = {}
    for score in scores:
        by_set.setdefault(score.set, []).append(score)
    return by_set


def _failed(score: evaluation_pb2.CheckerScore) -> Text:
    return Text(str(score.failed), style="red" if score.failed else "")


# Per checker and set: latency percentiles, tokens, cost, cache hits and failed calls.
COST_COLUMNS = [
    Column("checker", lambda s: s.checker_model, flexible=True),
    Column("set", lambda s: s.set, flexible=True),
    Column("p50", lambda s: eval_view.score_row(s).p50, justify="right"),
    Column("p95", lambda s: eval_view.score_row(s).p95, justify="right"),
    Column("tokens", lambda s: eval_view.score_row(s).tokens, justify="right"),
    Column("cost", lambda s: eval_view.score_row(s).cost, justify="right"),
    Column("cached", lambda s: eval_view.score_row(s).cached, justify="right"),
    Column("failed", _failed, justify="right"),
]


@dataclass(frozen=True)
class ConfusionRow:
    """One row of a checker's confusion matrix on a set: the items labelled `label`, by the verdict given."""

    score: evaluation_pb2.CheckerScore
    label: int  # the index of the label in VERDICTS
    counts: list[int]

    @property
    def first(self) -> bool:
        return self.label == 0


def confusion_rows(scores) -> list[ConfusionRow]:
    """Three rows per checker and set (the labels), in the scores' order."""
    return [
        ConfusionRow(score, index, counts)
        for score in scores
        for index, counts in enumerate(eval_view.confusion(score))
    ]


def _count(column: int) -> Column:
    def cell(row: ConfusionRow) -> Text:
        return Text(str(row.counts[column]), style="bold green" if column == row.label else "")

    return Column(SHORT[VERDICTS[column]], cell, justify="right")


# The confusion matrices as one table: three rows (the labels) per checker and set, named on the first,
# a column per verdict given; the diagonal (right answers) in bold green.
CONFUSION_COLUMNS = [
    Column("checker", lambda r: r.score.checker_model if r.first else "", flexible=True),
    Column("set", lambda r: r.score.set if r.first else "", flexible=True),
    Column("label \\ verdict", lambda r: VERDICTS[r.label]),
    *(_count(column) for column in range(len(VERDICTS))),
]


# --- answers and comparisons --------------------------------------------------------------

OUTCOME_STYLES = {"right": "green", "wrong": "bold red", "unreadable": "bold yellow", "failed": "magenta"}


def _verdict(item: evaluation_pb2.EvaluationItem) -> Text:
    row = eval_view.item_row(item)
    return Text(row.verdict, OUTCOME_STYLES.get(row.outcome, ""))


def _answer(item: evaluation_pb2.EvaluationItem) -> Text:
    """What the checker said: its evidence, what it answered when unreadable, or why its call failed; and
    its correction."""
    row = eval_view.item_row(item)
    said = f"{row.answer} · correction: {row.correction}" if row.correction else row.answer
    return plain(said, "dim")


# One row per answer (`eval show ID --items`): where, the label, the verdict (red when wrong), the
# confidence and latency, the claim and what the checker said.
ITEM_COLUMNS = [
    Column("checker", lambda i: i.checker_model, flexible=True),
    Column("set", lambda i: i.set, flexible=True),
    Column("item", lambda i: i.item_id, id=True),
    Column("label", lambda i: eval_view.item_row(i).label),
    Column("verdict", _verdict),
    Column("conf.", lambda i: eval_view.item_row(i).confidence),
    Column("latency", lambda i: eval_view.item_row(i).latency, justify="right"),
    Column("claim", lambda i: eval_view.item_row(i).claim, flexible=True),
    Column("answer", _answer, flexible=True),
]


def difference_text(value: float) -> str:
    return f"{value:+.3f}"


def _shared(item: evaluation_pb2.ScoreComparison) -> bool:
    return item.shared_items > 0


def _difference(item: evaluation_pb2.ScoreComparison) -> str | Text:
    if not _shared(item):
        return NONE
    clear = item.difference_low > 0 or item.difference_high < 0
    style = ("green" if item.difference > 0 else "red") if clear else ""
    return Text(difference_text(item.difference), style=style)


# Per checker and set: the balanced accuracy of A and B on the shared items, B − A with its interval.
COMPARISON_COLUMNS = [
    Column("checker", lambda c: c.checker_model, flexible=True),
    Column("set", lambda c: c.set, flexible=True),
    Column("shared", lambda c: f"{c.shared_items:,}", justify="right"),
    Column("A bal. acc", lambda c: eval_view.fraction(c.balanced_accuracy) if _shared(c) else NONE, justify="right"),
    Column(
        "B bal. acc", lambda c: eval_view.fraction(c.other_balanced_accuracy) if _shared(c) else NONE, justify="right"
    ),
    Column("B − A", _difference, justify="right"),
    Column(
        "95% interval",
        lambda c: f"{difference_text(c.difference_low)} … {difference_text(c.difference_high)}" if _shared(c) else NONE,
        justify="right",
    ),
    Column("differ", lambda c: f"{c.disagreements:,}", justify="right"),
]


def _verdicts(item: evaluation_pb2.ItemDisagreement, other: bool) -> Text:
    label = view.verdict_name(item.label)
    verdict = item.other_verdict if other else item.verdict
    name = view.verdict_name(verdict) if verdict else "unreadable"
    return Text(name, "green" if name == label else "red")


# The items where A and B answered differently: the label and both verdicts (green when right).
DISAGREEMENT_COLUMNS = [
    Column("checker", lambda d: d.checker_model, flexible=True),
    Column("set", lambda d: d.set, flexible=True),
    Column("item", lambda d: d.item_id, id=True),
    Column("label", lambda d: view.verdict_name(d.label)),
    Column("A", lambda d: _verdicts(d, other=False)),
    Column("B", lambda d: _verdicts(d, other=True)),
    Column("claim", lambda d: d.claim or NONE, flexible=True),
]


def render_comparison(
    console: Console, response: evaluation_pb2.CompareEvaluationsResponse, *, wide: bool = False
) -> None:
    """The comparison table, how to read its interval, and the items where the two disagree."""
    console.print(plain(f"A  {response.evaluation_id}\nB  {response.other_evaluation_id}"))
    section(console, "Balanced accuracy on the items both judged")
    print_table(console, COMPARISON_COLUMNS, response.comparisons, wide=wide)
    console.print(
        Text(
            f"B − A with a paired bootstrap 95% interval ({counted(response.resamples, 'resample')} within each "
            "label): an interval that holds 0 is no difference these items can show; DIFFER: items whose answers "
            "differ.",
            style="dim",
        )
    )
    counted_all = sum(item.disagreements for item in response.comparisons)
    if response.disagreements:
        shown = len(response.disagreements)
        more = f" (the first {shown:,} of {counted_all:,}: --max-disagreements N)" if shown < counted_all else ""
        section(console, f"Where they disagree{more}")
        print_table(console, DISAGREEMENT_COLUMNS, response.disagreements, wide=wide)


def _status(evaluation: evaluation_pb2.Evaluation) -> Text:
    return Text(eval_view.status_name(evaluation.status), STATUS_STYLES.get(evaluation.status, ""))


# One row per stored evaluation (`factcheck eval list`): enough to pick the id to `show`, `compare` or
# `resume`, with each checker's balanced accuracy on each set (* on part of the set).
# Columns are added here (e.g. scores); `tables.print_table` fits them to the terminal.
EVALUATION_COLUMNS = [
    Column("id", lambda e: e.evaluation_id, id=True),
    Column("status", _status),
    Column("checkers", lambda e: ", ".join(e.checker_models), flexible=True),
    Column("sets", lambda e: ", ".join(summary.name for summary in e.sets), flexible=True),
    Column("bal. acc per set", lambda e: "; ".join(eval_view.headline_lines(e)) or "—", flexible=True),
    Column("done", lambda e: f"{e.done:,}/{e.total:,}", justify="right"),
    Column("created", lambda e: view.local_time(e.created_at)),
    Column("draw", eval_view.draw_text, wide_only=True),
    Column("usage", lambda e: eval_view.usage_text(e.usage), wide_only=True),
]

# The shipped sets (`factcheck eval sets`): name, items, licence, and what they are.
SET_COLUMNS = [
    Column("name", lambda s: s.name),
    Column(
        "items",
        lambda s: (
            f"{s.items:,}" + (f" (:dev {s.dev_items:,}, :test {s.test_items:,})" if s.dev_items or s.test_items else "")
        ),
        justify="right",
    ),
    Column("licence", lambda s: s.licence, flexible=True),
    Column("description", lambda s: ": ".join(part for part in (s.title, s.description) if part), flexible=True),
]
