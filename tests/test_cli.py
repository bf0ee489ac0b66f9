"""The `factcheck` command (check, show, list, kb) as a real process against the running suite.

One suite on SQLite and one fake model server serve the module and the other command-line modules;
the fake server is reset before each test. The command runs with stdout and stderr piped, so progress
comes as plain lines on stderr and the report is plain text on stdout.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from factcheck.cli import render
from factcheck.v1 import common_pb2, factcheck_pb2
from tests import conftest
from tests.conftest import CHECKERS, FULL_SEQUENCE, suite_environment
from tests.fake_model_server import fail, verdicts
from tests.processes import ROOT, start_service
from tests.test_html_report import audited_result, make_result

pytestmark = pytest.mark.e2e

FACTCHECK = Path(sys.executable).parent / "factcheck"
CLAIMS = [
    "The Paris Agreement was signed in 2015 by 196 countries.",
    "Global temperatures have risen by 1.1 degrees Celsius since pre-industrial times.",
    "Water boils at lower temperatures at high altitude.",
]
CONTENT = " ".join(CLAIMS)  # the fake extractor makes one claim per sentence
CORRECTION = "It was adopted in 2015 by 196 parties and signed from 2016."
# --json prints the proto3 JSON mapping: lowerCamelCase field names (docs/api.md).
EVENT_ENVELOPE = {"messageId", "seq", "timestamp"}
# Each failed checker's cause as a line shows it (up to the model client's "HTTP 500: ..." detail).
CAUSES = [
    f"verify_{n} {model}: UNAVAILABLE model {model}: provider 'fake' answered" for n, model in enumerate(CHECKERS)
]


# One suite on SQLite for the command-line modules (test_cli*.py), kept for the session (conftest.py).
fake_models = conftest.shared_fake_models


@pytest.fixture(scope="module")
def suite(shared_suites):
    suite, _ = shared_suites.get("cli", "sqlite")
    return suite


@pytest.fixture
def factcheck(suite, fake_models):
    """Run the console script against the suite; returns the finished process (text output)."""
    fake_models.reset()

    def run(*args: str, stdin: str | None = None, target: str | None = None) -> subprocess.CompletedProcess:
        env = cli_environment(target or suite.gateway_target)
        return subprocess.run(
            [str(FACTCHECK), *args], input=stdin, capture_output=True, text=True, env=env, timeout=120
        )

    return run


def cli_environment(target: str) -> dict[str, str]:
    """The console script's environment: this checkout's code (the venv's editable install may point at
    another checkout), the gateway, and a wide terminal."""
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": pythonpath, "FACTCHECK_GATEWAY_TARGET": target, "COLUMNS": "200"}


def flat(text: str) -> str:
    """Whitespace collapsed, so wrapped lines still match."""
    return " ".join(text.split())


def events_of(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def snake(name: str) -> str:
    """A JSON field name (lowerCamelCase) as the proto names it: "checkerComplete" -> "checker_complete"."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def kind_of(event: dict) -> str:
    """The event's kind as the proto's oneof member names it ("checker_complete")."""
    [kind] = set(event) - EVENT_ENVELOPE
    return snake(kind)


def causes_in(lines: list[str], indent: int) -> list[str]:
    """The failure causes among indented lines ("verify_0 model: CODE ..."), in stage order."""
    causes = [line[indent:] for line in lines if line[:indent].isspace() and line[indent : indent + 1] != " "]
    return sorted(cause.split(" HTTP")[0] for cause in causes if "HTTP 500" in cause)


def run_id(factcheck, *args: str) -> str:
    """Run a check with --json and return its message id."""
    done = factcheck("check", "--json", *args, CONTENT)
    assert done.returncode == 0, done.stderr
    return events_of(done.stdout)[0]["messageId"]


# --- check ---------------------------------------------------------------------------------


