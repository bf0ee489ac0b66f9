"""A binary checker's threshold fitted by an evaluation and used by a run, end to end: the four services as
processes, an `onnx/` checker (a tiny model the tests build, tests/onnx_models.py) and a MiniCheck-dialect
checker on the scripted server whose P(yes) per claim the test chooses; SQLite and PostgreSQL.

The fitted threshold equals an independent recomputation (every candidate's balanced accuracy, as fractions,
ties to the middle), a run and an evaluation naming the evaluation use it and say so, the fit reads only a
shipped set's dev half, and everything that cannot be fitted or used is refused with INVALID_ARGUMENT saying
why."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from fractions import Fraction

import grpc
import pytest

from factcheck.evaluation.sets import load_shipped_set
from factcheck.v1 import (
    checker_pb2,
    checker_pb2_grpc,
    common_pb2,
    evaluation_pb2,
    evaluation_pb2_grpc,
    factcheck_pb2,
    factcheck_pb2_grpc,
)
from tests.conftest import DIALECT_CHECKER, suite_environment
from tests.fake_model_server import FakeModelServer, minicheck, minicheck_document_and_claim
from tests.onnx_models import tiny_model_folder
from tests.processes import Suite, start_suite
from tests.test_cli import FACTCHECK, cli_environment, flat

pytestmark = pytest.mark.e2e

ONNX = "onnx/tiny"
DIALECT = DIALECT_CHECKER
V, U = common_pb2.VERDICT_VERIFIED, common_pb2.VERDICT_UNVERIFIABLE
EVIDENCE = "the eiffel tower in paris was completed in 1889 and it is 330 metres tall"
# The dialect model's P(yes) for each claim, by a word of it, and each item's label. The best balanced
# accuracy (3/4) is reached at two candidates, 0.72 and 0.85: the lower middle one, 0.72, is fitted.
FIT_ITEMS = {
    "Alpha": (0.95, V),
    "Bravo": (0.85, V),
    "Charlie": (0.80, U),
    "Delta": (0.72, V),
    "Echo": (0.65, U),
    "Foxtrot": (0.55, U),
    "Golf": (0.30, U),
    "Hotel": (0.20, V),
}
# Claims of other sets and runs: India reads 0.65 (VERIFIED at 0.5, not at 0.72), Juliet 0.9.
OTHER = {"India": 0.65, "Juliet": 0.9}
P_YES = {**{word: p for word, (p, _) in FIT_ITEMS.items()}, **OTHER}
FIT_SET = "thresholds"


def p_yes(document: str, claim: str) -> float:
    return next((p for word, p in P_YES.items() if word in claim), 0.5)


def labelled(word: str, label) -> evaluation_pb2.LabelledClaim:
    return evaluation_pb2.LabelledClaim(
        id=word.lower(),
        claim=f"{word} says the eiffel tower was completed in 1889",
        label=label,
        evidence=[evaluation_pb2.LabelledEvidence(title="Almanac", text=EVIDENCE)],
    )


def custom_set(name: str, items: dict) -> evaluation_pb2.CustomEvaluationSet:
    return evaluation_pb2.CustomEvaluationSet(name=name, items=[labelled(word, label) for word, label in items.items()])


FITTING = custom_set(FIT_SET, {word: label for word, (_, label) in FIT_ITEMS.items()})


def expected_threshold(pairs: list[tuple[float | None, bool]]) -> tuple[float, Fraction]:
    """The threshold of best balanced accuracy by brute force over every distinct probability, computed as
    fractions, the lower middle of the tied ones; and its balanced accuracy. `pairs`: (P(supported) or None,
    labelled VERIFIED)."""
    positives = sum(1 for _, verified in pairs if verified)
    negatives = len(pairs) - positives
    scores = {}
    for threshold in sorted({p for p, _ in pairs if p is not None}):
        hits = sum(1 for p, verified in pairs if verified and p is not None and p >= threshold)
        rejections = sum(1 for p, verified in pairs if not verified and (p is None or p < threshold))
        scores[threshold] = (Fraction(hits, positives) + Fraction(rejections, negatives)) / 2
    best = max(scores.values())
    tied = [threshold for threshold, score in scores.items() if score == best]
    return tied[(len(tied) - 1) // 2], best


@pytest.fixture(scope="module")
def models() -> Iterator[FakeModelServer]:
    with FakeModelServer() as server:
        yield server


@pytest.fixture(scope="module")
def suite(models, suite_database, tmp_path_factory) -> Iterator[Suite]:
    folder = tmp_path_factory.mktemp("thresholds")
    tiny = tiny_model_folder(folder / "tiny").folder
    env = {
        **suite_environment(models, suite_database),
        "FACTCHECK_ONNX_MODELS": json.dumps({"tiny": str(tiny)}),
        "FACTCHECK_MODEL_DIALECTS": json.dumps({DIALECT: "minicheck"}),
        "FACTCHECK_ONNX_THREADS": "1",
    }
    running = start_suite(env)
    yield running
    running.stop()


@pytest.fixture
async def channel(suite, models):
    models.reset()
    models.script(DIALECT, minicheck(p_yes))
    async with grpc.aio.insecure_channel(suite.gateway_target) as opened:
        yield opened


async def evaluate(channel, **config) -> evaluation_pb2.Evaluation:
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    request = evaluation_pb2.RunEvaluationRequest(config=evaluation_pb2.EvaluationConfig(**config))
    events = [response.event async for response in service.RunEvaluation(request, timeout=120)]
    assert events[-1].WhichOneof("event") == "finished", events[-1]
    return events[-1].finished


async def answers(channel, evaluation_id: str, checker: str) -> list[evaluation_pb2.EvaluationItem]:
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    found, token = [], ""
    while True:
        page = await service.ListEvaluationItems(
            evaluation_pb2.ListEvaluationItemsRequest(
                evaluation_id=evaluation_id, checker_model=checker, page_size=100, page_token=token
            )
        )
        found += page.items
        token = page.next_page_token
        if not token:
            return found


async def refused(call) -> str:
    """The details of a call refused with INVALID_ARGUMENT."""
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT, raised.value.details()
    return raised.value.details() or ""


@pytest.fixture(scope="module")
def fitted_evaluation() -> dict:
    """The fitting evaluation's id, shared by the tests after the first (per backend)."""
    return {}


