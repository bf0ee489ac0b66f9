"""The README's first command: `factcheck demo`, offline on the built-in local/ models: the sample
checked, then the example answers ranked in council mode; and a second clone's demo on the same
machine (the same per-user database) shows its own files and leaves its checkout clean."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT
from tests.test_html_report import Page, chromium, measure_layout  # noqa: F401 - chromium is a fixture
from tests.test_servers import _free_port_block

pytestmark = pytest.mark.e2e

EXAMPLES = ROOT / "cli" / "factcheck_cli" / "examples"


def run_demo(cwd: Path, data_home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        key: value for key, value in os.environ.items() if not key.startswith("FACTCHECK_")
    }  # the embedded defaults, whatever the caller's environment says
    env["COLUMNS"] = "200"
    env["XDG_DATA_HOME"] = str(data_home)  # not the user's own store
    env["PYTHONPATH"] = str(ROOT)  # this checkout's code, wherever the venv's editable install points
    return subprocess.run(
        [str(Path(sys.executable).parent / "factcheck"), "demo", "--base-port", str(_free_port_block()), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_demo_checks_the_sample_against_the_example_knowledge(tmp_path, chromium):  # noqa: F811
    first = tmp_path / "first"
    first.mkdir()
    done = run_demo(first, tmp_path / "data")
    assert done.returncode == 0, done.stdout + done.stderr
    output = " ".join(done.stdout.split())
    # The examples ship with the command (package data): its own folder, whatever the working folder.
    assert f"Loading {EXAMPLES / 'knowledge'} into the knowledge store" in output
    # A heading titles its document or section; it is not a passage of its own.
    assert "4 added (11 passages)" in output
    assert "added knowledge/apollo-11.html (3 passages) Apollo 11" in output
    assert "3 verified, 1 disputed, 1 unverifiable" in output
    assert "The Paris Agreement was adopted in 2015 (not 2017)" in output
    assert "Reliability score 69/100" in output
    assert (first / "factcheck-demo.html").stat().st_size > 10_000
    _check_the_demo_page(chromium, tmp_path, first / "factcheck-demo.html")
    # The council example: the answer with the wrong year ranks last, its error classified and corrected.
    council = output.split("Council: ranking the answers in")[1]
    assert re.search(r"3 Response [A-C] assistant-beta 3\.00 MIXED 0 1 ", council)
    assert "Numerical/Statistical Error (1)" in council
    assert "The Eiffel Tower was completed in 1889 (not 1899)" in council
    assert (first / "factcheck-council-demo.html").stat().st_size > 10_000
    # The embedded default database, in the user's data directory (not the working folder).
    assert (tmp_path / "data" / "factcheck" / "factcheck.db").exists() and not (first / "factcheck.db").exists()
    # What the demo leaves in the folder it ran in is its two reports, both ignored by the checkout's .gitignore.
    left = sorted(path.name for path in first.iterdir())
    assert left == ["factcheck-council-demo.html", "factcheck-demo.html"]
    ignored = subprocess.run(["git", "check-ignore", "--no-index", *left], cwd=ROOT, capture_output=True, text=True)
    assert ignored.stdout.split() == left, ignored.stderr

    # A second clone on the same machine: the same per-user database, its examples somewhere else.
    second = tmp_path / "other-clone"
    shutil.copytree(EXAMPLES, second / "examples")
    again = run_demo(second, tmp_path / "data", "--examples", str(second / "examples"))
    assert again.returncode == 0, again.stdout + again.stderr
    output = " ".join(again.stdout.split())
    assert f"Loading {second / 'examples' / 'knowledge'} into the knowledge store" in output
    assert "0 added (0 passages), 4 already stored" in output
    assert "already stored knowledge/apollo-11.html (3 passages) Apollo 11" in output
    assert "Reliability score 69/100" in output
    # Nothing it prints or writes points into the first run's folder, or at any file:// copy of the documents.
    for text in (again.stdout, (second / "factcheck-demo.html").read_text()):
        assert str(first) not in text and str(EXAMPLES) not in text and "file://" not in text


def _check_the_demo_page(browser: Path, tmp_path: Path, report: Path) -> None:
    """The demo's HTML report as a reader sees it: a title cut at a word boundary with "…", each document named
    once (its title is its heading), each checker's evidence and each verdict marker shown once, no word broken
    in a table, the page as tall as what it shows: 3,058 px at 1280 px wide (4,414 px before: the evidence three
    times over, the annotated content twice)."""
    markup = report.read_text(encoding="utf-8")
    page = Page(markup)
    assert page.title == "Fact-check: Facts about the Eiffel Tower…"
    assert "The Eiffel Tower › The Eiffel Tower" not in markup and "›" not in page.text("sources")
    # The checker cites the sentence that states the other year (the grounding rules), not the first that names the treaty.
    evidence = (
        'The Paris Agreement says otherwise: "It was adopted on 12 December 2015 at the COP21 conference in Paris'
    )
    seen = measure_layout(browser, tmp_path, report, [evidence, "[VERIFIED]", "[DISPUTED]", "[UNVERIFIABLE]"])
    assert seen["shown"] == [1, 3, 1, 1] and seen["broken"] == [] and seen["page"] <= seen["view"], seen
    assert seen["height"] <= 3300, seen