def test_check_shows_progress_then_the_report(factcheck, fake_models):
    fake_models.script("fake/checker-a", verdicts({"claim_1": "DISPUTED"}, correction=CORRECTION))
    done = factcheck("check", CONTENT)
    assert done.returncode == 0, done.stderr

    progress = done.stderr.splitlines()
    assert [line.split()[0] for line in progress] == [
        "start",
        "extract",
        "extract",
        "verify",
        "verify",
        "verify",
        "verify",
        "report",
        "report",
        "title",
        "done",
    ]
    assert "checking your content with 2 checkers: fake/checker-a, fake/checker-b" in progress[0]
    assert "found 3 claims (DATE 1, STATISTIC 1, TECHNICAL 1) with fake/extractor" in progress[2]
    assert any(
        "fake/checker-a done in" in line and "2 verified, 1 disputed, 0 unverifiable" in line for line in progress
    )
    assert any(
        "fake/checker-b done in" in line and "3 verified, 0 disputed, 0 unverifiable" in line for line in progress
    )
    assert "consensus of 2 checkers: 2 verified, 1 disputed, 0 unverifiable" in progress[6]
    assert "reliability score 85/100 (mostly reliable with minor issues) by fake/reporter" in progress[8]
    assert progress[-1].split()[:2] == ["done", "complete"]
    assert "(5 model calls, " in progress[-1] and " tokens, $0.0000)" in progress[-1]  # fake/ has no price

    report = flat(done.stdout)
    assert "Fact-check of the supplied content" in report
    # Agreement as what it is: how many checkers, never a percentage beside a verdict.
    assert "Reliability score 85/100" in report and "Claims 3 · all 2 checkers agree on 2 of 3 claims" in report
    assert "1 of 2 checkers agree" in report and "2 of 2 checkers agree" in report and "%" not in report
    assert "2 verified, 1 disputed, 0 unverifiable" in report
    for number, (claim, verdict) in enumerate(zip(CLAIMS, ["DISPUTED", "VERIFIED", "VERIFIED"]), start=1):
        assert f"{claim} [#{number} {verdict}]" in report  # the annotated content
    assert "Disputed claims ─" in report
    assert f"1. {CLAIMS[0]} correction: {CORRECTION}" in report
    assert "fake/checker-a (stated confidence HIGH): Reference sources contradict this claim." in report
    # Checked from the checkers' own knowledge: nothing to audit, and the report says so.
    assert "Audit ─" in report and "Answers not audited for 3 of 3 claims: no passages" in report


@pytest.mark.parametrize("how", ["file", "stdin", "file-stdin"])
def test_check_reads_content_from_a_file_or_stdin(factcheck, tmp_path, how):
    path = tmp_path / "content.txt"
    path.write_text(CONTENT)
    args, stdin = {"file": (["-f", str(path)], None), "stdin": (["-"], CONTENT), "file-stdin": (["-f", "-"], CONTENT)}[
        how
    ]
    done = factcheck("check", *args, stdin=stdin)
    assert done.returncode == 0, done.stderr
    assert all(claim in flat(done.stdout) for claim in CLAIMS)


def test_check_a_question_has_the_content_generated(factcheck):
    done = factcheck("check", "--question", "Tell me about the Eiffel Tower")
    assert done.returncode == 0, done.stderr
    assert "checking generated content" in done.stderr
    assert "generate  fake/generator wrote" in done.stderr
    assert "Generated by fake/generator" in done.stdout
    assert "The Eiffel Tower was completed in 1889" in flat(done.stdout)


def test_check_passes_the_models_and_limits(factcheck, fake_models):
    done = factcheck(
        "check",
        "--json",
        "--extractor",
        "fake/checker-b",
        "--checker",
        "fake/one",
        "--checker",
        "fake/two",
        "--reporter",
        "fake/checker-a",
        "--timeout-ms",
        "30000",
        "--max-content-length",
        "500",
        "--conversation-id",
        "conv-7",
        CONTENT,
    )
    assert done.returncode == 0, done.stderr
    start = events_of(done.stdout)[0]["factcheckStart"]
    assert start["conversationId"] == "conv-7"
    assert start["config"]["extractorModel"] == "fake/checker-b"
    assert start["config"]["checkerModels"] == ["fake/one", "fake/two"]
    assert start["config"]["reporterModel"] == "fake/checker-a"
    assert (start["config"]["timeoutMs"], start["config"]["maxContentLength"]) == (30000, 500)


def test_json_prints_one_object_per_event_and_nothing_else(factcheck):
    done = factcheck("check", "--json", CONTENT)
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)  # every line is one JSON object
    assert [kind_of(event) for event in events] == FULL_SEQUENCE
    assert [event["seq"] for event in events] == [str(n) for n in range(1, len(events) + 1)]
    assert len({event["messageId"] for event in events}) == 1
    assert events[2]["extractComplete"]["claims"][0]["claim"] == CLAIMS[0]
    assert events[-1]["complete"]["status"] == "MESSAGE_STATUS_COMPLETE"
    assert done.stderr == ""  # no progress lines either