async def test_fits_each_checkers_threshold_as_an_independent_recomputation_does(channel, fitted_evaluation):
    finished = await evaluate(channel, checker_models=[DIALECT, ONNX], custom_sets=[FITTING], fit_thresholds=True)
    assert finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE and finished.fit_thresholds
    fitted = {found.checker_model: found for found in finished.fitted_thresholds}
    assert list(fitted) == [DIALECT, ONNX]

    # The dialect: the threshold follows from the probabilities the test scripted, nothing the suite stored.
    threshold, best = expected_threshold([(p, label == V) for p, label in FIT_ITEMS.values()])
    dialect = fitted[DIALECT]
    assert (threshold, best) == (0.72, Fraction(3, 4))
    assert dialect.threshold == pytest.approx(threshold, abs=1e-9)
    assert dialect.balanced_accuracy == pytest.approx(float(best))
    assert dialect.criterion == evaluation_pb2.THRESHOLD_CRITERION_BALANCED_ACCURACY
    assert (dialect.set, dialect.items, dialect.verified_items, dialect.fixed_items) == (FIT_SET, 8, 4, 0)
    assert dialect.candidates == 8 and not dialect.HasField("error")
    # At the model's own threshold, 0.5: Alpha, Bravo, Delta right, Golf right: (3/4 + 1/4) / 2.
    assert (dialect.evaluated_threshold, dialect.evaluated_balanced_accuracy) == (0.5, pytest.approx(0.5))
    # Every answer stored the probability it was read from, what the log-probabilities imply.
    stored = await answers(channel, finished.evaluation_id, DIALECT)
    assert {item.item_id: round(item.support_probability, 9) for item in stored} == {
        word.lower(): p for word, (p, _) in FIT_ITEMS.items()
    }
    assert {item.support_threshold for item in stored} == {0.5}

    # The onnx/ model (random weights): the fit equals the brute force over its stored probabilities.
    onnx = await answers(channel, finished.evaluation_id, ONNX)
    assert len(onnx) == 8 and all(item.HasField("support_probability") for item in onnx)
    threshold, best = expected_threshold([(item.support_probability, item.label == V) for item in onnx])
    assert fitted[ONNX].threshold == threshold
    assert fitted[ONNX].balanced_accuracy == pytest.approx(float(best))

    # Stored with the evaluation: GetEvaluation and ListEvaluations give the same.
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    got = await service.GetEvaluation(evaluation_pb2.GetEvaluationRequest(evaluation_id=finished.evaluation_id))
    assert list(got.evaluation.fitted_thresholds) == list(finished.fitted_thresholds)
    listed = await service.ListEvaluations(evaluation_pb2.ListEvaluationsRequest(page_size=100))
    [summary] = [e for e in listed.evaluations if e.evaluation_id == finished.evaluation_id]
    assert list(summary.fitted_thresholds) == list(finished.fitted_thresholds)
    fitted_evaluation["id"] = finished.evaluation_id
    fitted_evaluation["dialect"] = dialect.threshold
    fitted_evaluation["onnx"] = fitted[ONNX].threshold


