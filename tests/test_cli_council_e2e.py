"""`factcheck council`, and show/list/watch of council runs, as real processes against the suite
(SQLite) with the scripted fake model server.

Labels are drawn at random per run, so the scripted fact-checkers rate each response by what it
says (read from the council prompt: "Response X:" then the response), never by its label.
"""

from __future__ import annotations

import json
import re

import pytest

from tests import test_cli
from tests.fake_model_server import fail, reply
from tests.test_cli import events_of, flat, kind_of

pytestmark = pytest.mark.e2e

# test_cli's suite (SQLite, fake models) and its console-script runner, for this module too.
suite = test_cli.suite
factcheck = test_cli.factcheck
fake_models = test_cli.fake_models

QUESTION = "When was the Eiffel Tower completed, and how tall is it?"
ANSWERS = [
    {"name": "assistant-alpha", "text": "The Eiffel Tower was completed in 1889. It is 330 metres tall."},
    {"name": "assistant-beta", "text": "The Eiffel Tower was completed in 1899. It is 330 metres tall."},
    {"name": "assistant-gamma", "text": "The Eiffel Tower was completed in 1889. It is 300 metres tall."},
]
# What the scripted fact-checkers think of each answer, by a word only that answer has: its rating,
# and the inaccurate claim they list (the checker's INACCURATE CLAIMS line format).
VERDICTS = {
    "1899": (
        "INACCURATE",
        "Numerical/Statistical Error | The Eiffel Tower was completed in 1899 | It was completed in 1889",
    ),
    "300 metres": ("MIXED", "Numerical/Statistical Error | It is 300 metres tall | It is 330 metres tall"),
}
_RESPONSE = re.compile(
    r"^Response ([A-H]):[ \t]*\n(.*?)(?=^Response [A-H]:[ \t]*$|^REFERENCE EVIDENCE:|^Your task|\Z)", re.M | re.S
)


def responses_in(prompt: str) -> dict[str, str]:
    """Label -> text of the anonymised responses in a fact-check prompt (each line quoted with "> ")."""
    return {
        f"Response {letter}": "\n".join(line.removeprefix(">").strip() for line in text.strip().splitlines())
        for letter, text in _RESPONSE.findall(prompt)
    }


def summary(prompt: str, *, analysis: str = "Checked every response.") -> str:
    """A fact-checker's answer: analysis, INACCURATE CLAIMS, then the FACT CHECK SUMMARY block."""
    ratings, claims = {}, []
    for label, text in sorted(responses_in(prompt).items()):
        rating, claim = next((found for word, found in VERDICTS.items() if word in text), ("ACCURATE", None))
        ratings[label] = rating
        if claim:
            claims.append(f"{label} | {claim}")
    best = next(label for label, rating in ratings.items() if rating == "ACCURATE")
    lines = [analysis, "", "INACCURATE CLAIMS:", *(claims or ["None"]), "FACT CHECK SUMMARY:"]
    lines += [f"{label}: {rating}" for label, rating in ratings.items()]
    lines.append(f"MOST RELIABLE: {best}")
    return "\n".join(lines)


def council_model(answer: str):
    """A council model: answers the question, and fact-checks (in its second role) with `summary`."""
    return reply(lambda prompt: summary(prompt) if "FACT CHECK SUMMARY" in prompt else answer)


@pytest.fixture
def answers_file(tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(ANSWERS))
    return path


def message_id_in(stderr: str) -> str:
    return stderr.split("run ", 1)[1].split(":", 1)[0]


def ranking_rows(stdout: str) -> list[list[str]]:
    return [line.split() for line in stdout.splitlines() if re.match(r"^\s+\d\s+Response [A-H]\s", line)]


def stage_names(progress: list[str]) -> list[str]:
    """The stage of each progress line. The suite is shared with the other command-line modules: when
    one of them left documents in its knowledge store, the council first retrieves evidence for the
    sentences (an "evidence" line), which these tests do not look at."""
    return [line.split()[0] for line in progress if line[:1] != " " and not line.startswith("evidence")]