def test_an_error_event_fails_with_its_message(factcheck, fake_models):
    for model in CHECKERS:
        fake_models.script(model, fail(500))
    done = factcheck("check", CONTENT)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and done.stdout == ""
    # The progress display ends with the error and one line per cause; then the final message.
    message_id = done.stderr.split("factcheck show ")[1].split()[0]
    ending = done.stderr.splitlines()[-5:]
    assert ending[0] == "failed    All verification checkers failed."
    assert causes_in(ending[1:3], indent=10) == CAUSES
    assert ending[3:] == [
        "factcheck: All verification checkers failed.",
        f"What was done is stored: factcheck show {message_id}",
    ]

    shown = factcheck("show", message_id)  # what ran before the failure is stored, and why it failed
    assert shown.returncode == 0, shown.stderr
    report = flat(shown.stdout)
    assert "status FAILED" in report and "The run failed: only what was done before the failure is shown." in report
    lines = shown.stdout.splitlines()
    start = lines.index("All verification checkers failed.")
    assert causes_in(lines[start + 1 : start + 3], indent=2) == CAUSES
    assert f"{CLAIMS[0]} [#1 UNCHECKED]" in report  # no checker judged it
    shown_json = json.loads(factcheck("show", "--json", message_id).stdout)
    assert shown_json["errorMessage"] == "All verification checkers failed."
    assert sorted(failure["model"] for failure in shown_json["failures"]) == CHECKERS


def test_a_degraded_run_completes_and_show_says_what_failed(factcheck, fake_models, tmp_path):
    fake_models.script("fake/checker-b", fail(500))
    done = factcheck("check", CONTENT)
    assert done.returncode == 0, done.stderr
    assert "fake/checker-b failed:" in done.stderr  # the consensus progress line
    message_id = done.stderr.split("run ", 1)[1].split(":", 1)[0]
    shown = factcheck("show", message_id, "--html", str(tmp_path / "degraded.html"))
    lines = shown.stdout.splitlines()
    note = lines.index("Some stages failed; the run went on without them.")
    assert causes_in(lines[note + 1 : note + 3], indent=2) == CAUSES[1:]
    assert "status COMPLETE" in flat(shown.stdout)
    page = (tmp_path / "degraded.html").read_text()
    assert "verify_1 fake/checker-b: UNAVAILABLE model fake/checker-b: provider &#39;fake&#39;" in page


def test_an_error_event_in_json_mode_is_printed_and_fails(factcheck, fake_models):
    for model in CHECKERS:
        fake_models.script(model, fail(500))
    done = factcheck("check", "--json", CONTENT)
    assert done.returncode == 1
    last = events_of(done.stdout)[-1]
    assert last["error"]["message"] == "All verification checkers failed."
    # Each checker's cause travels with the run's error message (failure reasons are kept).
    causes = last["error"]["failures"]
    assert sorted((c["stage"], c["model"], c["code"]) for c in causes) == [
        ("verify_0", "fake/checker-a", "UNAVAILABLE"),
        ("verify_1", "fake/checker-b", "UNAVAILABLE"),
    ]
    assert all("HTTP 500" in c["message"] for c in causes)
    # With --json there is no progress display: the causes come with the final message.
    lines = done.stderr.splitlines()
    assert lines[0] == "factcheck: All verification checkers failed."
    assert causes_in(lines[1:3], indent=2) == CAUSES


def test_an_invalid_request_shows_the_gateways_message(factcheck):
    five = [arg for n in range(5) for arg in ("--checker", f"fake/c{n}")]
    done = factcheck("check", *five, CONTENT)
    assert done.returncode == 2  # the command must change, as for any usage error
    message = "mode_config.checker_models must list 1 to 4 models (got 5)"
    assert done.stderr.strip() == f"factcheck: invalid request: {message}"
    assert done.stdout == ""