def _run_request(evaluation_id: str | None, **options) -> factcheck_pb2.RunRequest:
    config = factcheck_pb2.FactCheckConfig(
        **options,
        content_to_check="India says the eiffel tower was completed in 1889. Juliet says it is 330 metres tall.",
        checker_models=[DIALECT, ONNX],
        sources=[common_pb2.Source(id="almanac", title="Almanac", text=EVIDENCE)],
        use_knowledge_store=False,
    )
    if evaluation_id is not None:
        config.threshold_evaluation_id = evaluation_id
    return factcheck_pb2.RunRequest(question="Check it", mode=factcheck_pb2.MODE_FACT_CHECK, mode_config=config)


async def _run(channel, evaluation_id: str | None, **options) -> tuple[list, factcheck_pb2.FactCheckResult]:
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
    request = _run_request(evaluation_id, **options)
    events = [response.event async for response in gateway.Run(request, timeout=120)]
    assert events[-1].complete.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE, events[-1]
    result = await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))
    return events, result.result


def _dialect_verdicts(result: factcheck_pb2.FactCheckResult) -> dict[str, common_pb2.ClaimVerification]:
    [checker] = [c for c in result.verification.checkers if c.model == DIALECT]
    claims = {claim.id: claim.claim for claim in result.extraction.claims}
    return {claims[v.claim_id].split()[0]: v for v in checker.verifications}


