"""Terminal output of `factcheck eval`: the progress of a running evaluation (a bar on a terminal,
plain lines otherwise, on stderr either way), the score tables and confusion matrices of an
evaluation, and the listings of evaluations and shipped sets.

Model and set names come from the caller or the gateway: they are shown only through
`terminal.plain`, so they can neither restyle nor drive the terminal.
"""

from __future__ import annotations

import sys

from rich import box
from rich.columns import Columns
from rich.console import Console, Group
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as Bar
from rich.table import Table
from rich.text import Text

import factcheck.cli.eval_view as eval_view
import factcheck.cli.view as view
from factcheck.cli.eval_view import NONE, SHORT, VERDICTS
from factcheck.cli.tables import Column
from factcheck.cli.terminal import clean, counted, plain, section, stage_line
from factcheck.v1 import evaluation_pb2

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
    on = f"on {score.items} of {score.total} items only (partial)" if row.partial else f"{row.items} items"
    return stage_line(
        "score",
        f"{row.checker} on {row.set}: balanced accuracy {row.balanced_accuracy}, ECE {row.ece}, {on}, "
        f"{row.failed} failed",
    )


def finished_line(evaluation: evaluation_pb2.Evaluation) -> Text:
    return stage_line(
        "finished",
        Text(eval_view.status_name(evaluation.status), STATUS_STYLES.get(evaluation.status, "")),
        f" ({evaluation.done}/{evaluation.total} answers stored)",
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
            print(stage_line("progress", f"{done}/{total} answers ({100 * done // total}%)").plain, file=sys.stderr)


# --- the evaluation -----------------------------------------------------------------------


def render_evaluation(console: Console, evaluation: evaluation_pb2.Evaluation) -> None:
    """The evaluation's header, its score table per set, cost and latency, and a confusion matrix per
    checker and set."""
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
        section(console, f"Scores on {clean(name)}{drawn_text(summary)}", scores_table(scores))
    console.print(Text(LEGEND, style="dim"))
    if any(eval_view.score_row(score).partial for score in evaluation.scores):
        console.print(Text(eval_view.PARTIAL_NOTE, style="yellow"))
    section(console, "Cost and latency", cost_table(evaluation.scores))
    section(console, "Confusion matrices (rows: label, columns: verdict)", confusion_matrices(evaluation.scores))
    if evaluation.fitted_thresholds:
        section(console, "Fitted thresholds (balanced accuracy of VERIFIED against not)", thresholds_table(evaluation))
        console.print(Text(THRESHOLDS_LEGEND.format(id=evaluation.evaluation_id), style="dim"))
    elif evaluation.fit_thresholds and evaluation.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE:
        console.print(Text("No thresholds were fitted.", style="yellow"))


THRESHOLDS_LEGEND = (
    "threshold: a claim is VERIFIED from this P(supported); evaluated: the threshold the answers were read "
    "against → its balanced accuracy; fixed: answers no threshold makes VERIFIED (DISPUTED, not checked, "
    "unreadable). Use them with `factcheck check --thresholds-from {id}`, and measure them on other items "
    "(a shipped set's test half) with `factcheck eval --thresholds-from {id}`."
)


def thresholds_table(evaluation: evaluation_pb2.Evaluation) -> Table:
    """Per checker: the threshold fitted, its balanced accuracy, the one evaluated and its, what it rests on."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("checker", overflow="fold")
    table.add_column("set", overflow="fold")
    table.add_column("threshold", justify="right", no_wrap=True)
    table.add_column("bal. acc", justify="right", no_wrap=True)
    table.add_column("evaluated", justify="right", no_wrap=True)
    table.add_column("items", overflow="fold")
    for fitted in evaluation.fitted_thresholds:
        row = eval_view.threshold_row(fitted)
        threshold = Text(row.threshold, style="bold") if not row.error else Text(row.error, style="bold red")
        table.add_row(plain(row.checker), plain(row.set), threshold, row.balanced_accuracy, row.evaluated, row.items)
    return table


LEGEND = (
    "bal. acc: mean recall over the verdicts the labels hold; P/R: precision/recall per verdict (— never given or "
    "never labelled); ECE: expected calibration error; DIS|sup: items labelled VERIFIED called DISPUTED; "
    "unread.: answers that could not be read (counted as wrong)"
)


def drawn_text(summary: evaluation_pb2.EvaluationSetSummary | None) -> str:
    """ " (10 of 985 items)", " (custom, 12 items)"."""
    if summary is None:
        return ""
    custom = "custom, " if summary.custom else ""
    if summary.available and summary.available != summary.items:
        return f" ({custom}{summary.items} of {summary.available} items)"
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


def scores_table(scores) -> Table:
    """Per checker on one set: items, balanced accuracy, per-verdict precision/recall, calibration,
    DISPUTED on supported claims and unreadable answers."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1))
    add_name_columns(table, scores, with_set=False)
    table.add_column("items", justify="right", no_wrap=True)
    table.add_column("bal. acc", justify="right", no_wrap=True)
    for verdict in VERDICTS:
        table.add_column(f"{SHORT[verdict]} P/R", justify="right", no_wrap=True)
    table.add_column("ECE", justify="right", no_wrap=True)
    table.add_column("DIS|sup", justify="right", no_wrap=True)
    table.add_column("unread.", justify="right", no_wrap=True)
    for score in scores:
        row = eval_view.score_row(score)
        table.add_row(
            plain(row.checker),
            row.items,
            Text(row.headline, style="bold yellow" if row.partial else "bold"),
            *(f"{row.precision[verdict]}/{row.recall[verdict]}" for verdict in VERDICTS),
            row.ece,
            row.disputed_on_supported,
            row.unreadable,
        )
    return table


def scores_by_set(scores) -> dict[str, list[evaluation_pb2.CheckerScore]]:
    """The scores grouped by set, sets in the order they first appear."""
    by_set: dict[str, list[evaluation_pb2.CheckerScore]] = {}
    for score in scores:
        by_set.setdefault(score.set, []).append(score)
    return by_set


# The checker and set columns keep up to this many characters on a line before they wrap.
NAME_WIDTH = 32


def add_name_columns(table: Table, scores, *, with_set: bool = True) -> None:
    """The checker (and set) columns, as wide as their longest name (up to NAME_WIDTH), folded beyond."""
    columns = [("checker", [score.checker_model for score in scores])]
    if with_set:
        columns.append(("set", [score.set for score in scores]))
    for header, names in columns:
        width = min(max([len(header), *(len(name) for name in names)]), NAME_WIDTH)
        table.add_column(header, min_width=width, overflow="fold")


def cost_table(scores) -> Table:
    """Per checker and set: latency percentiles, tokens, cost, cache hits and failed calls."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1))
    add_name_columns(table, scores)
    for name in ("p50", "p95", "tokens", "cost", "cached", "failed"):
        table.add_column(name, justify="right", no_wrap=True)
    for score in scores:
        row = eval_view.score_row(score)
        failed = Text(row.failed, style="red" if score.failed else "")
        table.add_row(plain(row.checker), plain(row.set), row.p50, row.p95, row.tokens, row.cost, row.cached, failed)
    return table


def confusion_table(score: evaluation_pb2.CheckerScore) -> Group:
    """One compact 3×3 matrix under its checker and set; the diagonal (right answers) in bold green."""
    table = Table(box=box.SIMPLE, pad_edge=False)
    table.add_column("label \\ verdict", no_wrap=True)
    for verdict in VERDICTS:
        table.add_column(SHORT[verdict], justify="right", no_wrap=True)
    for index, (verdict, counts) in enumerate(zip(VERDICTS, eval_view.confusion(score))):
        cells = [Text(str(count), style="bold green" if column == index else "") for column, count in enumerate(counts)]
        table.add_row(verdict, *cells)
    return Group(plain(f"{score.checker_model} · {score.set}", "bold"), table)


def confusion_matrices(scores) -> Columns:
    return Columns([confusion_table(score) for score in scores], padding=(0, 4))


# --- listings -----------------------------------------------------------------------------


# --- answers and comparisons --------------------------------------------------------------

OUTCOME_STYLES = {"right": "green", "wrong": "bold red", "unreadable": "bold yellow", "failed": "magenta"}


def items_table(items) -> Table:
    """One row per answer: where, the label, the verdict (red when wrong), and the claim with what the
    checker said (its evidence, what it answered when unreadable, why its call failed)."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), show_lines=False)
    table.add_column("checker · set", overflow="fold", max_width=28)
    table.add_column("item", overflow="fold", max_width=18)
    table.add_column("label", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    table.add_column("conf.", no_wrap=True)
    table.add_column("latency", justify="right", no_wrap=True)
    table.add_column("claim / answer", ratio=1, overflow="fold")
    for item in items:
        row = eval_view.item_row(item)
        said = Text.assemble(plain(row.claim), "\n", plain(row.answer, "dim"))
        if row.correction:
            said.append(plain(f"\ncorrection: {row.correction}", "dim"))
        table.add_row(
            plain(f"{row.checker} · {row.set}"),
            plain(row.item_id),
            row.label,
            Text(row.verdict, OUTCOME_STYLES.get(row.outcome, "")),
            row.confidence,
            row.latency,
            said,
        )
    return table


def difference_text(value: float) -> str:
    return f"{value:+.3f}"


def comparison_table(response: evaluation_pb2.CompareEvaluationsResponse) -> Table:
    """Per checker and set: the balanced accuracy of A and B on the shared items, B − A with its interval."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("checker", overflow="fold", max_width=NAME_WIDTH)
    table.add_column("set", overflow="fold", max_width=NAME_WIDTH)
    for name in ("shared", "A bal. acc", "B bal. acc", "B − A", "95% interval", "differ"):
        table.add_column(name, justify="right", no_wrap=True)
    for item in response.comparisons:
        shared = item.shared_items > 0
        clear = shared and (item.difference_low > 0 or item.difference_high < 0)
        style = ("green" if item.difference > 0 else "red") if clear else ""
        table.add_row(
            plain(item.checker_model),
            plain(item.set),
            f"{item.shared_items:,}",
            eval_view.fraction(item.balanced_accuracy) if shared else NONE,
            eval_view.fraction(item.other_balanced_accuracy) if shared else NONE,
            Text(difference_text(item.difference), style=style) if shared else NONE,
            f"{difference_text(item.difference_low)} … {difference_text(item.difference_high)}" if shared else NONE,
            f"{item.disagreements:,}",
        )
    return table


def disagreements_table(response: evaluation_pb2.CompareEvaluationsResponse) -> Table:
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1))
    table.add_column("checker · set", overflow="fold", max_width=28)
    table.add_column("item", overflow="fold", max_width=18)
    table.add_column("label", no_wrap=True)
    table.add_column("A", no_wrap=True)
    table.add_column("B", no_wrap=True)
    table.add_column("claim", ratio=1, overflow="fold")
    for item in response.disagreements:
        label = view.verdict_name(item.label)
        cells = []
        for verdict in (item.verdict, item.other_verdict):
            name = view.verdict_name(verdict) if verdict else "unreadable"
            cells.append(Text(name, "green" if name == label else "red"))
        table.add_row(
            plain(f"{item.checker_model} · {item.set}"), plain(item.item_id), label, *cells, plain(item.claim or NONE)
        )
    return table


def render_comparison(console: Console, response: evaluation_pb2.CompareEvaluationsResponse) -> None:
    """The comparison table, how to read its interval, and the items where the two disagree."""
    console.print(plain(f"A  {response.evaluation_id}\nB  {response.other_evaluation_id}"))
    section(console, "Balanced accuracy on the items both judged", comparison_table(response))
    console.print(
        Text(
            f"B − A with a paired bootstrap 95% interval ({response.resamples:,} resamples within each label): an "
            "interval that holds 0 is no difference these items can show; differ: items whose answers differ.",
            style="dim",
        )
    )
    counted_all = sum(item.disagreements for item in response.comparisons)
    if response.disagreements:
        shown = len(response.disagreements)
        more = f" (the first {shown:,} of {counted_all:,}: --max-disagreements N)" if shown < counted_all else ""
        section(console, f"Where they disagree{more}", disagreements_table(response))


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