def test_an_unreachable_gateway_is_a_clear_message(factcheck):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        target = f"127.0.0.1:{probe.getsockname()[1]}"
    done = factcheck("check", CONTENT, target=target)
    assert done.returncode == 3
    assert done.stderr.startswith(f"factcheck: gateway unavailable at {target}: ")
    assert "factcheck serve" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "nothing to check"),
        (["-f", "/no/such/file"], "cannot read /no/such/file: No such file or directory"),
        (["-f", "x.txt", "text"], "not both"),
    ],
)
def test_missing_or_unreadable_content_is_a_usage_error(factcheck, args, message):
    done = factcheck("check", *args)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_check_writes_the_html_report(factcheck, tmp_path):
    out = tmp_path / "report.html"
    done = factcheck("check", "--json", "--html", str(out), CONTENT)
    assert done.returncode == 0, done.stderr
    assert [kind_of(event) for event in events_of(done.stdout)] == FULL_SEQUENCE  # stdout is still only JSON
    assert f"HTML report written to {out}" in done.stderr
    page = out.read_text()
    assert all(claim in page for claim in CLAIMS) and 'id="gauge-value">85<' in page


# --- show and list -------------------------------------------------------------------------


def test_show_renders_a_stored_result(factcheck, tmp_path):
    message_id = run_id(factcheck)
    done = factcheck("show", message_id, "--html", str(tmp_path / "shown.html"))
    assert done.returncode == 0, done.stderr
    report = flat(done.stdout)
    assert message_id in report and "COMPLETE" in report and "Reliability score 85/100" in report
    assert all(f"{claim} [#{n} VERIFIED]" in report for n, claim in enumerate(CLAIMS, start=1))
    assert CLAIMS[2] in (tmp_path / "shown.html").read_text()


def test_show_json_is_the_stored_result(factcheck):
    message_id = run_id(factcheck)
    done = factcheck("show", "--json", message_id)
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    result = json.loads(line)
    assert result["messageId"] == message_id and result["status"] == "MESSAGE_STATUS_COMPLETE"
    assert result["report"]["reliabilityScore"] == 85
    assert [claim["claim"] for claim in result["extraction"]["claims"]] == CLAIMS


def test_show_an_unknown_id_is_not_found(factcheck):
    done = factcheck("show", "no-such-run")
    assert done.returncode == 5  # not 3, which says the gateway is down
    assert done.stderr.strip() == "factcheck: not found: No fact-check with message_id 'no-such-run'"


def test_list_pages_newest_first(factcheck):
    ids = [run_id(factcheck) for _ in range(3)]
    first = factcheck("list", "--page-size", "2")
    assert first.returncode == 0, first.stderr
    short = [run[:8] for run in ids]  # as git and gh show commit hashes
    rows = [line.split()[0] for line in first.stdout.splitlines() if line.split() and line.split()[0] in short]
    assert rows == [short[2], short[1]]
    assert "COMPLETE" in first.stdout and "Fact-check of the supplied content" in first.stdout
    assert "Fact-check this content" not in first.stdout  # the question: --wide shows it
    wide = factcheck("list", "--page-size", "2", "--wide")
    assert [line.split()[0] for line in wide.stdout.splitlines()[1:3]] == [ids[2], ids[1]]
    assert "Fact-check this content" in wide.stdout
    [hint] = [line for line in first.stdout.splitlines() if line.startswith("Next page:")]
    command = hint.removeprefix("Next page: ").split()
    assert command[:4] == ["factcheck", "list", "--page-size", "2"] and command[4] == "--page-token"

    second = factcheck(*command[1:])
    assert second.returncode == 0, second.stderr
    assert short[0] in second.stdout and short[2] not in second.stdout


def test_list_with_a_bad_page_token_is_an_invalid_request(factcheck):
    done = factcheck("list", "--page-token", "not-a-token")
    assert done.returncode == 2
    assert done.stderr.startswith("factcheck: invalid request:") and "page_token" in done.stderr


# --- rendering details (no suite needed) --------------------------------------------------------


def rendered(result: factcheck_pb2.FactCheckResult) -> str:
    output = io.StringIO()
    console = Console(file=output, width=200, color_system=None)
    render.render_result(console, result)
    return output.getvalue()


def test_disputed_claims_show_the_corrections_and_cited_passages():
    output = rendered(make_result())
    assert "correction: Completed in 1889 <i>March</i>" in output
    assert "a/one (stated confidence HIGH): <script>alert('evidence')</script>" in output
    assert 'cites P1 (Almanac <i>): "<b>finished</b> in 1889"' in output


def test_the_audit_section_lists_each_flag_and_what_it_did_not_read():
    output = " ".join(rendered(audited_result()).split())
    assert "Audit ─" in output
    assert "#1 b/two said VERIFIED, counted as UNVERIFIABLE: unsupported detail: 330 metres" in output
    assert "Answers not audited for 1 of 3 claims: no passages: checked from the checkers' own knowledge." in output
    assert "1 of 2 checkers agree" in output and "%" not in output.split("Evidence ─")[1].split("Audit ─")[0]
    assert "Audit ─" not in rendered(make_result())  # nothing found, nothing left unread: no section