async def test_a_run_naming_the_evaluation_uses_its_thresholds_and_says_so(channel, fitted_evaluation, suite):
    evaluation_id = fitted_evaluation["id"]
    events, result = await _run(channel, evaluation_id)
    assert events[0].factcheck_start.config.threshold_evaluation_id == evaluation_id
    by_model = {checker.model: checker for checker in result.verification.checkers}
    for model, key in ((DIALECT, "dialect"), (ONNX, "onnx")):
        used = by_model[model].threshold
        assert (used.checker_model, used.evaluation_id, used.fitted_on) == (model, evaluation_id, FIT_SET)
        assert used.threshold == fitted_evaluation[key]
        assert {v.support_threshold for v in by_model[model].verifications} == {fitted_evaluation[key]}
    verdicts = _dialect_verdicts(result)
    # India reads 0.65: below the fitted 0.72, so not VERIFIED; Juliet's 0.9 is.
    assert verdicts["India"].verdict == U and verdicts["India"].support_probability == pytest.approx(0.65)
    assert verdicts["Juliet"].verdict == V
    # The checker_complete events carry the same.
    [event] = [e.checker_complete for e in events if e.checker_complete.model == DIALECT]
    assert {v.support_threshold for v in event.verifications} == {fitted_evaluation["dialect"]}

    # The same run without the evaluation: each model's own threshold, which the result names as its own.
    _, own = await _run(channel, None)
    own_thresholds = {checker.model: checker.threshold for checker in own.verification.checkers}
    assert own_thresholds[DIALECT].threshold == 0.5 and own_thresholds[DIALECT].evaluation_id == ""
    assert own_thresholds[ONNX].threshold == 0.5
    assert _dialect_verdicts(own)["India"].verdict == V

    # `factcheck show` says which threshold each checker used.
    shown = subprocess.run(
        [str(FACTCHECK), "show", result.message_id],
        capture_output=True,
        text=True,
        env=cli_environment(suite.gateway_target),
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    assert f"Thresholds: {DIALECT} 0.72 (fitted on {FIT_SET}, evaluation {evaluation_id})" in flat(shown.stdout)


async def test_a_pipelined_run_sends_the_thresholds_with_its_batches(channel, fitted_evaluation):
    _, result = await _run(channel, fitted_evaluation["id"], pipelined=True)
    by_model = {checker.model: checker for checker in result.verification.checkers}
    assert by_model[DIALECT].threshold.threshold == fitted_evaluation["dialect"]
    assert by_model[DIALECT].threshold.evaluation_id == fitted_evaluation["id"]
    assert {v.support_threshold for v in by_model[ONNX].verifications} == {fitted_evaluation["onnx"]}
    assert _dialect_verdicts(result)["India"].verdict == U


async def test_an_evaluation_naming_it_measures_the_thresholds_on_other_items(channel, fitted_evaluation):
    evaluation_id = fitted_evaluation["id"]
    holdout = custom_set("holdout", {"India": U, "Juliet": V})
    finished = await evaluate(
        channel, checker_models=[DIALECT], custom_sets=[holdout], threshold_evaluation_id=evaluation_id
    )
    assert finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE
    assert finished.threshold_evaluation_id == evaluation_id
    [used] = finished.checker_thresholds
    assert (used.checker_model, used.threshold, used.fitted_on) == (DIALECT, fitted_evaluation["dialect"], FIT_SET)
    stored = {item.item_id: item for item in await answers(channel, finished.evaluation_id, DIALECT)}
    assert {item.support_threshold for item in stored.values()} == {fitted_evaluation["dialect"]}
    assert stored["india"].verdict == U and stored["india"].correct and stored["juliet"].correct
    [score] = finished.scores
    assert score.balanced_accuracy == 1.0

    # Measured on the items they were fitted on: refused.
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    request = evaluation_pb2.RunEvaluationRequest(
        config=evaluation_pb2.EvaluationConfig(
            checker_models=[DIALECT], custom_sets=[FITTING], threshold_evaluation_id=evaluation_id
        )
    )
    details = await refused(_first(service.RunEvaluation(request)))
    assert details == f"config.sets: {DIALECT}'s threshold was fitted on {FIT_SET}: measure it on another set"


async def _first(stream):
    async for response in stream:
        return response


async def test_a_fit_on_a_shipped_sets_dev_half_never_reads_its_test_half(channel, models):
    dev = {item.claim for item in load_shipped_set("wice:dev")}
    test = {item.claim for item in load_shipped_set("wice:test")}
    assert dev and test and not dev & test
    finished = await evaluate(
        channel, checker_models=[DIALECT], sets=["wice:dev"], limit=12, seed=3, fit_thresholds=True
    )
    assert finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE
    [summary] = finished.sets
    assert (summary.name, summary.items, summary.available) == ("wice:dev", 12, len(dev))
    asked = {minicheck_document_and_claim(r.prompt)[1] for r in models.requests_for(DIALECT)}
    assert asked and asked <= dev and not asked & test
    stored = await answers(channel, finished.evaluation_id, DIALECT)
    threshold, _ = expected_threshold([(item.support_probability, item.label == V) for item in stored])
    [fitted] = finished.fitted_thresholds
    assert fitted.set == "wice:dev" and fitted.threshold == threshold

    # Measured on the whole set (which holds the dev half): refused; on the test half: measured.
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    whole = evaluation_pb2.RunEvaluationRequest(
        config=evaluation_pb2.EvaluationConfig(
            checker_models=[DIALECT], sets=["wice"], limit=2, threshold_evaluation_id=finished.evaluation_id
        )
    )
    details = await refused(_first(service.RunEvaluation(whole)))
    assert "fitted on wice:dev, which is part of wice: measure it on wice:test" in details
    measured = await evaluate(
        channel, checker_models=[DIALECT], sets=["wice:test"], limit=3, threshold_evaluation_id=finished.evaluation_id
    )
    assert measured.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE
    assert measured.checker_thresholds[0].threshold == fitted.threshold


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (
            dict(checker_models=["local/checker"], custom_sets=[FITTING]),
            "config.checker_models[0]: local/checker has no threshold to fit",
        ),
        (
            dict(checker_models=[DIALECT], sets=["wice:dev"], custom_sets=[FITTING]),
            "fits a threshold on one set: name exactly one",
        ),
        (
            dict(checker_models=[DIALECT], sets=["wice"]),
            "config.sets[0]: a threshold is never fitted on a whole shipped set",
        ),
        (dict(checker_models=[DIALECT], sets=["wice:test"]), "config.sets[0]: wice:test is a test half"),
        (
            dict(checker_models=[DIALECT], custom_sets=[custom_set("all-true", {"Alpha": V, "Bravo": V})]),
            "are all labelled VERIFIED",
        ),
    ],
    ids=["not-binary", "two-sets", "whole-set", "test-half", "one-label"],
)
async def test_what_cannot_be_fitted_is_refused(channel, config, expected):
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    request = evaluation_pb2.RunEvaluationRequest(config=evaluation_pb2.EvaluationConfig(fit_thresholds=True, **config))
    assert expected in await refused(_first(service.RunEvaluation(request)))


