"""Grounding checkers end to end: the four services as processes, an `onnx/` checker (the shipped entailment
model mounted from a folder, FACTCHECK_ONNX_MODELS) and a MiniCheck-dialect checker on the scripted server
(FACTCHECK_MODEL_DIALECTS), measured by `factcheck eval` and run as a fact-check's checkers (with the majority
and with the weighted consensus); a folder the checker cannot use, or a name without one, refused before anything starts (INVALID_ARGUMENT naming the
field and the setting)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import pytest
from google.protobuf import json_format

from factcheck.v1 import evaluation_pb2
from tests.conftest import DIALECT_CHECKER, suite_environment
from tests.fake_model_server import FakeModelServer
from tests.onnx_models import shipped_nli_folder, tiny_model_folder
from tests.processes import Suite, start_suite
from tests.test_cli import FACTCHECK, cli_environment
from tests.test_weighted_consensus_runs import RELIABLE, WEAK, store_evaluation

pytestmark = pytest.mark.e2e

ONNX = "onnx/nli"
DIALECT = DIALECT_CHECKER


@pytest.fixture(scope="module")
def grounded(tmp_path_factory) -> Iterator[tuple[Suite, FakeModelServer, str]]:
    folder = tmp_path_factory.mktemp("grounding")
    nli = shipped_nli_folder(folder / "nli")
    broken = tiny_model_folder(folder / "broken", outputs=3).folder  # two labels on the card, three outputs
    with FakeModelServer() as models:
        env = {
            **suite_environment(models, f"sqlite:///{folder / 'grounding.db'}"),
            "FACTCHECK_ONNX_MODELS": json.dumps({"nli": str(nli), "broken": str(broken)}),
            "FACTCHECK_MODEL_DIALECTS": json.dumps({DIALECT: "minicheck"}),
            "FACTCHECK_ONNX_THREADS": "1",
            # Every run and evaluation uses the verification cache: its keys for these models are checked below.
            "FACTCHECK_CACHE_ENABLED": "true",
        }
        suite = start_suite(env)
        try:
            yield suite, models, f"sqlite:///{folder / 'grounding.db'}"
        finally:
            suite.stop()


def _factcheck(suite: Suite, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(FACTCHECK), *args],
        capture_output=True,
        text=True,
        env=cli_environment(suite.gateway_target),
        timeout=180,
    )


def test_eval_measures_an_onnx_checker_and_a_dialect_checker(grounded):
    suite, models, _ = grounded
    done = _factcheck(suite, "eval", "--json", "--checker", ONNX, "--checker", DIALECT, "--set", "factcheck-bench",
                      "--limit", "8", "--seed", "5")  # fmt: skip
    assert done.returncode == 0, done.stderr + suite.logs()[-3000:]
    evaluation = json_format.Parse(done.stdout.strip(), evaluation_pb2.Evaluation())
    assert evaluation.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE
    assert (evaluation.done, evaluation.total) == (16, 16)
    scored = {score.checker_model: score for score in evaluation.scores}
    assert set(scored) == {ONNX, DIALECT}
    for score in scored.values():
        assert score.items == 8 and score.unreadable_rate == 0 and score.failed == 0, score
    # The dialect checker asked the model's own prompt, one token each, with log-probabilities.
    asked = [request for request in models.requests if request.model == DIALECT]
    assert asked and all(r.kind == "minicheck" and r.body["max_tokens"] == 1 and r.body["logprobs"] for r in asked)

    done = _factcheck(suite, "usage", "--by", "model", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["model"]: row["usage"] for row in json.loads(done.stdout)["rows"]}
    assert int(rows[ONNX].get("calls", 0)) == 8 and int(rows[ONNX].get("totalTokens", 0)) == 0
    assert float(rows[ONNX].get("costUsd", 0)) == 0
    assert int(rows[DIALECT]["calls"]) == len(asked) and int(rows[DIALECT]["totalTokens"]) > 0


def test_a_fact_check_runs_with_grounding_checkers_against_the_knowledge_store(grounded, tmp_path):
    suite, _, _ = grounded
    source = tmp_path / "tower.txt"
    source.write_text("The Eiffel Tower in Paris was completed in 1889. It is 330 metres tall.\n", encoding="utf-8")
    added = _factcheck(suite, "kb", "add", str(source))
    assert added.returncode == 0, added.stderr
    content = "The Eiffel Tower was completed in 1889."
    done = _factcheck(suite, "check", "--json", "--checker", ONNX, "--checker", DIALECT, content)
    assert done.returncode == 0, done.stderr + suite.logs()[-3000:]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    checked = {
        event["checkerComplete"]["model"]: event["checkerComplete"] for event in events if "checkerComplete" in event
    }
    assert set(checked) == {ONNX, DIALECT}
    for model, event in checked.items():
        [verification] = event["verifications"]
        assert verification["checkerModel"] == model
        # Each read the stored passage and cites it by a verbatim quote (the gateway's citations).
        assert "Eiffel Tower in Paris was completed in 1889" in verification["citations"][0]["quote"], verification
        assert "P(supported)" in verification["evidence"]
    assert events[-1]["complete"]["status"] == "MESSAGE_STATUS_COMPLETE"

    # The same claim and evidence again: both verdicts come from the verification cache, keyed by the onnx/
    # model's files and by the dialect's prompt version and served model.
    again = _factcheck(suite, "check", "--json", "--checker", ONNX, "--checker", DIALECT, content)
    assert again.returncode == 0, again.stderr
    events = [json.loads(line) for line in again.stdout.splitlines()]
    cached = {
        e["checkerComplete"]["model"]: e["checkerComplete"]["verifications"] for e in events if "checkerComplete" in e
    }
    assert {model: [v.get("cached", False) for v in found] for model, found in cached.items()} == {
        ONNX: [True],
        DIALECT: [True],
    }


def test_a_weighted_consensus_weighs_grounding_checkers_by_their_evaluation(grounded):
    """The reliability-weighted consensus takes an onnx/ checker and a dialect checker as any other: the weights
    of the evaluation the run names, reported with the consensus (no fallback to the majority)."""
    suite, _, database_url = grounded
    store_evaluation(database_url, "eval-grounding", {ONNX: RELIABLE, DIALECT: WEAK})
    content = "The Eiffel Tower was completed in 1889."
    args = ["--checker", ONNX, "--checker", DIALECT, "--consensus", "weighted", "--evaluation", "eval-grounding"]
    done = _factcheck(suite, "check", "--json", *args, content)
    assert done.returncode == 0, done.stderr + suite.logs()[-3000:]
    assert "weighted consensus was not used" not in done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    [complete] = [event["allCheckersComplete"] for event in events if "allCheckersComplete" in event]
    weighting = complete["consensusWeighting"]
    assert weighting["evaluationId"] == "eval-grounding" and weighting["used"] == "CONSENSUS_WEIGHTED", weighting
    assert "fallback" not in weighting, weighting
    assert events[-1]["complete"]["status"] == "MESSAGE_STATUS_COMPLETE"


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("onnx/broken", "the folder FACTCHECK_ONNX_MODELS gives it"),
        (
            "onnx/nowhere",
            "no folder is configured for onnx/nowhere: add 'nowhere' and its folder to FACTCHECK_ONNX_MODELS",
        ),
    ],
)
def test_an_unusable_onnx_checker_is_refused_before_anything_starts(grounded, model, expected):
    suite, _, _ = grounded
    for args in (
        ["eval", "--checker", model, "--set", "factcheck-bench", "--limit", "2"],
        ["check", "--checker", model, "The Eiffel Tower was completed in 1889."],
    ):
        done = _factcheck(suite, *args)
        assert done.returncode == 2, (args, done.stderr)
        # One line says why; on a loaded machine the CLI may first have retried a call the gateway was slow to
        # answer, and said so (its own note), but nothing else may come before.
        *retried, line = done.stderr.strip().splitlines()
        assert all("connection to the gateway lost (" in note for note in retried), done.stderr
        assert line.startswith("factcheck: invalid request: ") and expected in line, done.stderr
        assert "checker_models[0]" in line
        if model == "onnx/broken":
            assert "the card does not match the model" in line