def test_a_checkers_progress_line_says_how_many_of_its_answers_the_audit_flagged():
    flagged = common_pb2.ClaimVerification(
        verdict=common_pb2.VERDICT_VERIFIED,
        audit_flags=[common_pb2.AuditFlag(kind=common_pb2.AUDIT_FLAG_KIND_FABRICATED_QUOTE, detail="quote not in P1")],
    )
    event = factcheck_pb2.FactCheckEvent(
        checker_complete=factcheck_pb2.CheckerCompletePayload(
            model="fake/x", verifications=[flagged, common_pb2.ClaimVerification(verdict=common_pb2.VERDICT_VERIFIED)]
        )
    )
    line = render.describe_event(event)
    assert line is not None and "; the audit flagged 1 answer" in line.plain


def test_untrusted_text_cannot_restyle_or_drive_the_terminal():
    content = "The Eiffel Tower is 330 metres tall. [bold red]alarm[/] [/] \x1b[2J it was completed in 1889."
    result = make_result(content=content)
    output = rendered(result)
    assert "[bold red]alarm[/] [/]" in output  # shown as text, not parsed as markup
    assert "\x1b" not in output


def test_an_event_kind_this_client_does_not_render_gets_a_generic_line(monkeypatch):
    monkeypatch.delitem(render._DESCRIBERS, "title_complete")
    event = factcheck_pb2.FactCheckEvent(title_complete=factcheck_pb2.TitleCompletePayload(title="x"))
    line = render.describe_event(event)
    assert line is not None and line.plain == "title     title complete"


def test_the_final_events_are_progress_lines_with_their_causes():
    error = factcheck_pb2.ErrorPayload(
        message="All verification checkers failed.",
        failures=[
            factcheck_pb2.StageFailure(
                stage="verify_0",
                model="openai/gpt-4o",
                code="FAILED_PRECONDITION",
                message="no endpoint configured for provider 'openai'",
            ),
            factcheck_pb2.StageFailure(stage="store", code="UNAVAILABLE", message="database is locked\x1b[2J"),
        ],
    )
    failed = render.describe_event(factcheck_pb2.FactCheckEvent(error=error))
    assert failed is not None
    assert failed.plain.splitlines() == [
        "failed    All verification checkers failed.",
        "          verify_0 openai/gpt-4o: FAILED_PRECONDITION no endpoint configured for provider 'openai'",
        "          store: UNAVAILABLE database is locked[2J",  # no escape sequence reaches the terminal
    ]
    cancelled = factcheck_pb2.CancelledPayload(reason="Cancelled by the caller.")
    line = render.describe_event(factcheck_pb2.FactCheckEvent(cancelled=cancelled))
    assert line is not None
    assert line.plain == ("cancelled Cancelled by the caller.")


def test_a_failed_result_explains_itself_in_the_terminal_and_the_html_page():
    from factcheck.cli import html

    result = make_result(score=None)
    result.status = factcheck_pb2.MESSAGE_STATUS_FAILED
    result.error_message = "All verification checkers failed."
    result.failures.add(stage="verify_0", model="a/one", code="UNAVAILABLE", message="HTTP 500 <b>down</b>")
    output = rendered(result)
    assert (
        "The run failed: only what was done before the failure is shown.\nAll verification checkers failed.\n" in output
    )
    assert "\n  verify_0 a/one: UNAVAILABLE HTTP 500 <b>down</b>\n" in output
    page = html.render_page(result)
    assert "<p>All verification checkers failed.</p>" in page
    assert '<ul id="failure-causes"><li>verify_0 a/one: UNAVAILABLE HTTP 500 &lt;b&gt;down&lt;/b&gt;</li></ul>' in page


def test_retrieved_evidence_is_a_progress_line():
    evidence = factcheck_pb2.EvidenceRetrievedPayload(
        claims=[common_pb2.ClaimEvidence(claim_id="claim_1", passage_ids=["P1", "P2"])],
        passages=[common_pb2.Passage(id="P1"), common_pb2.Passage(id="P2")],
        method="bm25",
        response_time_ms=40,
    )
    line = render.describe_event(factcheck_pb2.FactCheckEvent(evidence_retrieved=evidence))
    assert line is not None and line.plain == "evidence  found 2 passages for 1 claim (bm25) in 0.0 s"


