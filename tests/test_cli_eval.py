"""`factcheck eval` and its subcommands (list, show, resume, cancel, sets).

The first half needs no gateway: the request the options build (shipped sets by name, JSONL files
as custom sets), every bad input as the command reports it (exit code and one line), the tables,
--json and the progress lines from constructed Evaluation protos. The second half runs the command
as a real process against the suite the command-line modules share (test_cli.py's fixtures).
"""

from __future__ import annotations

import argparse
import io
import json
import signal
import subprocess
import threading
import time
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from rich.console import Console

from factcheck.cli import eval_render, eval_view, evaluate
from factcheck.cli.app import build_parser
from factcheck.cli.tables import print_table
from factcheck.v1 import common_pb2, evaluation_pb2, evaluation_pb2_grpc
from tests import test_cli
from tests.test_cli import FACTCHECK, cli_environment
from tests.test_cli_edges import dead_target
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
        "local/checker-lexical 9/10 0.612 0.75/0.75 0.50/0.33 —/0.00 0.125 25.0% 11.1%"
    ]
    # A checker that never answered: nothing to score, every call failed.
    assert lines_with(text, "0/10") == [f"{EVIL_MODEL} 0/10 — —/— —/— —/— — — —"]
    # latency, tokens, cost, cached, failed
    assert lines_with(text, "local/checker-lexical", "factcheck-bench", "ms") == [
        "local/checker-lexical factcheck-bench 120 ms 420 ms 4,321 $0.0123 1 1"
    ]
    assert "Confusion matrices (rows: label, columns: verdict)" in text
    assert len(lines_with(text, "VERIFIED", "3", "1", "0")) >= 1
    assert text.count("label \\ verdict") == 4


def test_an_unfinished_evaluation_says_why_and_how_to_continue():
    evaluation = make_evaluation(evaluation_pb2.EVALUATION_STATUS_PARTIAL)
    evaluation.error_message = "the budget of $0.01 is spent"
    text = " ".join(rendered(evaluation).split())
    assert "Stopped before every item was judged (the budget of $0.01 is spent)" in text
    assert f"Continue with: factcheck eval resume {evaluation.evaluation_id} (add --max-cost-usd X" in text


def test_names_cannot_drive_the_terminal():
    evaluation = make_evaluation()
    evaluation.scores[0].checker_model = "evil/\x1b[2J\x1b]0;owned\x07model"
    text = rendered(evaluation)
    assert "\x1b" not in text and "\x07" not in text and "evil/[2J]0;ownedmodel" in text


def test_json_is_the_final_evaluation_in_lower_camel_case(capsys, tmp_path):
    evaluation = make_evaluation()
    evaluate.present(argparse.Namespace(json=True, html=tmp_path / "page.html"), evaluation)
    out, err = capsys.readouterr()
    [line] = out.splitlines()
    printed = json.loads(line)
    assert printed["evaluationId"] == evaluation.evaluation_id and printed["status"] == "EVALUATION_STATUS_COMPLETE"
    assert printed["scores"][0]["balancedAccuracy"] == 0.612
    assert printed["scores"][0]["disputedRateOnSupported"] == 0.25
    assert json_format.Parse(line, evaluation_pb2.Evaluation()) == evaluation
    assert err == f"HTML report written to {tmp_path / 'page.html'}\n"
    assert (tmp_path / "page.html").read_text().count('class="reliability-chart"') == 4


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
        == "score     local/checker-lexical on factcheck-bench: balanced accuracy 0.612, ECE 0.125, 9/10 items, 1 failed"
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