async def test_a_run_naming_an_evaluation_without_thresholds_for_it_is_refused(channel, fitted_evaluation):
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
    plain = await evaluate(channel, checker_models=[DIALECT], custom_sets=[custom_set("plain", {"India": U})])

    async def run(evaluation_id: str, checkers=(DIALECT,)) -> str:
        request = _run_request(evaluation_id)
        del request.mode_config.checker_models[:]
        request.mode_config.checker_models.extend(checkers)
        return await refused(_first(gateway.Run(request)))

    assert "there is no evaluation 'no-such-evaluation' of yours" in await run("no-such-evaluation")
    assert f"evaluation {plain.evaluation_id} fitted no thresholds: it was not asked to" in await run(
        plain.evaluation_id
    )
    details = await run(fitted_evaluation["id"], ["local/checker"])
    assert details.startswith("mode_config.threshold_evaluation_id: ")
    assert (
        f"fitted no threshold for any of the checkers local/checker (it fitted thresholds for: {DIALECT}, {ONNX})"
        in (details)
    )


async def test_the_checker_refuses_a_threshold_for_a_checker_that_reads_none(suite):
    async with grpc.aio.insecure_channel(suite.services["checker"].target) as opened:
        checker = checker_pb2_grpc.CheckerServiceStub(opened)
        claim = common_pb2.Claim(
            id="claim_1", claim="The tower is tall.", context="The tower is tall.", type=common_pb2.CLAIM_TYPE_TECHNICAL
        )
        for model, threshold, expected in (
            ("local/checker", 0.6, "local/checker does not read a probability against a threshold"),
            (DIALECT, 1.5, "support_threshold is a probability, from 0 to 1 (got 1.5)"),
        ):
            request = checker_pb2.VerifyRequest(model=model, claims=[claim], support_threshold=threshold)
            assert expected in await refused(checker.Verify(request, timeout=30))


def test_the_command_line_fits_shows_and_exports_thresholds(suite, models, tmp_path):
    models.reset()
    models.script(DIALECT, minicheck(p_yes))
    items = tmp_path / "mine.jsonl"
    items.write_text(
        "\n".join(
            json.dumps(
                {
                    "id": word.lower(),
                    "claim": f"{word} says so",
                    "evidence": [EVIDENCE],
                    "label": "VERIFIED" if label == V else "UNVERIFIABLE",
                }
            )
            for word, (_, label) in FIT_ITEMS.items()
        ),
        encoding="utf-8",
    )
    env = cli_environment(suite.gateway_target)

    def factcheck(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(FACTCHECK), *args], capture_output=True, text=True, env=env, timeout=120)

    done = factcheck("eval", "--fit-threshold", "--checker", DIALECT, "--set", str(items))
    assert done.returncode == 0, done.stderr
    assert "Fitted thresholds" in done.stdout and "0.72" in done.stdout
    listed = json.loads(factcheck("eval", "list", "--json").stdout)
    evaluation_id = listed["evaluations"][0]["evaluationId"]
    exported = factcheck("eval", "show", evaluation_id, "--jsonl", "-")
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    assert {round(r["support_probability"], 9) for r in records} == {p for p, _ in FIT_ITEMS.values()}
    assert {r["support_threshold"] for r in records} == {0.5}

    refused_cli = factcheck("eval", "--fit-threshold", "--checker", "local/checker", "--set", str(items))
    assert refused_cli.returncode == 2
    assert "local/checker has no threshold to fit" in refused_cli.stderr
    shipped = {found["name"]: found for found in json.loads(factcheck("eval", "sets", "--json").stdout)["sets"]}
    assert (shipped["wice"]["devItems"], shipped["wice"]["testItems"]) == (178, 180)