def test_an_event_with_a_field_this_client_does_not_know_is_skipped(capsys):
    # Field 99, length-delimited and empty: what a newer gateway's new event kind looks like to this client.
    event = factcheck_pb2.FactCheckEvent.FromString(b"\x0a\x03run\x9a\x06\x00")
    assert event.message_id == "run" and event.WhichOneof("event") is None
    render.Progress(Console(file=io.StringIO())).show(event)
    assert capsys.readouterr().err == ""


# --- factcheck kb -------------------------------------------------------------------------------------------


def test_kb_adds_lists_searches_and_deletes_documents(factcheck, tmp_path):
    folder = tmp_path / "knowledge"
    (folder / "nested").mkdir(parents=True)
    (folder / "paris.md").write_text("# The Paris Agreement\n\nIt was adopted in 2015 by 196 parties.\n")
    (folder / "nested" / "everest.html").write_text(
        "<html><head><title>Everest</title><script>alert(1)</script></head>"
        "<body><p>Mount Everest is 8,849 metres tall.</p></body></html>"
    )
    (folder / "water.txt").write_text("Water boils at 100 degrees Celsius at sea level.")
    (folder / "ignored.pdf").write_bytes(b"%PDF")

    added = factcheck("kb", "add", str(folder))
    assert added.returncode == 0, added.stderr
    assert "3 added" in added.stdout and "The Paris Agreement" in added.stdout and "Everest" in added.stdout
    assert f"skipped  {folder / 'ignored.pdf'}: not a .txt, .md or .html file" in added.stderr  # said, with why
    assert added.stdout.splitlines()[-1] == "3 added (3 passages), 0 already stored, 1 skipped"
    # A document's id is its path from the folder named, the folder's name first; never where the folder is.
    assert "added  knowledge/nested/everest.html" in added.stdout and str(tmp_path) not in added.stdout
    again = factcheck("kb", "add", str(folder / "water.txt"))
    assert "already stored  knowledge/water.txt" in again.stdout and "0 added" in again.stdout

    listing = factcheck("kb", "list")
    assert listing.returncode == 0 and flat(listing.stdout).count("knowledge/") == 3

    found = factcheck("kb", "search", "How tall is Mount Everest?")
    assert "Everest" in found.stdout and "8,849 metres" in found.stdout and "alert" not in found.stdout

    document_id = "knowledge/water.txt"
    deleted = factcheck("kb", "delete", document_id)
    assert deleted.returncode == 0 and deleted.stdout == f"deleted {document_id} (1 passage)\n"
    missing = factcheck("kb", "delete", document_id)
    assert missing.returncode == 5 and "not found" in missing.stderr
    for stored in ("knowledge/paris.md", "knowledge/nested/everest.html"):  # the suite is shared: leave no documents
        assert factcheck("kb", "delete", stored).returncode == 0


def test_kb_add_never_overwrites_a_document_without_consent(factcheck, tmp_path):
    """The issue's case: projA/README.md, then projB/README.md, both stored as README.md."""
    for project, year in (("projA", 1999), ("projB", 2011)):
        (tmp_path / project).mkdir()
        (tmp_path / project / "README.md").write_text(f"# {project}\n\nProject {project} was founded in {year}.\n")
    first, second = tmp_path / "projA" / "README.md", tmp_path / "projB" / "README.md"
    try:
        assert factcheck("kb", "add", str(first)).stdout.startswith("         added  README.md  (1 passage)  projA\n")
        refused = factcheck("kb", "add", str(second))
        assert refused.returncode == 2
        assert refused.stdout.splitlines() == [
            "       refused  README.md  (a document with this id holds other text)  projB",
            "0 added (0 passages), 0 already stored, 1 refused",
        ]
        assert refused.stderr == (
            "factcheck kb add: 1 document refused: its id is stored with other text; --replace overwrites it, "
            "--id ID adds a single file under another id\n"
        )
        found = json.loads(factcheck("kb", "search", "--json", "Project founded").stdout)["passages"]
        assert [p["text"] for p in found] == ["Project projA was founded in 1999."]  # nothing vanished

        named = factcheck("kb", "add", str(second), "--id", "projB/README.md")
        assert named.returncode == 0 and "added  projB/README.md  (1 passage)  projB" in named.stdout
        found = json.loads(factcheck("kb", "search", "--json", "Project founded").stdout)["passages"]
        assert sorted(p["sourceId"] for p in found) == ["README.md", "projB/README.md"]

        replaced = factcheck("kb", "add", "--replace", str(second))
        assert replaced.returncode == 0, replaced.stderr
        assert replaced.stdout.splitlines() == [
            "already stored  projB/README.md  (1 passage)  projB",  # its text is stored under the --id
            "0 added (0 passages), 1 already stored",
        ]
        first.write_text("# projA\n\nProject projA was founded in 1998, in Bergen.\n")
        edited = factcheck("kb", "add", "--replace", str(first))
        assert edited.returncode == 0 and edited.stdout.splitlines() == [
            "      replaced  README.md  (1 passage)  projA",
            "0 added, 1 replaced (1 passage), 0 already stored",
        ]
    finally:
        for document in ("README.md", "projB/README.md"):  # the suite is shared
            factcheck("kb", "delete", document)