def test_listings_show_ids_statuses_and_sets():
    listed = make_evaluation()
    for wide, shown_id in ((False, listed.evaluation_id[:8]), (True, listed.evaluation_id)):
        console = Console(file=io.StringIO(), width=200)
        print_table(console, eval_render.EVALUATION_COLUMNS, [listed], wide=wide)
        row = lines_with(console.file.getvalue(), shown_id)  # type: ignore[attr-defined]
        assert len(row) == 1 and "COMPLETE" in row[0] and "40/40" in row[0] and "factcheck-bench" in row[0]
        assert row[0].startswith(f"{shown_id} COMPLETE") and ("limit 10 per set" in row[0]) is wide
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
    """One evaluation of 2 checkers × 1 set of 3 items; `item_delay_s` paces its progress events."""

    ID = "ev-scripted-1"

    def __init__(self) -> None:
        self.item_delay_s = 0.0
        self.requests: list = []
        self.cancelled: list[str] = []
        self.stream_closed = threading.Event()
        self.status = evaluation_pb2.EVALUATION_STATUS_RUNNING

    def evaluation(self) -> evaluation_pb2.Evaluation:
        evaluation = make_evaluation(self.status)
        evaluation.evaluation_id = self.ID
        return evaluation

    def _events(self, context, done: int = 0):
        sets = [evaluation_pb2.EvaluationSetSummary(name="factcheck-bench", items=3, available=985)]
        started = evaluation_pb2.EvaluationStartedPayload(checker_models=CHECKERS, sets=sets, total=6, done=done)
        yield evaluation_pb2.EvaluationEvent(evaluation_id=self.ID, started=started)
        for count in range(done + 1, 7):
            deadline = time.monotonic() + self.item_delay_s
            while time.monotonic() < deadline:
                if not context.is_active():
                    self.stream_closed.set()
                    self.status = evaluation_pb2.EVALUATION_STATUS_CANCELLED
                    return
                time.sleep(0.02)
            progress = evaluation_pb2.EvaluationProgressPayload(done=count, total=6, checker_model=CHECKERS[count % 2])
            yield evaluation_pb2.EvaluationEvent(evaluation_id=self.ID, progress=progress)
        yield evaluation_pb2.EvaluationEvent(
            evaluation_id=self.ID, score=make_score(CHECKERS[0], "factcheck-bench", 0.6)
        )
        self.status = evaluation_pb2.EVALUATION_STATUS_COMPLETE
        yield evaluation_pb2.EvaluationEvent(evaluation_id=self.ID, finished=self.evaluation())

    def RunEvaluation(self, request, context):
        self.requests.append(request)
        unknown = [name for name in request.config.sets if name not in ("factcheck-bench", "wice")]
        if unknown:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"unknown set {unknown[0]!r}: the shipped sets are ...")
        for event in self._events(context):
            yield evaluation_pb2.RunEvaluationResponse(event=event)

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


def test_ctrl_c_cancels_the_evaluation_and_says_how_to_resume(scripted):
    from tests.test_cli_durable import start_factcheck

    servicer, target = scripted
    servicer.item_delay_s = 30.0
    running = start_factcheck(target, "eval", "--checker", LEXICAL, "--set", "factcheck-bench")
    running.wait_for(lambda line: line.startswith("started "))
    running.process.send_signal(signal.SIGINT)
    assert running.finish() == 130
    stderr = "\n".join(running.stderr)
    assert f"evaluation {ScriptedEvaluations.ID} is cancelled" in stderr
    assert f"Resume it with `factcheck eval resume {ScriptedEvaluations.ID}`" in stderr
    assert "Traceback" not in stderr and running.stdout == []
    assert servicer.stream_closed.wait(10)  # the gateway saw the caller go away
    assert servicer.cancelled == [ScriptedEvaluations.ID]  # and was told to cancel


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
    assert text.count("label \\ verdict") == 2

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
    for command in (["show"], ["resume"], ["cancel"]):
        done = factcheck("eval", *command, "no-such-evaluation")
        assert done.returncode == 5, (command, done.stderr)
        assert done.stderr.startswith("factcheck: not found: "), done.stderr


@pytest_e2e
def test_ctrl_c_cancels_the_evaluation_and_resume_finishes_it(suite, fake_models, tmp_path):
    from tests.test_cli_durable import start_factcheck

    fake_models.set_latency("verify", 3.0)
    running = start_factcheck(
        suite.gateway_target, "eval", "--checker", "fake/checker-a", "--set", "factcheck-bench", "--limit", "4",
        "--concurrency", "1",
    )  # fmt: skip
    started = running.wait_for(lambda line: line.startswith("started "))
    evaluation_id = started.split("evaluation ", 1)[1].split(":", 1)[0]
    running.process.send_signal(signal.SIGINT)
    assert running.finish() == 130
    stderr = "\n".join(running.stderr)
    assert f"factcheck eval resume {evaluation_id}" in stderr

    status = None
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        shown = subprocess.run(
            [str(FACTCHECK), "eval", "show", "--json", evaluation_id],
            capture_output=True, text=True, env=cli_environment(suite.gateway_target), timeout=60,
        )  # fmt: skip
        status = json.loads(shown.stdout)["status"]
        if status == "EVALUATION_STATUS_CANCELLED":
            break
        time.sleep(0.2)
    assert status == "EVALUATION_STATUS_CANCELLED"

    fake_models.set_latency("verify", 0.0)
    resumed = subprocess.run(
        [str(FACTCHECK), "eval", "resume", evaluation_id],
        capture_output=True, text=True, env=cli_environment(suite.gateway_target), timeout=120,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert "finished  COMPLETE (4/4 answers stored)" in resumed.stderr


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
