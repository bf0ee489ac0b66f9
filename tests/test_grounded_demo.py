"""The demo's own knowledge, checked as a new user would (`factcheck kb add` the example folder, then `factcheck
check`), with the built-in checkers: a verdict never vouches for what its evidence does not say (issue 40's
first table).

- "Apollo 11 landed on the Moon in 1972.": the knowledge gives another year for the same landing: DISPUTED, the
  correction puts 1969 in place of 1972 and cites the sentence that states it.
- "Apollo 11 was the first crewed mission to land on Mars.": another place for the same landing: DISPUTED,
  corrected to the Moon.
- "The Eiffel Tower is in Berlin.": corrected to Paris, from the sentence about where the tower is (not its
  height).
- "The Eiffel Tower was completed in 1889.": VERIFIED, citing the sentence that holds the year.
And the claim's type: a year is a date.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import Suite, start_suite
from tests.test_cli import FACTCHECK, cli_environment, events_of

pytestmark = pytest.mark.e2e

KNOWLEDGE = Path(__file__).resolve().parent.parent / "cli" / "factcheck_cli" / "examples" / "knowledge"
CHECKERS = ("local/checker", "local/checker-lexical", "local/checker-overlap")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Suite]:
    database = tmp_path_factory.mktemp("grounded-demo") / "factcheck.db"
    suite = start_suite({"FACTCHECK_DATABASE_URL": f"sqlite:///{database}"})
    try:
        added = factcheck(suite, "kb", "add", str(KNOWLEDGE))
        assert added.returncode == 0, added.stderr
        yield suite
    finally:
        suite.stop()


def factcheck(suite: Suite, *args: str) -> subprocess.CompletedProcess:
    env = cli_environment(suite.gateway_target)
    return subprocess.run([str(FACTCHECK), *args], capture_output=True, text=True, env=env, timeout=180)


def check(suite: Suite, claim: str) -> dict:
    """The stored result of `factcheck check CLAIM` with every built-in checker (show --json)."""
    args = ["check", "--json", *(flag for model in CHECKERS for flag in ("--checker", model)), claim]
    done = factcheck(suite, *args)
    assert done.returncode in (0, 1), done.stderr
    message_id = events_of(done.stdout)[0]["messageId"]
    shown = factcheck(suite, "show", "--json", message_id)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def verifications(result: dict) -> list[dict]:
    return [v for checker in result["verification"]["checkers"] for v in checker["verifications"]]


@pytest.mark.parametrize(
    ("claim", "correction", "quote"),
    [
        (
            "Apollo 11 landed on the Moon in 1972.",
            "Apollo 11 landed on the Moon in 1969 (not 1972)",
            "The lunar module Eagle landed on 20 July 1969.",
        ),
        (
            "Apollo 11 was the first crewed mission to land on Mars.",
            "Apollo 11 was the first crewed mission to land on the Moon (not Mars)",
            "Apollo 11 was the first crewed mission to land on the Moon.",
        ),
        ("The Eiffel Tower is in Berlin.", "The Eiffel Tower is in Paris (not Berlin)", "in Paris"),
    ],
)
def test_another_value_of_the_same_attribute_is_disputed_and_corrected_with_it(suite, claim, correction, quote):
    result = check(suite, claim)
    [consensus] = result["verification"]["consensus"]
    assert consensus["consensusVerdict"] == "VERDICT_DISPUTED"
    judged = verifications(result)
    assert len(judged) == len(CHECKERS)
    for verification in judged:
        assert verification["verdict"] == "VERDICT_DISPUTED", verification
        assert verification["correction"].startswith(correction), verification
        assert verification["confidence"] in ("CONFIDENCE_HIGH", "CONFIDENCE_MEDIUM")
        [citation] = verification["citations"]
        assert quote in citation["quote"], verification
        # Never a sentence about something else: the height is not where the tower is.
        assert "330 metres" not in verification["correction"]


def test_a_stated_claim_is_verified_citing_the_sentence_that_holds_its_year(suite):
    result = check(suite, "The Eiffel Tower was completed in 1889.")
    [consensus] = result["verification"]["consensus"]
    assert consensus["consensusVerdict"] == "VERDICT_VERIFIED"
    for verification in verifications(result):
        assert verification["verdict"] == "VERDICT_VERIFIED", verification
        [citation] = verification["citations"]
        assert "completed in 1889" in citation["quote"], verification
    [claim] = result["extraction"]["claims"]
    assert claim["type"] == "CLAIM_TYPE_DATE"