def test_kb_add_json_says_what_became_of_each_file(factcheck, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "tides.md").write_text("# Tides\n\nThe Bay of Fundy has the highest tides in the world.\n")
    (folder / "empty.txt").write_text("")
    (folder / "scan.pdf").write_bytes(b"%PDF-1.4")
    try:
        done = factcheck("kb", "add", "--json", str(folder))
        assert (done.returncode, done.stderr) == (0, "")
        assert json.loads(done.stdout) == {
            "documents": [
                {
                    "path": str(folder / "tides.md"),
                    "documentId": "notes/tides.md",
                    "title": "Tides",
                    "state": "added",
                    "passageCount": 1,
                }
            ],
            "skipped": [
                {"path": str(folder / "empty.txt"), "reason": "empty"},
                {"path": str(folder / "scan.pdf"), "reason": "not a .txt, .md or .html file"},
            ],
        }
        again = json.loads(factcheck("kb", "add", "--json", str(folder / "tides.md")).stdout)
        assert [(d["documentId"], d["state"]) for d in again["documents"]] == [("notes/tides.md", "already_stored")]
    finally:
        factcheck("kb", "delete", "notes/tides.md")


def test_kb_add_refuses_unsupported_files(factcheck, tmp_path):
    pdf = tmp_path / "paper.pdf"
    pdf.write_bytes(b"%PDF")
    done = factcheck("kb", "add", str(pdf))
    assert done.returncode == 2 and "not a .txt, .md or .html file" in done.stderr


def test_html_documents_keep_visible_text_only():
    from factcheck.cli.documents import html_text

    title, text = html_text(
        "<html><head><title> A  page </title><style>p{}</style></head>"
        "<body><h1>Heading</h1><p>First &amp; second.</p><script>var x = 1;</script><p>Third</p></body></html>"
    )
    assert title == "A page"
    assert text == "# Heading\n\nFirst & second.\n\nThird"  # a heading as Markdown writes it: no passage of its own


@pytest.mark.parametrize(
    ("checker", "why"),
    [
        ("local/chekcer", "unknown local engine 'chekcer' (available: checker, checker-lexical, checker-nli, "),
        (
            "openai/gpt-4o",
            "no endpoint configured for provider 'openai': set FACTCHECK_MODEL_BASE_URL (or add 'openai' to "
            "FACTCHECK_MODEL_PROVIDERS), or use a local/ model",
        ),
    ],
)
def test_a_model_that_cannot_be_served_is_refused_before_the_run_starts(
    suite, factcheck, fake_models, tmp_path, checker, why
):
    """An unknown local/ engine, or a provider with no endpoint configured (here the gateway has one for the
    provider `fake` only), is refused as `--checker bogus` is: exit 2 and the validation message, no run
    started or stored."""
    env = {
        **suite_environment(fake_models, f"sqlite:///{tmp_path / 'refused.db'}"),
        "FACTCHECK_MODEL_BASE_URL": "",
        "FACTCHECK_MODEL_PROVIDERS": json.dumps({"fake": {"base_url": fake_models.base_url}}),
    }
    gateway = start_service(
        "gateway",
        {
            **env,
            "FACTCHECK_EXTRACTOR_TARGET": suite.services["extractor"].target,
            "FACTCHECK_CHECKER_TARGET": suite.services["checker"].target,
            "FACTCHECK_REPORTER_TARGET": suite.services["reporter"].target,
        },
    )
    try:
        done = factcheck("check", "--checker", checker, CONTENT, target=gateway.target)
        listed = factcheck("list", "--json", target=gateway.target)
    finally:
        gateway.stop()
    assert done.returncode == 2 and done.stdout == ""
    assert flat(done.stderr).startswith(
        f"factcheck: invalid request: mode_config.checker_models[0]: model '{checker}': {why}"
    )
    assert "Traceback" not in done.stderr and json.loads(listed.stdout).get("results", []) == []
    assert fake_models.requests == []  # nothing was extracted


