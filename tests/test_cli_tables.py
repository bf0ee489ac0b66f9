"""The listings' one table (cli/factcheck_cli/tables.py) and short ids (cli/factcheck_cli/ids.py): a line per row
cut with "…" to fit, ids shortened as gh shows commit hashes and taken back by any unambiguous start,
`--wide` whole; the tables of `eval show` (scores, cost, confusion, thresholds), `eval show --items` and
`eval compare` by the same rule, a name cut and never folded; then every listing command against the
running suite, and `list --status/--mode`.
"""

from __future__ import annotations

import io
import json
import subprocess

import pytest
from rich.console import Console

from factcheck.v1 import common_pb2, evaluation_pb2, factcheck_pb2
from factcheck_cli import eval_render, ids
from factcheck_cli.results import RESULT_COLUMNS
from factcheck_cli.tables import Column, fit, print_table
from tests import test_cli
from tests.test_cli import FACTCHECK, cli_environment, run_id
from tests.test_eval_html import make_evaluation

RUN = "2887f1ba-5c3d-4e6f-8a9b-0c1d2e3f4a5b"
LONG_TITLE = "Fact-check: " + "the Eiffel Tower, its height, its paint and the year it was completed " * 3
QUESTION = "Fact-check this content"

# test_cli's fixtures: the shared suite on SQLite, its fake model server, and the command.
suite, factcheck, fake_models = test_cli.suite, test_cli.factcheck, test_cli.fake_models


def printed(rows, width: int, *, wide: bool = False, columns=RESULT_COLUMNS) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    print_table(console, columns, rows, wide=wide)
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


def summary(**values) -> factcheck_pb2.ResultSummary:
    defaults = dict(message_id=RUN, question=QUESTION, title=LONG_TITLE, status=factcheck_pb2.MESSAGE_STATUS_COMPLETE)
    return factcheck_pb2.ResultSummary(**{**defaults, **values})


# --- the table ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [60, 80, 120, 200])
def test_a_row_is_one_line_cut_to_fit(width):
    lines = printed([summary(), summary(message_id="9" * 8 + RUN[8:], mode=factcheck_pb2.MODE_COUNCIL)], width)
    assert len(lines) == 3 and all(len(line) <= width for line in lines)
    assert lines[0].split() == ["ID", "CREATED", "MODE", "STATUS", "TITLE"]  # the question only with --wide
    assert lines[1].startswith("2887f1ba  ") and RUN not in lines[1]  # a UUID by its first 8 characters
    assert lines[1].endswith("…") and "Fact-check:" not in lines[1]  # the title cut; the mode says fact-check
    assert "council" in lines[2]


def test_wide_shows_every_value_whole_and_the_wide_columns():
    [header, row] = printed([summary()], 80, wide=True)
    assert header.split()[:6] == ["ID", "CREATED", "MODE", "STATUS", "TITLE", "QUESTION"]
    assert row.startswith(RUN) and LONG_TITLE.removeprefix("Fact-check: ").strip() in row and QUESTION in row
    assert "…" not in row and len(row) > 80


def test_untrusted_cells_cannot_drive_the_terminal():
    [_, row] = printed([summary(title="Fact-check: \x1b[31mred\x1b]0;title\x07")], 200)
    assert "\x1b" not in row and "\x07" not in row


def test_fit_cuts_the_flexible_columns_first_then_the_widest_others():
    assert fit([10, 20, 30], [False, True, True], 100) == [10, 20, 30]  # it fits
    assert fit([10, 20, 30], [False, True, True], 50) == [10, 18, 18]  # 46 for the three, shared
    assert fit([10, 20, 30], [False, True, True], 55) == [10, 20, 21]  # the narrow one whole, the rest to the other
    assert fit([10, 20, 30], [False, False, True], 34) == [10, 12, 8]  # the flexible down to 8, then the widest
    assert fit([10, 5], [False, False], 9) == [4, 4]  # none below 4: the line runs 1 over


def test_numbers_are_right_aligned():
    columns = [Column("name", lambda r: r[0]), Column("count", lambda r: r[1], justify="right")]
    assert printed([("a", "1"), ("b", "1,234")], 40, columns=columns) == ["NAME  COUNT", "a         1", "b     1,234"]


# --- short ids ---------------------------------------------------------------------------------------------


def pages(*pages: list[str]):
    """A listing of ids in pages (tokens "1", "2", ...)."""

    def page(token: str) -> tuple[list[str], str]:
        index = int(token or 0)
        return pages[index], str(index + 1) if index + 1 < len(pages) else ""

    return page