def test_council_ranks_supplied_answers_with_live_progress(factcheck, fake_models, answers_file, tmp_path):
    for model in ("fake/checker-a", "fake/checker-b"):
        fake_models.script(model, reply(summary))
    out = tmp_path / "council.html"
    done = factcheck("council", QUESTION, "--responses", str(answers_file), "--html", str(out))
    assert done.returncode == 0, done.stderr

    progress = done.stderr.splitlines()
    assert progress.pop() == f"HTML report written to {out}"
    stages = stage_names(progress)
    assert stages[:6] == ["start", "respond", "respond", "respond", "respond", "anonymise"]
    assert stages[6:10] == ["check", "check", "check", "rank"] and stages[-1] == "done"
    assert "ranking 3 supplied responses; 2 fact-checkers: fake/checker-a, fake/checker-b" in progress[0]
    assert all("assistant-" not in line for line in progress[:9])  # anonymous until the ranking
    rank_line = next(line for line in progress if line.startswith("rank"))
    assert "(assistant-beta) 1.00" in rank_line and "Kendall's W 1.00 (strong agreement)" in rank_line

    rows = ranking_rows(done.stdout)
    assert [row[3] for row in rows] == ["assistant-alpha", "assistant-gamma", "assistant-beta"]
    assert [row[4] for row in rows] == ["5.00", "3.00", "1.00"]
    assert rows[0][5:] == ["ACCURATE", "ACCURATE", "2", "0"]
    assert rows[1][5:] == ["MIXED", "MIXED", "0", "2"]  # each fact-checker's report counts
    assert rows[2][5:] == ["INACCURATE", "INACCURATE", "0", "2"]
    report = flat(done.stdout)
    assert "Agreement (Kendall's W) 1.00 (strong agreement)" in report
    beta, gamma = (f"Response {rows[n][2]}" for n in (2, 1))
    section = flat(done.stdout.split("Inaccurate claims by error type")[1])
    assert section.split(" ", 1)[1].startswith("Numerical/Statistical Error (2) ")
    found_by = "found by fake/checker-a, fake/checker-b"  # each claim once, with both checkers that listed it
    assert (
        f"{beta} (assistant-beta): The Eiffel Tower was completed in 1899 correction: It was completed in 1889 {found_by}"
    ) in report
    assert f"{gamma} (assistant-gamma): It is 300 metres tall correction: It is 330 metres tall {found_by}" in report
    assert "Self-preference n/a (no model rated its own answer)" in report
    page = out.read_text()
    assert (
        'id="ranking-table"' in page and "assistant-beta" in page and "The Eiffel Tower was completed in 1899" in page
    )

    message_id = message_id_in(done.stderr)
    shown = factcheck("show", message_id)
    assert shown.returncode == 0, shown.stderr
    assert ranking_rows(shown.stdout) == rows
    listing = factcheck("list")
    # The listing shortens ids as gh does (their first 8 characters): id, date, time, mode, status.
    [row] = [line.split() for line in listing.stdout.splitlines() if line.split()[:1] == [message_id[:8]]]
    assert row[3:5] == ["council", "COMPLETE"]
    watched = factcheck("watch", message_id)
    assert watched.returncode == 0, watched.stderr
    assert stage_names(watched.stderr.splitlines()) == stages
    assert ranking_rows(watched.stdout) == rows


def test_council_models_answer_and_check_each_other(factcheck, fake_models, tmp_path):
    for model, answer in zip(("fake/alpha", "fake/beta", "fake/gamma"), ANSWERS):
        fake_models.script(model, council_model(answer["text"]))
    done = factcheck(
        "council", QUESTION, "-m", "fake/alpha", "-m", "fake/beta", "-m", "fake/gamma", "--exclude-self", "--json"
    )
    assert done.returncode == 0, done.stderr
    events = events_of(done.stdout)
    kinds = [kind_of(event) for event in events]
    assert kinds[:2] == ["factcheck_start", "respond_start"]
    assert kinds.count("response_complete") == 3 and kinds.count("council_check_complete") == 3
    assert kinds[-1] == "complete"
    start = events[0]["factcheckStart"]
    assert start["mode"] == "MODE_COUNCIL" and start["council"]["factCheckerModels"] == [
        "fake/alpha",
        "fake/beta",
        "fake/gamma",
    ]
    [aggregate] = [
        event["councilAggregateComplete"]["aggregate"] for event in events if "councilAggregateComplete" in event
    ]
    assert [ranked["model"] for ranked in aggregate["ranking"]] == ["fake/alpha", "fake/gamma", "fake/beta"]
    assert aggregate["excludeSelfRatings"] is True

    shown = factcheck("show", events[0]["messageId"])
    rows = ranking_rows(shown.stdout)
    assert [row[3] for row in rows] == ["fake/alpha", "fake/gamma", "fake/beta"]
    assert sum(row.count("(self)") for row in rows) == 3  # each model's rating of its own answer, marked
    assert "self-ratings left out of the averages" in flat(shown.stdout)


def test_a_failed_fact_checker_is_excluded_and_named(factcheck, fake_models, answers_file):
    fake_models.script("fake/checker-a", reply(summary))
    fake_models.script("fake/checker-b", fail(500))
    done = factcheck("council", QUESTION, "--responses", str(answers_file))
    assert done.returncode == 0, done.stderr
    assert any(
        line.startswith("check     fake/checker-b failed (left out of the ranking):")
        for line in done.stderr.splitlines()
    )
    report = flat(done.stdout)
    assert "Excluded fact-checkers ─" in report and "fake/checker-b:" in report
    assert "Kendall's W) n/a (fewer than two fact-checkers counted)" in report


def test_every_fact_checker_failing_fails_the_run(factcheck, fake_models, answers_file):
    for model in ("fake/checker-a", "fake/checker-b"):
        fake_models.script(model, reply("I would rather not rate these."))
    done = factcheck("council", QUESTION, "--responses", str(answers_file))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and done.stdout == ""
    message_id = done.stderr.split("factcheck show ")[1].split()[0]
    shown = factcheck("show", message_id)
    assert shown.returncode == 0 and "status FAILED" in flat(shown.stdout)


def test_a_bad_responses_file_exits_2_and_too_many_models_exit_3(factcheck, tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text('{"name": "a", "text": "x"}\n{"name": "b"}\n')
    done = factcheck("council", QUESTION, "--responses", str(path))
    assert done.returncode == 2 and done.stderr == f'factcheck council: {path}: line 2: "text" is missing\n'
    nine = [arg for n in range(9) for arg in ("-m", f"fake/m{n}")]
    done = factcheck("council", QUESTION, *nine)
    assert (
        done.returncode == 2
        and done.stderr.startswith("factcheck: invalid request: ")
        and "council_models" in done.stderr
    )
