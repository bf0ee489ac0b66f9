"""`factcheck check --investigate` (live per-claim progress, the report's Investigation section, the
HTML page) and `factcheck reviews` (list, approve), as real processes against the suite on SQLite."""

from __future__ import annotations

import subprocess

import pytest

from tests.conftest import suite_environment
from tests.fake_model_server import assessments, verdicts
from tests.processes import start_suite
from tests.test_cli import FACTCHECK, cli_environment, flat

pytestmark = pytest.mark.e2e

CONTENT = "The Golden Gate Bridge opened to traffic in 1937. The Eiffel Tower is 330 metres tall."
QUESTION = "When did the Golden Gate Bridge open to traffic?"
DOCUMENTS = {
    "bridge-history.txt": "The Golden Gate Bridge opened to traffic in 1937 after four years of construction.",
    "bridge-district.txt": "Opened in 1937, the Golden Gate Bridge carried its first traffic on 28 May.",
}


@pytest.fixture(scope="module")
def suite(fake_models, tmp_path_factory):
    database = tmp_path_factory.mktemp("cli-investigate") / "factcheck.db"
    running = start_suite(suite_environment(fake_models, f"sqlite:///{database}"))
    yield running
    running.stop()


@pytest.fixture
def factcheck(suite, fake_models):
    fake_models.reset()

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(FACTCHECK), *args],
            capture_output=True,
            text=True,
            env=cli_environment(suite.gateway_target),
            timeout=120,
        )

    return run


def test_check_investigate_shows_each_claim_then_reviews_decide_it(factcheck, fake_models, tmp_path):
    for name, text in DOCUMENTS.items():
        (tmp_path / name).write_text(text)
    added = factcheck("kb", "add", str(tmp_path))
    assert added.returncode == 0, added.stderr
    for model in ("fake/checker-a", "fake/checker-b"):
        fake_models.script(model, verdicts({"claim_1": "UNVERIFIABLE"}))
    fake_models.script("fake/investigator", assessments({"Golden Gate Bridge": "SUPPORTS"}))

    page = tmp_path / "report.html"
    done = factcheck(
        "check", "--investigate", "--investigator", "fake/investigator", "-q", QUESTION, "--html", str(page), CONTENT
    )
    assert done.returncode == 0, done.stderr
    progress = flat(done.stderr)
    assert "investigate 1 dubious claim queued, batches of 5" in progress
    assert "investigate claim_1 CONFIRMED 0.90 [vote] pending review" in progress
    assert "1 investigated: 1 confirmed" in progress  # two independent documents (0.5 each): +0.2 +0.2
    report = flat(done.stdout)
    assert "Investigation" in report and "CONFIRMED (proposed)" in report and "pending" in report
    html = page.read_text()
    assert 'id="investigation"' in html and "CONFIRMED (proposed)" in html and "review pending" in html

    listed = factcheck("reviews")
    assert listed.returncode == 0, listed.stderr
    assert "claim_1" in listed.stdout and "CONFIRMED" in listed.stdout
    message_id = next(line.split()[0] for line in listed.stdout.splitlines() if "claim_1" in line)
    assert len(message_id) == 8  # the run's id shortened; the commands take it as it is shown

    approved = factcheck("reviews", "approve", message_id, "claim_1", "--reason", "Two histories agree.")
    assert approved.returncode == 0, approved.stderr
    assert "approved; in force: CONFIRMED" in approved.stdout
    assert "No reviews waiting." in factcheck("reviews").stdout
    again = factcheck("reviews", "reject", message_id, "claim_1", "--reason", "changed my mind")
    assert again.returncode != 0 and "already decided" in again.stderr
