"""`factcheck eval` and its subcommands (list, show, resume, cancel, sets).

The first half needs no gateway: the request the options build (shipped sets by name, JSONL files
as custom sets), every bad input as the command reports it (exit code and one line), the tables,
--json and the progress lines from constructed Evaluation protos. The second half runs the command
as a real process against the suite the command-line modules share (test_cli.py's fixtures).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import pty
import signal
import subprocess
import sys
import threading
import time
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from rich.console import Console

from factcheck.v1 import common_pb2, evaluation_pb2, evaluation_pb2_grpc
from factcheck_cli import eval_render, eval_view, evaluate
from factcheck_cli.app import build_parser
from factcheck_cli.tables import print_table
from tests import test_cli
from tests.test_cli import FACTCHECK, cli_environment
from tests.test_cli_durable import _WITH_CTRL_C as WITH_CTRL_C
from tests.test_cli_edges import dead_target
from tests.test_cli_tables import LONG_CHECKER, comparison_response
from tests.test_eval_html import CHECKERS, EVIL_MODEL, make_evaluation, make_score
from tests.test_html_report import Page

# test_cli's fixtures: the shared suite on SQLite, its fake model server, and the command.
suite, factcheck, fake_models = test_cli.suite, test_cli.factcheck, test_cli.fake_models

LEXICAL = "local/checker-lexical"
ITEMS: list[dict] = [
    {
        "id": "tower",
        "claim": "The Eiffel Tower is 330 metres tall.",
        "evidence": [{"title": "Almanac", "text": "The Eiffel Tower is 330 metres tall."}],
        "label": "VERIFIED",
    },
    {
        "id": "moon",
        "claim": "The Moon is made of cheese.",
        "evidence": ["The Moon is made of rock and dust, not cheese."],
        "label": "refuted",
    },
    {"claim": "The lost city had 40,000 inhabitants.", "label": "UNVERIFIABLE"},
]


def write_items(path: Path, items: list[dict] = ITEMS) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


def run_offline(*args: str) -> subprocess.CompletedProcess:
    """The command against a port nobody listens on: what it refuses, it refuses before any call."""
    return subprocess.run(
        [str(FACTCHECK), *args], capture_output=True, text=True, env=cli_environment(dead_target()), timeout=60
    )


# --- the request --------------------------------------------------------------------------


def test_a_set_is_a_shipped_name_or_a_jsonl_file_sent_whole(tmp_path):
    mine = write_items(tmp_path / "My Claims (v2).jsonl")
    shipped, custom = evaluate.read_sets(["factcheck-bench", str(mine), "wice"])
    assert shipped == ["factcheck-bench", "wice"]
    [own] = custom
    assert own.name == "my-claims-v2"  # the stem, as the proto's a-z0-9._- allows
    assert [item.id for item in own.items] == ["tower", "moon", "line-3"]
    assert [item.label for item in own.items] == [
        common_pb2.VERDICT_VERIFIED,
        common_pb2.VERDICT_DISPUTED,  # "refuted", as FEVER spells it
        common_pb2.VERDICT_UNVERIFIABLE,
    ]
    assert [(passage.title, passage.text) for passage in own.items[0].evidence] == [
        ("Almanac", "The Eiffel Tower is 330 metres tall.")
    ]
    assert own.items[2].evidence == []


def test_custom_set_names_are_unique_and_never_a_shipped_name(tmp_path):
    (tmp_path / "a").mkdir()
    files = [
        write_items(tmp_path / "factcheck-bench.jsonl"),
        write_items(tmp_path / "claims.jsonl"),
        write_items(tmp_path / "a" / "claims.jsonl"),
        write_items(tmp_path / "ÜBER!!.jsonl"),
    ]
    _, custom = evaluate.read_sets([str(path) for path in files])
    assert [own.name for own in custom] == ["factcheck-bench-custom", "claims", "claims-2", "ber"]
    assert all(len(own.name) <= evaluate.MAX_SET_NAME for own in custom)


def test_the_options_make_the_evaluation_config(tmp_path):
    mine = write_items(tmp_path / "mine.jsonl")
    args = build_parser().parse_args(
        ["eval", "--checker", LEXICAL, "--checker", "openai/gpt-4o", "--set", "factcheck-bench", "--set", str(mine)]
        + ["--limit", "5", "--seed", "42", "--max-cost-usd", "0.5", "--max-tokens", "10000", "--no-cache"]
        + ["--concurrency", "2"]
    )
    config = evaluate.build_config(args)
    assert list(config.checker_models) == [LEXICAL, "openai/gpt-4o"]
    assert list(config.sets) == ["factcheck-bench"] and [own.name for own in config.custom_sets] == ["mine"]
    assert (config.limit, config.seed, config.use_cache, config.concurrency) == (5, 42, False, 2)
    assert (config.budget.max_cost_usd, config.budget.max_tokens) == (0.5, 10000)


def test_options_not_given_are_left_to_the_gateway():
    config = evaluate.build_config(build_parser().parse_args(["eval", "--checker", LEXICAL, "--set", "wice"]))
    for field in ("limit", "seed", "budget", "use_cache", "concurrency"):
        assert not config.HasField(field), field
    assert evaluate.build_config(
        build_parser().parse_args(["eval", "--checker", LEXICAL, "--set", "wice", "--cache"])
    ).use_cache


# --- bad input ----------------------------------------------------------------------------


BAD_FILES = {
    "malformed.jsonl": (
        json.dumps(ITEMS[0]) + '\n\n{"claim": "x", "label": \n',
        "malformed.jsonl line 3: not valid JSON (Expecting value at column 25)",
    ),
    "empty.jsonl": ("", "empty.jsonl holds no items"),
    "label.jsonl": (
        json.dumps({"claim": "The sky is green.", "label": "FALSE"}) + "\n",
        "label.jsonl line 1: \"label\" 'FALSE' is not a known verdict; give one of VERIFIED, DISPUTED, "
        "UNVERIFIABLE, SUPPORTED, SUPPORTS, REFUTED, REFUTES, NOT_ENOUGH_INFO, NEI (any case)",
    ),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_a_file_that_cannot_be_used_is_one_line_and_exit_2(tmp_path, name):
    content, message = BAD_FILES[name]
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    done = run_offline("eval", "--checker", LEXICAL, "--set", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"factcheck eval: {tmp_path}/{message}\n"


def test_a_missing_file_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "nowhere.jsonl"
    done = run_offline("eval", "--checker", LEXICAL, "--set", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"factcheck eval: {path}: cannot be read (No such file or directory)\n"


def test_sets_too_large_for_one_request_are_one_line_and_exit_2(tmp_path):
    # 2,000 items of 20 passages of 900 characters: about 36 MiB, over the 32 MiB a message may hold.
    passage = "word " * 180
    line = json.dumps({"claim": "A claim.", "evidence": [passage] * 20, "label": "VERIFIED"})
    path = tmp_path / "huge.jsonl"
    path.write_text("\n".join(line.replace('"A claim.', f'"Claim {n}.') for n in range(2_000)), encoding="utf-8")
    done = run_offline("eval", "--checker", LEXICAL, "--set", str(path))
    assert done.returncode == 2 and done.stdout == ""
    assert "one request holds at most 31 MiB: split the file" in done.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--set", "wice"], "give at least one --checker MODEL (e.g. --checker local/checker)"),
        (
            ["--checker", LEXICAL],
            "give at least one --set NAME|FILE.jsonl (`factcheck eval sets` lists the shipped sets)",
        ),
        (["--checker", LEXICAL, "--set", "wice", "--set", "wice"], "--set wice is given twice"),
    ],
)
def test_a_missing_checker_or_set_is_one_line_and_exit_2(args, message):
    done = run_offline("eval", *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"factcheck eval: {message}\n")


@pytest.mark.parametrize(
    ("option", "value", "rule"),
    [
        ("--limit", "0", "must be between 1 and 20,000 (got 0)"),
        ("--limit", "20001", "must be between 1 and 20,000 (got 20001)"),
        ("--concurrency", "0", "must be between 1 and 16 (got 0)"),
        ("--concurrency", "17", "must be between 1 and 16 (got 17)"),
        ("--max-tokens", "0", "must be at least 1 (got 0)"),
    ],
)
def test_a_count_out_of_its_bounds_is_one_line_and_exit_2(option, value, rule):
    done = run_offline("eval", "--checker", LEXICAL, "--set", "wice", option, value)
    assert (done.returncode, done.stderr) == (2, f"factcheck eval: error: argument {option}: {rule}\n")


# --- the tables, JSON and progress --------------------------------------------------------


def rendered(evaluation: evaluation_pb2.Evaluation) -> str:
    console = Console(file=io.StringIO(), width=160, highlight=False)
    eval_render.render_evaluation(console, evaluation)
    return console.file.getvalue()  # type: ignore[attr-defined]


def lines_with(text: str, *parts: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines() if all(part in line for part in parts)]


def test_the_tables_show_every_score_per_checker_and_set():
    text = rendered(make_evaluation())
    assert "Status COMPLETE" in " ".join(text.split())
    assert "Scores on factcheck-bench (10 of 985 items)" in text
    assert "Scores on mine" in text and "(custom, 10 items)" in text
    # checker, items, balanced accuracy, P/R per verdict, ECE, DISPUTED on supported, unreadable
    assert lines_with(text, "local/checker-lexical", "0.612") == [
        "local/checker-lexical 9/10 0.612* 0.75/0.75 0.50/0.33 —/0.00 0.125 25.0% 11.1%"  # 9 of 10: partial
    ]
    # A checker that never answered: nothing to score, every call failed.
    assert lines_with(text, "0/10") == [f"{EVIL_MODEL} 0/10 — —/— —/— —/— — — —"]
    # latency, tokens, cost, cached, failed
    assert lines_with(text, "local/checker-lexical", "factcheck-bench", "ms") == [
        "local/checker-lexical factcheck-bench 120 ms 420 ms 4,321 $0.0123 1 1"
    ]
    assert "Confusion matrices (rows: label, columns: verdict)" in text
    # One table: a header, three rows (the labels) per checker and set, the names on the first.
    assert text.count("LABEL \\ VERDICT") == 1
    assert lines_with(text, "local/checker-lexical", "factcheck-bench", "VERIFIED") == [
        "local/checker-lexical factcheck-bench VERIFIED 3 1 0"
    ]
    assert lines_with(text, "DISPUTED").count("DISPUTED 1 1 1") == 3
    assert lines_with(text, "UNVERIFIABLE") == ["UNVERIFIABLE 2 0 0"] * 3 + ["UNVERIFIABLE 0 0 0"]


def test_an_unfinished_evaluation_says_why_and_how_to_continue():
    evaluation = make_evaluation(evaluation_pb2.EVALUATION_STATUS_PARTIAL)
    evaluation.error_message = "the budget of $0.01 is spent"
    text = " ".join(rendered(evaluation).split())
    assert "Stopped before every item was judged: the budget of $0.01 is spent. The scores cover only" in text
    assert f"Continue with: factcheck eval resume {evaluation.evaluation_id} (add --max-cost-usd X" in text


def test_names_cannot_drive_the_terminal():
    evaluation = make_evaluation()
    evaluation.scores[0].checker_model = "evil/\x1b[2J\x1b]0;owned\x07model"
    text = rendered(evaluation)
    assert "\x1b" not in text and "\x07" not in text and "evil/[2J]0;ownedmodel" in text


def test_json_is_the_final_evaluation_in_lower_camel_case(capsys):
    evaluation = make_evaluation()
    evaluate.present(argparse.Namespace(json=True, html=None), None, evaluation)  # type: ignore[arg-type]
    out, err = capsys.readouterr()
    [line] = out.splitlines()
    printed = json.loads(line)
    assert printed["evaluationId"] == evaluation.evaluation_id and printed["status"] == "EVALUATION_STATUS_COMPLETE"
    assert printed["scores"][0]["balancedAccuracy"] == 0.612
    assert printed["scores"][0]["disputedRateOnSupported"] == 0.25
    assert json_format.Parse(line, evaluation_pb2.Evaluation()) == evaluation
    assert err == ""


def test_precision_and_recall_are_rounded_not_cut():
    score = make_score("a/b", "s", 0.5)
    del score.verdicts[:]
    score.verdicts.add(verdict=common_pb2.VERDICT_VERIFIED, precision=2 / 3, recall=0.6666, support=3, predicted=3)
    row = eval_view.score_row(score)
    assert (row.precision["VERIFIED"], row.recall["VERIFIED"]) == ("0.67", "0.67")
    assert lines_with(rendered(evaluation_with(score)), "a/b", "9/10")[0].split()[3] == "0.67/0.67"


def evaluation_with(*scores: evaluation_pb2.CheckerScore) -> evaluation_pb2.Evaluation:
    evaluation = make_evaluation()
    del evaluation.scores[:]
    evaluation.scores.extend(scores)
    return evaluation


def test_a_score_on_part_of_the_set_is_marked_partial():
    partial = make_score("a/b", "s", 1.0)
    partial.items, partial.total = 3, 30
    whole = make_score("a/c", "s", 0.5)
    whole.items = whole.total = 10
    text = rendered(evaluation_with(partial, whole))
    assert lines_with(text, "a/b", "3/30")[0].split()[2] == "1.000*"
    assert lines_with(text, "a/c", "10/10")[0].split()[2] == "0.500"
    assert "* scored on fewer items than were drawn" in " ".join(text.split())
    line = eval_render.score_line(partial).plain
    assert "balanced accuracy 1.000" in line and "on 3 of 30 items only (partial)" in line
    assert "on fewer items" not in rendered(evaluation_with(whole))


def event(**fields) -> evaluation_pb2.EvaluationEvent:
    return evaluation_pb2.EvaluationEvent(evaluation_id="ev-1", **fields)


def events(total: int = 20) -> list[evaluation_pb2.EvaluationEvent]:
    sets = [evaluation_pb2.EvaluationSetSummary(name="factcheck-bench", items=total // 2, available=985)]
    stream = [event(started=evaluation_pb2.EvaluationStartedPayload(checker_models=CHECKERS, sets=sets, total=total))]
    for done in range(1, total + 1):
        progress = evaluation_pb2.EvaluationProgressPayload(
            done=done, total=total, checker_model=CHECKERS[done % 2], set="factcheck-bench", item_id=f"i{done}"
        )
        stream.append(event(progress=progress))
    stream.append(event(score=make_score(CHECKERS[0], "factcheck-bench", 0.612)))
    finished = make_evaluation()
    finished.done = finished.total = total
    stream.append(event(finished=finished))
    return stream


def test_without_a_terminal_progress_is_a_few_plain_lines_on_stderr(capsys):
    progress = eval_render.EvalProgress(Console(file=io.StringIO(), force_terminal=False))
    with progress:
        for item in events():
            progress.show(item)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0] == ("started   evaluation ev-1: 2 checkers × 1 set [factcheck-bench (10)], 20 answers")
    assert lines[1:11] == [f"progress  {2 * n}/20 answers ({10 * n}%)" for n in range(1, 11)]
    assert (
        lines[11]
        == "score     local/checker-lexical on factcheck-bench: balanced accuracy 0.612, ECE 0.125, on 9 of 10 "
        "items only (partial), 1 failed"
    )
    assert lines[12:] == ["finished  COMPLETE (20/20 answers stored)"]
    assert progress.evaluation_id == "ev-1"


def test_on_a_terminal_progress_is_a_bar_with_the_scores_above_it(capsys):
    screen = io.StringIO()
    progress = eval_render.EvalProgress(Console(file=screen, force_terminal=True, width=120))
    with progress:
        for item in events():
            progress.show(item)
    assert capsys.readouterr() == ("", "")  # all of it went to the console (stderr in the command)
    shown = screen.getvalue()
    assert "started" in shown and "balanced accuracy 0.612" in shown and "COMPLETE" in shown


@pytest.mark.parametrize(
    "status, code",
    [
        (evaluation_pb2.EVALUATION_STATUS_COMPLETE, 0),
        (evaluation_pb2.EVALUATION_STATUS_PARTIAL, 1),
        (evaluation_pb2.EVALUATION_STATUS_FAILED, 1),
        (evaluation_pb2.EVALUATION_STATUS_CANCELLED, 4),
    ],
)
def test_the_exit_code_follows_how_the_evaluation_ended(status: evaluation_pb2.EvaluationStatus, code):
    assert evaluate.exit_code(evaluation_pb2.Evaluation(status=status)) == code


def test_listings_show_ids_statuses_sets_and_each_checkers_balanced_accuracy():
    listed = make_evaluation()
    listed.headlines.extend(
        evaluation_pb2.ScoreHeadline(
            checker_model=score.checker_model, set=score.set, items=score.items, total=score.total,
            balanced_accuracy=score.balanced_accuracy, failed=score.failed,
        )
        for score in listed.scores
    )  # fmt: skip
    del listed.scores[:]
    for wide, shown_id in ((False, listed.evaluation_id[:8]), (True, listed.evaluation_id)):
        console = Console(file=io.StringIO(), width=400)
        print_table(console, eval_render.EVALUATION_COLUMNS, [listed], wide=wide)
        text = console.file.getvalue()  # type: ignore[attr-defined]
        row = lines_with(text, shown_id)
        assert len(row) == 1 and "COMPLETE" in row[0] and "40/40" in row[0] and "factcheck-bench" in row[0]
        assert row[0].startswith(f"{shown_id} COMPLETE") and ("limit 10 per set" in row[0]) is wide
        # Per checker, its balanced accuracy on each set in the sets' order: 9 of 10 items scored is partial.
        assert "local/checker-lexical: 0.612* · 0.500*" in row[0]
        assert f"{EVIL_MODEL}: 0.444* · —" in row[0]
    console = Console(file=io.StringIO(), width=200)
    shipped = evaluation_pb2.EvaluationSet(
        name="wice", title="WiCE", description="Wikipedia claims", licence="ODC-BY-1.0", items=358
    )
    print_table(console, eval_render.SET_COLUMNS, [shipped])
    assert lines_with(console.file.getvalue(), "wice") == ["wice 358 ODC-BY-1.0 WiCE: Wikipedia claims"]  # type: ignore[attr-defined]
    assert eval_view.status_name(99) == "STATUS 99"


# --- against a scripted EvaluationService ----------------------------------------------------
# The command as a process against a gRPC server that plays the gateway's part from a script: how the
# command follows a stream, ends it on Ctrl-C, and reads the gateway's refusals, whatever the real
# servicer's timing.


class ScriptedEvaluations(evaluation_pb2_grpc.EvaluationServiceServicer):
    """One evaluation of 2 checkers × 1 set of 3 items; `item_delay_s` paces its progress events, and the
    evaluation goes on whoever listens (as the gateway's does): RunEvaluation and WatchEvaluation both read
    its events, each with its seq. `drop_after`: RunEvaluation's stream breaks (UNAVAILABLE, as a connection
    the server recycles at its maximum age) after that many events."""

    ID = "ev-scripted-1"

    def __init__(self) -> None:
        self.item_delay_s = 0.0
        self.drop_after: int | None = None
        self.requests: list = []
        self.watched: list[int] = []
        self.cancelled: list[str] = []
        self.stream_closed = threading.Event()
        self.status = evaluation_pb2.EVALUATION_STATUS_RUNNING

    def evaluation(self) -> evaluation_pb2.Evaluation:
        evaluation = make_evaluation(self.status)
        evaluation.evaluation_id = self.ID
        return evaluation

    def _script(self, done: int = 0) -> list[evaluation_pb2.EvaluationEvent]:
        sets = [evaluation_pb2.EvaluationSetSummary(name="factcheck-bench", items=3, available=985)]
        started = evaluation_pb2.EvaluationStartedPayload(checker_models=CHECKERS, sets=sets, total=6, done=done)
        script = [evaluation_pb2.EvaluationEvent(evaluation_id=self.ID, started=started)]
        for count in range(done + 1, 7):
            progress = evaluation_pb2.EvaluationProgressPayload(done=count, total=6, checker_model=CHECKERS[count % 2])
            script.append(evaluation_pb2.EvaluationEvent(evaluation_id=self.ID, progress=progress))
        script.append(
            evaluation_pb2.EvaluationEvent(evaluation_id=self.ID, score=make_score(CHECKERS[0], "factcheck-bench", 0.6))
        )
        script.append(evaluation_pb2.EvaluationEvent(evaluation_id=self.ID, finished=self.evaluation()))
        for seq, item in enumerate(script, start=1):
            item.seq = seq
        return script

    def _events(self, context, done: int = 0, after_seq: int = 0, drop_after: int | None = None):
        script = self._script(done)
        for item in script[after_seq:]:
            if drop_after is not None and item.seq > drop_after:
                context.abort(grpc.StatusCode.UNAVAILABLE, "Connection closed by the server (max connection age)")
            if item.WhichOneof("event") == "progress":
                deadline = time.monotonic() + self.item_delay_s
                while time.monotonic() < deadline:
                    if self.status == evaluation_pb2.EVALUATION_STATUS_CANCELLED:
                        item = evaluation_pb2.EvaluationEvent(evaluation_id=self.ID, finished=self.evaluation())
                        item.seq = len(script) + 1
                        yield item
                        return
                    if not context.is_active():
                        self.stream_closed.set()  # the caller left; the evaluation would go on
                        return
                    time.sleep(0.02)
            if item.WhichOneof("event") == "finished":
                self.status = evaluation_pb2.EVALUATION_STATUS_COMPLETE
                item.finished.CopyFrom(self.evaluation())
            yield item

    def RunEvaluation(self, request, context):
        self.requests.append(request)
        unknown = [name for name in request.config.sets if name not in ("factcheck-bench", "wice")]
        if unknown:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unknown set {unknown[0]!r}: the shipped sets are ...")
        for event in self._events(context, drop_after=self.drop_after):
            yield evaluation_pb2.RunEvaluationResponse(event=event)

    def WatchEvaluation(self, request, context):
        self.watched.append(request.after_seq)
        if request.evaluation_id != self.ID:
            context.abort(grpc.StatusCode.NOT_FOUND, f"No evaluation {request.evaluation_id!r}")
        for event in self._events(context, after_seq=request.after_seq):
            yield evaluation_pb2.WatchEvaluationResponse(event=event)

    def ResumeEvaluation(self, request, context):
        self.requests.append(request)
        if request.evaluation_id != self.ID:
            context.abort(grpc.StatusCode.NOT_FOUND, f"No evaluation {request.evaluation_id!r}")
        if self.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the evaluation is COMPLETE")
        for event in self._events(context, done=2):
            yield evaluation_pb2.ResumeEvaluationResponse(event=event)

    def CancelEvaluation(self, request, context):
        self.cancelled.append(request.evaluation_id)
        if self.status != evaluation_pb2.EVALUATION_STATUS_RUNNING:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "the evaluation has finished")
        self.status = evaluation_pb2.EVALUATION_STATUS_CANCELLED
        return evaluation_pb2.CancelEvaluationResponse(status=self.status)

    def GetEvaluation(self, request, context):
        if request.evaluation_id != self.ID:
            context.abort(grpc.StatusCode.NOT_FOUND, f"No evaluation {request.evaluation_id!r}")
        return evaluation_pb2.GetEvaluationResponse(evaluation=self.evaluation())

    def ListEvaluations(self, request, context):
        listed = self.evaluation()
        del listed.scores[:]
        return evaluation_pb2.ListEvaluationsResponse(evaluations=[listed], next_page_token="page-2")

    def ListEvaluationItems(self, request, context):
        wrong = evaluation_pb2.EvaluationItem(
            checker_model=CHECKERS[0], set="factcheck-bench", item_id="fcb-1", claim="The Moon is made of cheese.",
            label=common_pb2.VERDICT_DISPUTED, verdict=common_pb2.VERDICT_VERIFIED, answer="It says so.",
        )  # fmt: skip
        return evaluation_pb2.ListEvaluationItemsResponse(items=[wrong] if request.wrong_only else [])

    def CompareEvaluations(self, request, context):
        self.requests.append(request)
        return comparison_response()

    def ListEvaluationSets(self, request, context):
        shipped = evaluation_pb2.EvaluationSet(name="wice", title="WiCE", licence="ODC-BY-1.0", items=358)
        return evaluation_pb2.ListEvaluationSetsResponse(sets=[shipped])


@pytest.fixture
def scripted():
    """The scripted service on a loopback port: (servicer, target)."""
    servicer = ScriptedEvaluations()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    evaluation_pb2_grpc.add_EvaluationServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, f"127.0.0.1:{port}"
    server.stop(grace=None)


def run_against(target: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(FACTCHECK), *args], capture_output=True, text=True, env=cli_environment(target), timeout=60
    )


def test_the_stream_shows_progress_then_the_tables(scripted, tmp_path):
    servicer, target = scripted
    mine = write_items(tmp_path / "mine.jsonl")
    done = run_against(
        target, "eval", "--checker", LEXICAL, "--set", "factcheck-bench", "--set", str(mine), "--limit", "3"
    )
    assert done.returncode == 0, done.stderr
    [request] = servicer.requests
    assert list(request.config.sets) == ["factcheck-bench"] and request.config.custom_sets[0].name == "mine"
    assert done.stderr.splitlines()[0].startswith(f"started   evaluation {ScriptedEvaluations.ID}: 2 checkers")
    assert "finished  COMPLETE" in done.stderr
    assert "Scores on factcheck-bench (10 of 985 items)" in done.stdout


def test_an_unknown_set_is_the_gateways_message_and_exit_2(scripted):
    _, target = scripted
    done = run_against(target, "eval", "--checker", LEXICAL, "--set", "no-such-set")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "factcheck: invalid request: unknown set 'no-such-set': the shipped sets are ...\n"


def test_ctrl_c_without_a_terminal_detaches_and_says_how_to_watch_again(scripted):
    from tests.test_cli_durable import start_factcheck

    servicer, target = scripted
    servicer.item_delay_s = 30.0
    running = start_factcheck(target, "eval", "--checker", LEXICAL, "--set", "factcheck-bench")
    running.wait_for(lambda line: line.startswith("started "))
    running.process.send_signal(signal.SIGINT)
    assert running.finish() == 130
    stderr = "\n".join(running.stderr)
    assert f"detached: evaluation {ScriptedEvaluations.ID} goes on at the gateway" in stderr
    assert f"Watch it again with `factcheck eval watch {ScriptedEvaluations.ID}`" in stderr
    assert "Traceback" not in stderr and running.stdout == []
    assert servicer.cancelled == []  # the command left, and never asked to cancel


@pytest.mark.parametrize("answer, cancelled", [("c\n", True), ("\n", False)])
def test_ctrl_c_on_a_terminal_asks_whether_to_cancel_or_detach(scripted, answer, cancelled):
    servicer, target = scripted
    servicer.item_delay_s = 30.0
    primary, secondary = pty.openpty()  # the command's stdin is a terminal: it asks there
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", WITH_CTRL_C, str(FACTCHECK), "eval", "--checker", LEXICAL, "--set", "factcheck-bench"],
            stdin=secondary, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_environment(target),
        )  # fmt: skip
        assert process.stderr is not None
        started = process.stderr.readline()
        assert started.startswith("started "), started
        process.send_signal(signal.SIGINT)
        prompt = ""
        while not prompt.endswith("[c]ancel / [D]etach: "):
            prompt += process.stderr.read(1)
        os.write(primary, answer.encode())
        assert process.wait(timeout=30) == 130
        rest = process.stderr.read()
    finally:
        os.close(primary)
        os.close(secondary)
    assert f"Cancel evaluation {ScriptedEvaluations.ID}, or detach and let it run?" in prompt
    if cancelled:
        assert servicer.cancelled == [ScriptedEvaluations.ID]
        assert f"evaluation {ScriptedEvaluations.ID} is cancelled" in rest
        assert f"Resume it with `factcheck eval resume {ScriptedEvaluations.ID}`" in rest
    else:
        assert servicer.cancelled == []
        assert f"Watch it again with `factcheck eval watch {ScriptedEvaluations.ID}`" in rest


def test_a_stream_the_server_cuts_is_followed_again_without_the_start_hint(scripted):
    servicer, target = scripted
    servicer.drop_after = 3  # started and two answers, then the connection's maximum age
    done = run_against(target, "eval", "--checker", LEXICAL, "--set", "factcheck-bench")
    assert done.returncode == 0, done.stderr
    assert servicer.watched == [3]  # followed on after the last event shown: nothing twice, nothing missed
    notes = [line for line in done.stderr.splitlines() if line.startswith("note ")]
    assert notes == [
        "note      connection to the gateway lost (UNAVAILABLE: Connection closed by the server (max connection "
        "age)); the evaluation goes on: following it again after event 3…"
    ]
    assert "Start the suite" not in done.stderr and "resume" not in done.stderr
    assert "finished  COMPLETE" in done.stderr and "Scores on factcheck-bench" in done.stdout
    assert len(servicer.requests) == 1  # never started twice


def test_watch_follows_an_evaluation_from_a_seq(scripted):
    servicer, target = scripted
    done = run_against(target, "eval", "watch", ScriptedEvaluations.ID, "--after-seq", "4", "--json")
    assert done.returncode == 0, done.stderr
    assert servicer.watched == [4]
    assert json.loads(done.stdout)["status"] == "EVALUATION_STATUS_COMPLETE"
    negative = run_against(target, "eval", "watch", ScriptedEvaluations.ID, "--after-seq", "-1")
    assert negative.returncode == 2 and "--after-seq must not be negative" in negative.stderr
    unknown = run_against(target, "eval", "watch", "nope")
    assert (unknown.returncode, unknown.stderr) == (5, "factcheck: not found: No evaluation 'nope'\n")


def test_resume_cancel_show_list_and_sets(scripted, tmp_path):
    servicer, target = scripted
    resumed = run_against(target, "eval", "resume", ScriptedEvaluations.ID, "--max-cost-usd", "2.5", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert servicer.requests[-1].budget.max_cost_usd == 2.5 and not servicer.requests[-1].budget.HasField("max_tokens")
    assert json.loads(resumed.stdout)["evaluationId"] == ScriptedEvaluations.ID
    assert "2 stored already" in resumed.stderr

    again = run_against(target, "eval", "resume", ScriptedEvaluations.ID)
    assert again.returncode == 1
    assert again.stderr == (
        f"factcheck eval: cannot resume evaluation {ScriptedEvaluations.ID}: the evaluation is COMPLETE\n"
    )
    cancelled = run_against(target, "eval", "cancel", ScriptedEvaluations.ID)
    assert cancelled.returncode == 1
    assert f"evaluation {ScriptedEvaluations.ID} already finished (COMPLETE)" in cancelled.stderr

    page = tmp_path / "shown.html"
    shown = run_against(target, "eval", "show", ScriptedEvaluations.ID, "--html", str(page))
    assert shown.returncode == 0 and "Scores on factcheck-bench" in shown.stdout and page.exists()
    missing = run_against(target, "eval", "show", "nope")
    assert (missing.returncode, missing.stderr) == (5, "factcheck: not found: No evaluation 'nope'\n")

    listed = run_against(target, "eval", "list")
    assert listed.returncode == 0
    assert lines_with(listed.stdout, ScriptedEvaluations.ID)[0].split()[1] == "COMPLETE"
    assert "Next page: factcheck eval list --page-token page-2" in listed.stdout
    sets = run_against(target, "eval", "sets")
    assert lines_with(sets.stdout, "wice") == ["wice 358 ODC-BY-1.0 WiCE"]


def test_show_items_and_compare_fit_the_terminal_and_wide_shows_every_name_whole(scripted):
    servicer, target = scripted
    evaluation = ScriptedEvaluations.ID
    tables = [
        # (the command, how its table's rows start, a value too long for 80 columns)
        (["eval", "show", evaluation], "fake/", EVIL_MODEL),
        (["eval", "show", evaluation, "--items", "--wrong"], "local/", "The Moon is made of cheese."),
        (["eval", "compare", evaluation, evaluation, "--max-disagreements", "5"], "local/", LONG_CHECKER),
    ]
    for command, start, value in tables:
        for wide in (False, True):
            env = {**cli_environment(target), "COLUMNS": "80"}
            argv = [str(FACTCHECK), *command, *(["--wide"] if wide else [])]
            done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
            assert done.returncode == 0, (command, done.stderr)
            rows = [line for line in done.stdout.splitlines() if line.startswith(start)]
            assert rows, (command, done.stdout)
            if wide:  # whole, each row on its one line
                assert all(value in row for row in rows), (command, rows)
            else:  # cut to fit, never folded onto a next line
                assert all(len(row) <= 80 and "…" in row and value not in row for row in rows), (command, rows)
    assert servicer.requests[-1].max_disagreements == 5


def test_a_count_of_one_is_singular(capsys):
    score = make_score("a/b", "s", 0.5)
    score.items = score.total = 1
    assert ", 1 of 1 item, " in eval_render.score_line(score).plain
    finished = make_evaluation()
    finished.done = finished.total = 1
    assert eval_render.finished_line(finished).plain.endswith("(1/1 answer stored)")
    assert eval_render.drawn_text(evaluation_pb2.EvaluationSetSummary(name="s", items=1)) == " (1 item)"
    assert eval_render.drawn_text(evaluation_pb2.EvaluationSetSummary(name="s", items=0, available=1)) == (
        " (0 of 1 item)"
    )
    progress = eval_render.EvalProgress(Console(file=io.StringIO(), force_terminal=False))
    progress.show(event(progress=evaluation_pb2.EvaluationProgressPayload(done=1, total=1)))
    assert capsys.readouterr().err == "progress  1/1 answer (100%)\n"
    running = make_evaluation(evaluation_pb2.EVALUATION_STATUS_RUNNING)
    running.done, running.total = 0, 1
    assert "Still running (0 of 1 answer stored)" in eval_view.stop_note(running)
    fitted = evaluation_pb2.FittedThreshold(items=1, verified_items=1, candidates=1)
    assert eval_view.threshold_row(fitted).items == "1 (1 VERIFIED, 0 fixed, 1 candidate)"
    response = comparison_response()
    response.resamples = 1
    console = Console(file=io.StringIO(), width=200)
    eval_render.render_comparison(console, response)
    assert "(1 resample within each label)" in console.file.getvalue()  # type: ignore[attr-defined]


def test_cancel_of_a_running_evaluation(scripted):
    servicer, target = scripted
    done = run_against(target, "eval", "cancel", ScriptedEvaluations.ID)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Evaluation {ScriptedEvaluations.ID}: CANCELLED.")


# --- against the suite ----------------------------------------------------------------------


pytest_e2e = pytest.mark.e2e


def evaluation_id_of(stderr: str) -> str:
    [line] = [line for line in stderr.splitlines() if line.startswith("started ")]
    return line.split("evaluation ", 1)[1].split(":", 1)[0]


@pytest_e2e
def test_eval_scores_a_shipped_set_and_a_custom_file_then_lists_and_shows_it(factcheck, tmp_path):
    mine = write_items(tmp_path / "mine.jsonl")
    page = tmp_path / "eval.html"
    done = factcheck(
        "eval", "--checker", LEXICAL, "--set", "factcheck-bench", "--set", str(mine), "--limit", "5",
        "--html", str(page),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    evaluation_id = evaluation_id_of(done.stderr)
    assert "finished  COMPLETE (8/8 answers stored)" in done.stderr
    assert f"HTML report written to {page}" in done.stderr
    text = done.stdout
    assert "Scores on factcheck-bench (5 of 985 items)" in text and "Scores on mine (custom, 3 items)" in text
    assert len(lines_with(text, LEXICAL, "5/5")) == 1 and len(lines_with(text, LEXICAL, "3/3")) == 1
    # The confusion matrices: one table, the checker and set named on the first of their three rows.
    assert text.count("LABEL \\ VERDICT") == 1 and len(lines_with(text, LEXICAL, "VERIFIED")) == 2

    dom = Page(page.read_text(encoding="utf-8"))
    assert len(dom.find("svg", "reliability-chart")) == 2 and len(dom.find("svg", "compare-chart")) == 2

    listed = factcheck("eval", "list")
    assert listed.returncode == 0, listed.stderr
    assert lines_with(listed.stdout, evaluation_id[:8])[0].split()[1:3] == ["COMPLETE", LEXICAL]

    shown = factcheck("eval", "show", evaluation_id[:8])  # the start of an id, as the list shows it
    assert shown.returncode == 0, shown.stderr
    assert lines_with(shown.stdout, LEXICAL, "5/5") == lines_with(text, LEXICAL, "5/5")

    as_json = json.loads(factcheck("eval", "show", "--json", evaluation_id).stdout)
    assert as_json["evaluationId"] == evaluation_id and as_json["status"] == "EVALUATION_STATUS_COMPLETE"
    assert [(score["checkerModel"], score["set"]) for score in as_json["scores"]] == [
        (LEXICAL, "factcheck-bench"),
        (LEXICAL, "mine"),
    ]
    page_json = json.loads(factcheck("eval", "list", "--json").stdout)
    assert evaluation_id in [item["evaluationId"] for item in page_json["evaluations"]]

    # Finished: nothing to cancel, nothing to resume.
    cancelled = factcheck("eval", "cancel", evaluation_id)
    assert cancelled.returncode == 1 and "already finished (COMPLETE)" in cancelled.stderr
    resumed = factcheck("eval", "resume", evaluation_id)
    assert resumed.returncode == 1 and f"cannot resume evaluation {evaluation_id}" in resumed.stderr


@pytest_e2e
def test_eval_json_prints_the_final_evaluation_only(factcheck):
    done = factcheck("eval", "--json", "--checker", LEXICAL, "--set", "factcheck-bench", "--limit", "2", "--seed", "3")
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    evaluation = json_format.Parse(line, evaluation_pb2.Evaluation())
    assert evaluation.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE
    assert (evaluation.limit, evaluation.seed, evaluation.done, evaluation.total) == (2, 3, 2, 2)


@pytest_e2e
def test_eval_sets_lists_the_shipped_sets(factcheck):
    done = factcheck("eval", "sets")
    assert done.returncode == 0, done.stderr
    for name in ("factcheck-bench", "wice", "climate-fever"):
        assert lines_with(done.stdout, name), name
    names = [item["name"] for item in json.loads(factcheck("eval", "sets", "--json").stdout)["sets"]]
    assert {"factcheck-bench", "wice", "climate-fever"} <= set(names)


@pytest_e2e
def test_an_unknown_set_is_the_gateways_invalid_request_and_exit_2(factcheck):
    done = factcheck("eval", "--checker", LEXICAL, "--set", "no-such-set")
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("factcheck: invalid request: ") and "no-such-set" in line


@pytest_e2e
def test_an_unknown_evaluation_is_not_found(factcheck):
    for command in (["show"], ["resume"], ["cancel"], ["watch"], ["show", "--items"]):
        done = factcheck("eval", *command[:1], "no-such-evaluation", *command[1:])
        assert done.returncode == 5, (command, done.stderr)
        [line] = done.stderr.splitlines()  # one line: nothing to resume, watch or cancel
        assert line.startswith("factcheck: not found: No evaluation with evaluation_id 'no-such-evaluation'"), line


@pytest_e2e
def test_ctrl_c_detaches_the_evaluation_goes_on_and_cancel_and_resume_finish_it(suite, fake_models, factcheck):
    from tests.test_cli_durable import start_factcheck

    fake_models.set_latency("verify", 1.0)
    running = start_factcheck(
        suite.gateway_target, "eval", "--checker", "fake/checker-a", "--set", "factcheck-bench", "--limit", "6",
        "--concurrency", "1",
    )  # fmt: skip
    started = running.wait_for(lambda line: line.startswith("started "))
    evaluation_id = started.split("evaluation ", 1)[1].split(":", 1)[0]
    running.process.send_signal(signal.SIGINT)
    assert running.finish() == 130
    assert f"factcheck eval watch {evaluation_id}" in "\n".join(running.stderr)

    def status() -> dict:
        return json.loads(factcheck("eval", "show", "--json", evaluation_id).stdout)

    time.sleep(1.5)
    going = status()
    assert going["status"] == "EVALUATION_STATUS_RUNNING" and int(going.get("done", 0)) >= 1  # it went on alone
    cancelled = factcheck("eval", "cancel", evaluation_id)
    assert cancelled.returncode == 0, cancelled.stderr
    assert status()["status"] == "EVALUATION_STATUS_CANCELLED"

    fake_models.set_latency("verify", 0.0)
    resumed = factcheck("eval", "resume", evaluation_id)
    assert resumed.returncode == 0, resumed.stderr
    assert "finished  COMPLETE (6/6 answers stored)" in resumed.stderr
    watched = factcheck("eval", "watch", evaluation_id)  # from the start: both attempts, to the end
    assert watched.returncode == 0, watched.stderr
    assert watched.stderr.count("started ") == 2 and "finished  COMPLETE (6/6 answers stored)" in watched.stderr


@pytest_e2e
def test_every_answer_shows_exports_and_compares(factcheck, fake_models, tmp_path):
    mine = write_items(tmp_path / "mine.jsonl")
    first = factcheck("eval", "--checker", LEXICAL, "--checker", "fake/checker-a", "--set", str(mine))
    second = factcheck("eval", "--checker", LEXICAL, "--set", str(mine))
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    a, b = evaluation_id_of(first.stderr), evaluation_id_of(second.stderr)

    shown = factcheck("eval", "show", a, "--items", "--checker", LEXICAL)
    assert shown.returncode == 0, shown.stderr
    assert "3 answers (checker local/checker-lexical)" in shown.stdout
    assert "The Moon is made of cheese." in shown.stdout and "fake/checker-a" not in shown.stdout
    wrong = factcheck("eval", "show", a, "--items", "--wrong")
    assert wrong.returncode == 0 and "(wrong)" in wrong.stdout

    records = factcheck("eval", "show", a, "--jsonl", "-")
    assert records.returncode == 0, records.stderr
    rows = [json.loads(line) for line in records.stdout.splitlines()]
    assert len(rows) == 6 and {row["checker_model"] for row in rows} == {LEXICAL, "fake/checker-a"}
    assert set(rows[0]) == set(eval_view.RECORD_FIELDS) and all(row["evaluation_id"] == a for row in rows)
    moon = next(row for row in rows if row["item_id"] == "moon" and row["checker_model"] == LEXICAL)
    assert moon["label"] == "DISPUTED" and moon["claim"] == "The Moon is made of cheese."
    table = tmp_path / "answers.csv"
    assert factcheck("eval", "show", a, "--csv", str(table), "--label", "verified").returncode == 0
    with table.open(encoding="utf-8", newline="") as stream:
        read = list(csv.DictReader(stream))
    assert [row["label"] for row in read] == ["VERIFIED", "VERIFIED"] and read[0]["item_id"] == "tower"

    listed = factcheck("eval", "list")
    assert f"{LEXICAL}: " in listed.stdout and "fake/checker-a: " in listed.stdout

    compared = factcheck("eval", "compare", a, b)
    assert compared.returncode == 0, compared.stderr
    [row] = lines_with(compared.stdout, LEXICAL, "mine")
    assert row.split()[2] == "3" and "+0.000" in row  # the same engine on the same items: no difference
    as_json = json.loads(factcheck("eval", "compare", a, b, "--json").stdout)
    assert as_json["comparisons"][0]["sharedItems"] == 3 and as_json["resamples"] == 2000
    nothing = factcheck(
        "eval",
        "compare",
        a,
        evaluation_id_of(factcheck("eval", "--checker", LEXICAL, "--set", "wice", "--limit", "1").stderr),
    )
    assert nothing.returncode == 1 and "nothing to compare" in nothing.stderr


@pytest_e2e
def test_check_warns_when_the_weighted_consensus_falls_back(factcheck):
    done = factcheck("check", "--consensus", "weighted", "--checker", "fake/checker-a", "The sky is blue.")
    assert done.returncode == 0, done.stderr
    assert (
        "factcheck: warning: the weighted consensus was not used: no complete evaluation of this tenant measured"
        in done.stderr
    )
    pinned = factcheck("check", "--evaluation", "no-such-evaluation", "--checker", "fake/checker-a", "The sky is blue.")
    assert pinned.returncode == 0, pinned.stderr
    assert "the weighted consensus was not used: evaluation no-such-evaluation was not found" in pinned.stderr
    both = factcheck("check", "--consensus", "majority", "--evaluation", "x", "The sky is blue.")
    assert both.returncode == 2 and "--evaluation names the weights of --consensus weighted" in both.stderr
    refused = factcheck("check", "--checker", "local/reporter", "The sky is blue.")
    assert refused.returncode == 2 and "'reporter' is not a checker" in refused.stderr


@pytest_e2e
def test_a_spent_budget_stops_as_partial_and_resume_with_a_larger_one_finishes(factcheck):
    # One item at a time: the budget is checked before each call, so the second call sees what the first spent.
    done = factcheck(
        "eval",
        "--checker",
        "fake/checker-a",
        "--set",
        "wice",
        "--limit",
        "3",
        "--max-tokens",
        "1",
        "--concurrency",
        "1",
    )
    assert done.returncode == 1, done.stderr
    evaluation_id = evaluation_id_of(done.stderr)
    assert "finished  PARTIAL" in done.stderr
    assert f"Continue with: factcheck eval resume {evaluation_id} (add --max-cost-usd X" in " ".join(
        done.stdout.split()
    )
    resumed = factcheck("eval", "resume", evaluation_id, "--max-tokens", "100000000", "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "EVALUATION_STATUS_COMPLETE"
    assert "finished  COMPLETE (3/3 answers stored)" in resumed.stderr
