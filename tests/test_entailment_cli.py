"""`factcheck entail` as a real process against the running suite (SQLite), the agents answering from
the fake model server (local/entailment's JSON by default)."""

from __future__ import annotations

import json
import subprocess

import pytest

from factcheck.core.entailment_rules import LOW_RELIABILITY_NOTE, RELIABILITY_NOTE
from tests.conftest import suite_environment
from tests.fake_model_server import classify, default_answer, reply
from tests.processes import start_suite
from tests.test_cli import FACTCHECK, cli_environment

pytestmark = pytest.mark.e2e
MODEL = "fake/agents"
CLAIM = "All patients recovered within a week."
SOURCE = "The trial enrolled 40 patients. Many patients recovered within a week."


@pytest.fixture(scope="module")
def suite(fake_models, tmp_path_factory):
    database = tmp_path_factory.mktemp("entail-cli") / "factcheck.db"
    environment = {
        **suite_environment(fake_models, f"sqlite:///{database}"),
        "FACTCHECK_DEFAULT_ENTAILMENT_MODEL": MODEL,
    }
    running = start_suite(environment)
    yield running
    running.stop()


class Entail:
    """`factcheck entail` against the suite; `source` names a file holding SOURCE."""

    def __init__(self, gateway_target: str, source: str) -> None:
        self.gateway_target, self.source = gateway_target, source

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(FACTCHECK), "entail", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=cli_environment(self.gateway_target),
            timeout=120,
        )


@pytest.fixture
def entail(suite, fake_models, tmp_path) -> Entail:
    fake_models.reset()
    source = tmp_path / "source.txt"
    source.write_text(SOURCE)
    return Entail(suite.gateway_target, str(source))


def test_one_item_prints_verdict_confidence_reliability_and_the_auditors_reasons(entail):
    done = entail("--claim", CLAIM, "--source", entail.source, "--source-type", "anonymous forum post")
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("[1] NOT ENOUGH INFO") and "reliability LOW" in first
    assert "auditor: Ambiguity in quantifier 'many'" in done.stdout
    assert f"note: {LOW_RELIABILITY_NOTE}" in done.stdout


def test_json_prints_the_seeds_final_structure_per_item(entail, tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps({"claim": CLAIM, "source_excerpt": SOURCE, "source_type": "peer-reviewed journal article"})
        + "\n\n"
        + json.dumps({"claim": "The trial enrolled 40 patients.", "source_excerpt": SOURCE, "source_type": "news"})
        + "\n"
    )
    done = entail("--items", str(items), "--json")
    assert done.returncode == 0, done.stderr
    finals = [json.loads(line) for line in done.stdout.splitlines()]
    assert [list(f) for f in finals] == [
        ["claim", "final_verdict", "final_confidence", "entailment_confidence", "reliability_rating", "notes"]
    ] * 2
    assert finals[1]["claim"] == "The trial enrolled 40 patients." and finals[1]["final_verdict"] == "SUPPORTED"
    assert finals[0]["reliability_rating"] == "HIGH" and finals[0]["notes"][0] == RELIABILITY_NOTE


def test_a_failed_item_is_reported_and_fails_the_command(entail, fake_models):
    def answer(prompt: str) -> str:
        if classify(prompt) == "entail_judge" and "> The trial enrolled 40 patients." in prompt:
            return "SUPPORTED"
        return default_answer(prompt)

    fake_models.script(MODEL, reply(answer))
    lines = [
        json.dumps({"claim": CLAIM, "source": SOURCE, "source_type": "blog"}),
        json.dumps({"claim": "The trial enrolled 40 patients.", "source": SOURCE, "source_type": "blog"}),
    ]
    done = entail("--items", "-", "--json", stdin="\n".join(lines))
    assert done.returncode == 1
    assert len(done.stdout.splitlines()) == 1
    assert "item 2 failed: Entailment judge failed" in done.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (("--claim", "c"), "--claim, --source and --source-type are all needed"),
        (("--items", "/nonexistent/items.jsonl"), "cannot read"),
    ],
)
def test_bad_input_is_a_usage_error(entail, args, message):
    done = entail(*args)
    assert done.returncode == 2 and message in done.stderr


def test_an_invalid_item_shows_the_gateways_message(entail):
    done = entail("--claim", " ", "--source", entail.source, "--source-type", "blog")
    assert done.returncode == 2 and "entailment_config.items[0].claim must contain text" in done.stderr