def test_a_prefix_stands_for_the_one_id_that_starts_with_it():
    other = "2887f1bb-0000-4000-8000-000000000000"
    listing = pages([other, "a" * 8 + RUN[8:]], [RUN])
    assert ids.short_id(RUN) == "2887f1ba" and ids.short_id("knowledge/a.md") == "knowledge/a.md"
    assert ids.expand("2887f1ba", listing, "run") == RUN  # found on the second page
    assert ids.expand(RUN, listing, "run") == RUN  # a whole id is never looked up
    assert ids.expand("not-hex-at-all", listing, "run") == "not-hex-at-all"  # nor what cannot be a prefix
    with pytest.raises(ids.AmbiguousId, match=r"'2887f1b' is the start of more than one run id \(2887f1bb, 2887f1ba\)"):
        ids.expand("2887f1b", listing, "run")
    with pytest.raises(ids.UnknownId, match="no run id starts with 'ffff'"):
        ids.expand("ffff", listing, "run")


# --- the commands ------------------------------------------------------------------------------------------


def narrow(suite, *args: str, columns: int = 70) -> subprocess.CompletedProcess:
    env = {**cli_environment(suite.gateway_target), "COLUMNS": str(columns)}
    return subprocess.run([str(FACTCHECK), *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.e2e
def test_every_listing_prints_one_line_per_row_and_takes_wide(suite, factcheck, tmp_path):
    run_id(factcheck)
    note = tmp_path / "a-note-with-a-rather-long-file-name-about-the-tides-of-the-bay-of-fundy.md"
    note.write_text("# The tides of the Bay of Fundy, the highest in the world\n\nThey reach 16 metres.\n")
    assert factcheck("kb", "add", str(note)).returncode == 0
    try:
        for command in (
            ["list"],
            ["kb", "list"],
            ["claims"],
            ["reviews", "list", "--all"],
            ["eval", "list"],
            ["usage"],
        ):
            done = narrow(suite, *command)
            assert done.returncode == 0, (command, done.stderr)
            lines = [line for line in done.stdout.splitlines() if line and not line.lower().startswith("next page")]
            assert all(len(line) <= 70 for line in lines), (command, lines)
            if len(lines) > 1 or lines[0].isupper():  # a table (an empty listing says so instead)
                assert lines[0] == lines[0].upper(), (command, lines[0])  # gh's header
            wide = narrow(suite, *command, "--wide")
            assert wide.returncode == 0, (command, wide.stderr)
        [row] = [line for line in narrow(suite, "kb", "list").stdout.splitlines() if line.startswith("a-note")]
        assert "…" in row  # the id cut to fit; --wide shows it whole
        assert note.name in narrow(suite, "kb", "list", "--wide").stdout
    finally:
        factcheck("kb", "delete", note.name)


@pytest.mark.e2e
def test_list_filters_by_status_and_mode_and_show_takes_a_short_id(factcheck):
    message_id = run_id(factcheck)
    complete = json.loads(factcheck("list", "--json", "--status", "complete", "--mode", "fact-check").stdout)
    assert message_id in [r["messageId"] for r in complete["results"]]
    assert {r["status"] for r in complete["results"]} == {"MESSAGE_STATUS_COMPLETE"}
    assert all(r.get("mode", "MODE_FACT_CHECK") == "MODE_FACT_CHECK" for r in complete["results"])
    council = json.loads(factcheck("list", "--json", "--mode", "council").stdout)
    assert message_id not in [r["messageId"] for r in council.get("results", [])]
    failed = factcheck("list", "--status", "failed", "--page-size", "1")
    assert failed.returncode == 0 and message_id[:8] not in failed.stdout

    shown = factcheck("show", message_id[:8], "--json")  # as `factcheck list` shows it
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["messageId"] == message_id
    unknown = factcheck("show", "ffffffff")
    assert unknown.returncode == 5 and unknown.stderr.startswith(
        "factcheck: not found: no run id starts with 'ffffffff'"
    )
    assert factcheck("cancel", message_id[:8]).returncode == 1  # resolved, then: already finished


@pytest.mark.e2e
def test_list_next_page_keeps_the_filters(factcheck):
    for _ in range(2):
        run_id(factcheck)
    first = factcheck("list", "--status", "complete", "--page-size", "1")
    [hint] = [line for line in first.stdout.splitlines() if line.startswith("Next page:")]
    command = hint.removeprefix("Next page: ").split()
    assert command[:6] == ["factcheck", "list", "--status", "complete", "--page-size", "1"]
    second = factcheck(*command[1:])
    assert second.returncode == 0, second.stderr
    changed = factcheck("list", "--status", "failed", "--page-token", command[-1])  # other filters
    assert changed.returncode == 2 and "page_token is not valid for this listing" in changed.stderr


# --- the tables of `eval show`, `eval show --items` and `eval compare` -------------------------------------

# A name no column of an 80-column table holds whole, and the end of it: what a table that folds the name
# puts on a line of its own ("local/checker-lexic / al").
LONG_CHECKER = "local/checker-lexical-with-a-name-longer-than-any-column-can-hold"
TAIL = "can-hold"


def rendered_lines(render, *args, width: int = 80, wide: bool = False) -> list[str]:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    render(console, *args, wide=wide)
    return console.file.getvalue().splitlines()  # type: ignore[attr-defined]


def long_named_evaluation() -> evaluation_pb2.Evaluation:
    evaluation = make_evaluation()
    for score in evaluation.scores:
        if score.checker_model == "local/checker-lexical":
            score.checker_model = LONG_CHECKER
    evaluation.fitted_thresholds.add(checker_model=LONG_CHECKER, set="wice:dev", threshold=0.42, items=40)
    return evaluation


def comparison_response(checker: str = LONG_CHECKER) -> evaluation_pb2.CompareEvaluationsResponse:
    return evaluation_pb2.CompareEvaluationsResponse(
        evaluation_id="a",
        other_evaluation_id="b",
        resamples=2000,
        comparisons=[
            evaluation_pb2.ScoreComparison(
                checker_model=checker, set="mine", shared_items=3, balanced_accuracy=0.5,
                other_balanced_accuracy=0.6, difference=0.1, difference_low=-0.1, difference_high=0.3, disagreements=1,
            )
        ],
        disagreements=[
            evaluation_pb2.ItemDisagreement(
                checker_model=checker, set="mine", item_id="moon", label=common_pb2.VERDICT_DISPUTED,
                verdict=common_pb2.VERDICT_VERIFIED, claim="The Moon is made of cheese, " + "and of green cheese " * 5,
            )
        ],
    )  # fmt: skip


def answers(*items: evaluation_pb2.EvaluationItem):
    """`eval show --items`'s table as a render function."""

    def render(console: Console, *, wide: bool) -> None:
        print_table(console, eval_render.ITEM_COLUMNS, items, wide=wide)

    return render


ANSWER = evaluation_pb2.EvaluationItem(
    checker_model=LONG_CHECKER, set="factcheck-bench", item_id="fcb-1", label=common_pb2.VERDICT_DISPUTED,
    verdict=common_pb2.VERDICT_VERIFIED, claim="The Moon is made of cheese.", answer="It says so.", correction="Rock.",
)  # fmt: skip

EVAL_TABLES = {
    "show": (eval_render.render_evaluation, long_named_evaluation(), 7),  # scores ×2, cost ×2, confusion ×2, fit
    "compare": (eval_render.render_comparison, comparison_response(), 2),  # the comparison, a disagreement
    "items": (answers(ANSWER), None, 1),
}


@pytest.mark.parametrize("command", list(EVAL_TABLES))
def test_eval_tables_are_a_line_per_row_names_cut_never_folded(command):
    render, value, rows = EVAL_TABLES[command]
    args = () if value is None else (value,)
    lines = rendered_lines(render, *args)
    assert all(len(line) <= 80 for line in lines), lines
    named = [line for line in lines if line.startswith("local/")]
    assert len(named) == rows, lines  # one line per row
    for line in named:
        cell = line.split()[0]
        assert cell.endswith("…") and LONG_CHECKER.startswith(cell.removesuffix("…")), line
    assert not any(TAIL in line for line in lines), lines  # no line holds the rest of a folded name
    # The listings' table: upper-case headers, no box (no rule under the header, no column lines).
    assert any(line.startswith("CHECKER  ") for line in lines)
    assert not any(line.strip() and set(line.strip()) <= {"─", " "} for line in lines), lines
    assert not any(char in line for line in lines for char in "│┃┏┗"), lines


@pytest.mark.parametrize("command", list(EVAL_TABLES))
def test_eval_tables_wide_show_every_name_whole_on_its_line(command):
    render, value, rows = EVAL_TABLES[command]
    args = () if value is None else (value,)
    lines = rendered_lines(render, *args, wide=True)
    named = [line for line in lines if line.startswith("local/")]
    assert len(named) == rows and all(line.startswith(LONG_CHECKER + " ") for line in named), lines
    assert not any(TAIL in line for line in lines if line not in named)
    if command == "items":  # the claim, and what the checker said, whole
        assert "The Moon is made of cheese." in named[0] and "It says so. · correction: Rock." in named[0]