def test_a_checker_without_an_endpoint_says_why_the_run_failed(suite, factcheck, fake_models, tmp_path):
    """A run whose checker has no endpoint configured though the gateway has (its settings differ from the
    gateway's) fails at verify: the cause reaches the caller and is stored with the run."""
    suite_gateway = suite.services["gateway"]  # keeps serving; a second gateway uses the endpoint-less checker
    env = suite_environment(fake_models, f"sqlite:///{tmp_path / 'no-endpoint.db'}")
    checker = start_service("checker", {**env, "FACTCHECK_MODEL_BASE_URL": ""})
    gateway = start_service(
        "gateway",
        {
            **env,
            "FACTCHECK_EXTRACTOR_TARGET": suite.services["extractor"].target,
            "FACTCHECK_CHECKER_TARGET": checker.target,
            "FACTCHECK_REPORTER_TARGET": suite.services["reporter"].target,
        },
    )
    try:
        done = factcheck("check", "--checker", "openai/gpt-4o", CONTENT, target=gateway.target)
        message_id = done.stderr.split("factcheck show ")[1].split()[0]
        shown = factcheck("show", message_id, target=gateway.target)
    finally:
        gateway.stop()
        checker.stop()
    assert suite_gateway.process.poll() is None
    assert done.returncode == 1
    assert "All verification checkers failed." in done.stderr
    cause = "no endpoint configured for provider 'openai': set FACTCHECK_MODEL_BASE_URL"
    assert "verify_0 openai/gpt-4o: FAILED_PRECONDITION" in flat(done.stderr) and cause in flat(done.stderr)
    assert "FAILED" in shown.stdout and cause in flat(shown.stdout)


# --- factcheck check --citations and factcheck claims ---------------------------------------------


def test_check_with_citations_then_claims_lists_and_shows_them(factcheck, fake_models, tmp_path):
    source = tmp_path / "paris-claims.md"
    source.write_text("# Paris\n\nThe Paris Agreement was signed in 2015 by 196 countries at COP21.\n")
    assert factcheck("kb", "add", str(source)).returncode == 0
    try:
        for model in ("fake/checker-a", "fake/checker-b"):
            fake_models.script(model, verdicts(cite="quote", support="SUPPORTED"))
        progress = factcheck("check", "--citations", CONTENT)
        assert progress.returncode == 0 and "claim_1 supported" in flat(progress.stderr)  # the cite lines
        message_id = run_id(factcheck, "--citations")
        listed = factcheck("claims", "--run", message_id, "--json")
        assert listed.returncode == 0, listed.stderr
        claims = json.loads(listed.stdout)["claims"]
        assert sorted(c["claimKey"] for c in claims) == ["claim_1", "claim_2", "claim_3"]
        paris = next(c for c in claims if c["claimKey"] == "claim_1")
        assert paris["claimType"] == "CITATION_CLAIM_TYPE_NUMERIC" and paris["numericDetail"]["number"]["value"] == 196

        table = factcheck("claims", "--run", message_id[:8], "--type", "numeric")  # a run id's start will do
        assert table.returncode == 0 and paris["id"][:8] in flat(table.stdout)  # ids shortened
        wide = factcheck("claims", "--run", message_id, "--type", "numeric", "--wide")
        assert wide.returncode == 0 and paris["id"] in flat(wide.stdout) and message_id in flat(wide.stdout)
        for claim_id in (paris["id"], paris["id"][:8]):
            shown = factcheck("claims", claim_id)
            assert shown.returncode == 0, shown.stderr
            text = flat(shown.stdout)
            assert "claim_1 of run" in text and "[primary] Paris " in text and "QA:" in text  # the source by its title
        assert factcheck("claims", "no-such-claim").returncode == 5  # not found
        report = factcheck("show", message_id)
        assert report.returncode == 0 and "Citations " in report.stdout and "supported ·" in report.stdout
    finally:
        factcheck("kb", "delete", source.name)
