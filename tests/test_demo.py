"""The README's first command: `factcheck demo`, offline on the built-in local/ models: the sample
checked, then the example answers ranked in council mode."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT
from tests.test_servers import _free_port_block

pytestmark = pytest.mark.e2e


def test_demo_checks_the_sample_against_the_example_knowledge(tmp_path):
    env = {
        key: value for key, value in os.environ.items() if not key.startswith("FACTCHECK_")
    }  # the embedded defaults, whatever the caller's environment says
    env["COLUMNS"] = "200"
    env["XDG_DATA_HOME"] = str(tmp_path / "data")  # not the user's own store
    env["PYTHONPATH"] = str(ROOT)  # this checkout's code, wherever the venv's editable install points
    done = subprocess.run(
        [str(Path(sys.executable).parent / "factcheck"), "demo", "--base-port", str(_free_port_block())],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    output = " ".join(done.stdout.split())
    assert "4 added (14 passages)" in output
    assert "3 verified, 1 disputed, 1 unverifiable" in output
    assert "The Paris Agreement was adopted in 2015 (not 2017)" in output
    assert "Reliability score 69/100" in output
    assert (tmp_path / "factcheck-demo.html").stat().st_size > 10_000
    # The council example: the answer with the wrong year ranks last, its error classified and corrected.
    council = output.split("Council: ranking the answers in")[1]
    assert re.search(r"3 Response [A-C] assistant-beta 3\.00 MIXED 0 1 ", council)
    assert "Numerical/Statistical Error (1)" in council
    assert "The Eiffel Tower was completed in 1889 (not 1899)" in council
    assert (tmp_path / "factcheck-council-demo.html").stat().st_size > 10_000
    # The embedded default database, in the user's data directory (not the working folder).
    assert (tmp_path / "data" / "factcheck" / "factcheck.db").exists() and not (tmp_path / "factcheck.db").exists()
