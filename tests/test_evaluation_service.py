"""EvaluationService end to end: the suite as processes, the checkers a scripted model server on loopback
and the built-in engines; SQLite and PostgreSQL. Scores, storage as items arrive, the ledger, tenants,
cancel and resume, the budget, the verification cache, and bad requests."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from factcheck.v1 import common_pb2, evaluation_pb2, evaluation_pb2_grpc, usage_pb2, usage_pb2_grpc
from tests.conftest import suite_environment
from tests.fake_model_server import delay, garbage, reply, verification_text
from tests.processes import start_suite
from tests.test_errors import details_of

pytestmark = pytest.mark.e2e

TOKENS = {"acme": "acme-token-0123456789", "globex": "globex-token-0123456789"}
PRICES = {"fake": {"input": 1.0, "output": 2.0}}
FAKE_CHECKER = "fake/checker-a"
V, D, U = common_pb2.VERDICT_VERIFIED, common_pb2.VERDICT_DISPUTED, common_pb2.VERDICT_UNVERIFIABLE


def auth(tenant: str = "acme"):
    return (("authorization", f"Bearer {TOKENS[tenant]}"),)


@pytest.fixture(scope="module")
def eval_suite(fake_models, suite_database):
    tokens = ",".join(f"{tenant}:{token}" for tenant, token in TOKENS.items())
    gateway = {"FACTCHECK_AUTH_TOKENS": tokens, "FACTCHECK_MODEL_PRICES": json.dumps(PRICES)}
    running = start_suite(suite_environment(fake_models, suite_database), per_service={"gateway": gateway})
    yield running
    running.stop()


@pytest.fixture
async def channel(eval_suite, fake_models):
    fake_models.reset()
    async with grpc.aio.insecure_channel(eval_suite.gateway_target) as opened:
        yield opened


def item(item_id: str, claim: str, label, *evidence: str) -> evaluation_pb2.LabelledClaim:
    return evaluation_pb2.LabelledClaim(
        id=item_id,
        claim=claim,
        label=label,
        evidence=[evaluation_pb2.LabelledEvidence(title=f"doc {n}", text=t) for n, t in enumerate(evidence)],
    )


PARIS = "Paris is the capital of France. It has about two million inhabitants."
ITEMS = [
    item("paris", "Paris is the capital of France.", V, PARIS),
    item("lyon", "Lyon is the capital of France.", D, PARIS),
    item("moon", "The Moon is made of basalt and anorthosite.", U, PARIS),
    item("people", "Paris has about two million inhabitants.", V, PARIS),
]


def by_claim_verdicts(answers: dict[str, str]):
    """A checker model that answers each claim by a word of it (others VERIFIED)."""

    def text_for(prompt: str) -> str:
        verdict = next((v for word, v in answers.items() if word in prompt), "VERIFIED")
        return verification_text(["claim_1"], {"claim_1": verdict})

    return reply(text_for)


def run_request(*models: str, items=ITEMS, **config) -> evaluation_pb2.RunEvaluationRequest:
    return evaluation_pb2.RunEvaluationRequest(
        config=evaluation_pb2.EvaluationConfig(
            checker_models=list(models),
            custom_sets=[evaluation_pb2.CustomEvaluationSet(name="capitals", items=items)],
            **config,
        )
    )


async def events_of(stream) -> list[evaluation_pb2.EvaluationEvent]:
    return [response.event async for response in stream]


def kinds(events) -> list[str]:
    return [event.WhichOneof("event") for event in events]


async def test_scores_every_checker_on_every_set_and_stores_it(channel, fake_models):
    fake_models.script(FAKE_CHECKER, by_claim_verdicts({"Lyon": "DISPUTED", "Moon": "DISPUTED"}))
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    request = run_request(FAKE_CHECKER, "local/checker-lexical")
    request.config.sets.append("factcheck-bench")
    request.config.limit = 3
    events = await events_of(service.RunEvaluation(request, metadata=auth(), timeout=120))

    assert kinds(events)[0] == "started" and kinds(events)[-1] == "finished"
    started = events[0].started
    assert [s.name for s in started.sets] == ["factcheck-bench", "capitals"]
    assert [s.items for s in started.sets] == [3, 3] and started.total == 12
    assert kinds(events).count("progress") == 12 and kinds(events).count("score") == 4
    finished = events[-1].finished
    assert finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE and finished.done == 12

    fake_on_capitals = next(s for s in finished.scores if s.checker_model == FAKE_CHECKER and s.set == "capitals")
    drawn = {e.progress.item_id for e in events if e.WhichOneof("event") == "progress" and e.progress.set == "capitals"}
    expected = {"paris": V, "lyon": D, "moon": D, "people": V}
    gold = {i.id: i.label for i in ITEMS}
    assert fake_on_capitals.items == 3 and fake_on_capitals.failed == 0
    assert fake_on_capitals.accuracy == pytest.approx(sum(expected[i] == gold[i] for i in drawn) / 3)
    assert sum(fake_on_capitals.confusion) == 3
    assert fake_on_capitals.usage.total_tokens > 0 and fake_on_capitals.usage.cost_usd > 0
    assert fake_on_capitals.latency.count == 3

    # Stored: GetEvaluation gives the same scores; the list shows it; the ledger has its calls.
    got = (
        await service.GetEvaluation(
            evaluation_pb2.GetEvaluationRequest(evaluation_id=finished.evaluation_id), metadata=auth()
        )
    ).evaluation
    assert list(got.scores) == list(finished.scores)
    listed = await service.ListEvaluations(evaluation_pb2.ListEvaluationsRequest(), metadata=auth())
    assert finished.evaluation_id in [e.evaluation_id for e in listed.evaluations]
    assert got.usage.cost_usd == pytest.approx(sum(s.usage.cost_usd for s in got.scores))
    usage = await usage_pb2_grpc.UsageServiceStub(channel).GetUsage(
        usage_pb2.GetUsageRequest(group_by=[usage_pb2.USAGE_GROUP_BY_MODE]), metadata=auth()
    )
    assert "evaluation" in [row.mode for row in usage.rows]

    # Another tenant sees none of it.
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await service.GetEvaluation(
            evaluation_pb2.GetEvaluationRequest(evaluation_id=finished.evaluation_id), metadata=auth("globex")
        )
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    others = await service.ListEvaluations(evaluation_pb2.ListEvaluationsRequest(), metadata=auth("globex"))
    assert finished.evaluation_id not in [e.evaluation_id for e in others.evaluations]


async def test_unreadable_answers_are_counted_as_wrong(channel, fake_models):
    fake_models.script(FAKE_CHECKER, reply("Happy to help! These all look fine to me."))
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    events = await events_of(service.RunEvaluation(run_request(FAKE_CHECKER), metadata=auth(), timeout=120))
    finished = events[-1].finished
    score = finished.scores[0]
    assert finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE
    assert score.items == 4 and score.unreadable_rate == 1.0 and score.accuracy == 0.0


async def test_failed_calls_are_not_scored_and_leave_it_partial(channel, fake_models):
    fake_models.script(FAKE_CHECKER, garbage())
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    events = await events_of(service.RunEvaluation(run_request(FAKE_CHECKER), metadata=auth(), timeout=120))
    finished = events[-1].finished
    assert finished.status == evaluation_pb2.EVALUATION_STATUS_PARTIAL
    assert "4 checker call(s) failed" in finished.error_message
    assert finished.scores[0].failed == 4 and finished.scores[0].items == 0 and finished.done == 0


async def test_cancel_keeps_what_was_judged_and_resume_asks_only_the_rest(channel, fake_models):
    fake_models.script(FAKE_CHECKER, delay(0.6, by_claim_verdicts({})))
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    stream = service.RunEvaluation(run_request(FAKE_CHECKER, concurrency=1), metadata=auth(), timeout=120)
    seen = []
    async for response in stream:
        seen.append(response.event)
        if response.event.WhichOneof("event") == "progress":
            break
    evaluation_id = seen[0].evaluation_id
    await service.CancelEvaluation(evaluation_pb2.CancelEvaluationRequest(evaluation_id=evaluation_id), metadata=auth())
    stream.cancel()
    stopped = await _wait_for_status(service, evaluation_id, evaluation_pb2.EVALUATION_STATUS_CANCELLED)
    assert 1 <= stopped.done < 4
    assert stopped.error_message.startswith("Cancelled by the caller; resuming the evaluation")
    assert "ResumeEvaluation" not in stopped.error_message
    asked_before = len(fake_models.requests_for(FAKE_CHECKER))

    fake_models.script(FAKE_CHECKER, by_claim_verdicts({}))
    resumed = await events_of(
        service.ResumeEvaluation(
            evaluation_pb2.ResumeEvaluationRequest(evaluation_id=evaluation_id), metadata=auth(), timeout=120
        )
    )
    assert resumed[0].started.done == stopped.done
    assert resumed[-1].finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE
    assert resumed[-1].finished.done == 4
    # Only the items without an answer were asked again (a call cut short by the cancel may count once more).
    asked_again = len(fake_models.requests_for(FAKE_CHECKER)) - asked_before
    assert 4 - stopped.done <= asked_again <= 4 - stopped.done + 1

    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await events_of(
            service.ResumeEvaluation(
                evaluation_pb2.ResumeEvaluationRequest(evaluation_id=evaluation_id), metadata=auth()
            )
        )
    assert raised.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def _wait_for_status(service, evaluation_id: str, status) -> evaluation_pb2.Evaluation:
    for _ in range(100):
        got = (
            await service.GetEvaluation(
                evaluation_pb2.GetEvaluationRequest(evaluation_id=evaluation_id), metadata=auth()
            )
        ).evaluation
        if got.status == status:
            return got
        await asyncio.sleep(0.1)
    raise AssertionError(f"evaluation stayed {got.status}")


async def test_a_spent_budget_stops_it_partial_and_a_larger_one_finishes_it(channel, fake_models):
    fake_models.script(FAKE_CHECKER, by_claim_verdicts({}))
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    request = run_request(FAKE_CHECKER, concurrency=1, budget=usage_pb2.RunBudget(max_tokens=1))
    events = await events_of(service.RunEvaluation(request, metadata=auth(), timeout=120))
    finished = events[-1].finished
    assert finished.status == evaluation_pb2.EVALUATION_STATUS_PARTIAL
    assert "budget" in finished.error_message and finished.done == 1
    resumed = await events_of(
        service.ResumeEvaluation(
            evaluation_pb2.ResumeEvaluationRequest(
                evaluation_id=finished.evaluation_id, budget=usage_pb2.RunBudget(max_tokens=1_000_000)
            ),
            metadata=auth(),
            timeout=120,
        )
    )
    assert resumed[-1].finished.status == evaluation_pb2.EVALUATION_STATUS_COMPLETE


async def test_a_repeated_evaluation_is_served_from_the_cache(channel, fake_models):
    fake_models.script(FAKE_CHECKER, by_claim_verdicts({"Lyon": "DISPUTED"}))
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    first = await events_of(
        service.RunEvaluation(run_request(FAKE_CHECKER, use_cache=True), metadata=auth(), timeout=120)
    )
    asked = len(fake_models.requests_for(FAKE_CHECKER))
    again = await events_of(
        service.RunEvaluation(run_request(FAKE_CHECKER, use_cache=True), metadata=auth(), timeout=120)
    )
    assert len(fake_models.requests_for(FAKE_CHECKER)) == asked  # nothing paid twice
    score, repeated = first[-1].finished.scores[0], again[-1].finished.scores[0]
    assert repeated.cached == 4 and repeated.usage.cost_usd == 0
    assert list(repeated.confusion) == list(score.confusion)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r.config.sets.append("no-such-set"), "unknown set 'no-such-set'"),
        (lambda r: r.config.ClearField("checker_models"), "checker_models must list 1 to 8 models"),
        (lambda r: r.config.checker_models.append("local/no-such-engine"), "config.checker_models[1]"),
        (
            lambda r: r.config.custom_sets[0].items.append(item("x", "A claim.", common_pb2.VERDICT_UNSPECIFIED)),
            "label must be VERIFIED, DISPUTED or UNVERIFIABLE",
        ),
        (lambda r: r.config.custom_sets[0].items.append(item("paris", "Again.", V)), "'paris' is used twice"),
        (lambda r: r.config.custom_sets[0].ClearField("items"), "holds no items"),
        (lambda r: r.config.custom_sets[0].items.append(item("blank", "   ", V)), "claim"),
        (lambda r: setattr(r.config.custom_sets[0], "name", "wice"), "shipped set's name"),
        (lambda r: setattr(r.config, "limit", 0), "config.limit must be between 1"),
    ],
)
async def test_bad_requests_are_invalid_argument(channel, change, message):
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    request = run_request("local/checker-lexical")
    change(request)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await events_of(service.RunEvaluation(request, metadata=auth(), timeout=30))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (raised.value.details() or "")


async def test_shipped_sets_are_listed(channel):
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    sets = (await service.ListEvaluationSets(evaluation_pb2.ListEvaluationSetsRequest(), metadata=auth())).sets
    assert [s.name for s in sets] == ["climate-fever", "factcheck-bench", "wice"]
    assert all(s.items > 0 and s.licence for s in sets)
    assert all("bench/" not in s.description and ".py" not in s.description for s in sets)  # no file of ours


# --- every item's answer, headlines, comparisons ------------------------------------------------


async def all_items(service, evaluation_id: str, page_size: int = 2, **filters) -> list[evaluation_pb2.EvaluationItem]:
    """Every answer ListEvaluationItems lists for these filters, page by page."""
    found, token = [], ""
    while True:
        page = await service.ListEvaluationItems(
            evaluation_pb2.ListEvaluationItemsRequest(
                evaluation_id=evaluation_id, page_size=page_size, page_token=token, **filters
            ),
            metadata=auth(),
        )
        assert len(page.items) <= page_size
        found += page.items
        token = page.next_page_token
        if not token:
            return found


async def test_every_answer_is_listed_with_what_the_checker_said(channel, fake_models):
    def answers(prompt: str) -> str:
        if "Lyon" in prompt:
            return verification_text(["claim_1"], {"claim_1": "DISPUTED"}, correction="Paris is the capital.")
        if "Moon" in prompt:
            return "Happy to help! These all look fine to me."
        return verification_text(["claim_1"], {"claim_1": "VERIFIED"})

    fake_models.script(FAKE_CHECKER, reply(answers))
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    events = await events_of(service.RunEvaluation(run_request(FAKE_CHECKER), metadata=auth(), timeout=120))
    evaluation_id = events[0].evaluation_id
    every = {item.item_id: item for item in await all_items(service, evaluation_id)}
    assert set(every) == {"paris", "lyon", "moon", "people"}
    lyon, moon, paris = every["lyon"], every["moon"], every["paris"]
    assert (lyon.claim, lyon.label, lyon.verdict, lyon.correct) == ("Lyon is the capital of France.", D, D, True)
    assert lyon.answer and lyon.correction == "Paris is the capital."
    assert lyon.HasField("latency_ms") and not lyon.cached and lyon.evidence_passages == 1
    assert lyon.usage.total_tokens > 0 and lyon.checker_model == FAKE_CHECKER and lyon.set == "capitals"
    # An unreadable answer has no verdict; what the model said is kept.
    assert (moon.unreadable, moon.verdict, moon.correct) == (True, common_pb2.VERDICT_UNSPECIFIED, False)
    assert moon.confidence == common_pb2.CONFIDENCE_UNSPECIFIED and "Happy to help" in moon.answer
    assert paris.correct and paris.verdict == V and paris.confidence != common_pb2.CONFIDENCE_UNSPECIFIED

    wrong = await all_items(service, evaluation_id, wrong_only=True)
    assert sorted(item.item_id for item in wrong) == ["moon"]  # the unreadable one; Lyon was rightly disputed
    labelled = await all_items(service, evaluation_id, label=V)
    assert sorted(item.item_id for item in labelled) == ["paris", "people"]
    assert await all_items(service, evaluation_id, checker_model="fake/other") == []
    assert await all_items(service, evaluation_id, failed_only=True) == []

    # The progress event of the unreadable answer carries no verdict either.
    progress = {e.progress.item_id: e.progress for e in events if e.WhichOneof("event") == "progress"}
    assert progress["moon"].verdict == common_pb2.VERDICT_UNSPECIFIED and progress["moon"].unreadable
    assert progress["lyon"].verdict == D and not progress["lyon"].unreadable

    for bad, field in (
        ({"wrong_only": True, "failed_only": True}, "wrong_only and failed_only"),
        ({"label": 99}, "label must be"),
        ({"page_token": "nope"}, "page_token"),
        ({"page_size": -1}, "page_size"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await service.ListEvaluationItems(
                evaluation_pb2.ListEvaluationItemsRequest(evaluation_id=evaluation_id, **bad), metadata=auth()
            )
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT and field in (raised.value.details() or "")
    with pytest.raises(grpc.aio.AioRpcError) as raised:  # another tenant's: as unknown
        await service.ListEvaluationItems(
            evaluation_pb2.ListEvaluationItemsRequest(evaluation_id=evaluation_id), metadata=auth("globex")
        )
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND


async def test_failed_calls_are_listed_with_why(channel, fake_models):
    fake_models.script(FAKE_CHECKER, garbage())
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    events = await events_of(service.RunEvaluation(run_request(FAKE_CHECKER), metadata=auth(), timeout=120))
    failed = await all_items(service, events[0].evaluation_id, failed_only=True, page_size=100)
    assert len(failed) == 4 and all(item.failed and item.error for item in failed)
    assert all(item.verdict == common_pb2.VERDICT_UNSPECIFIED and not item.correct for item in failed)
    progress = [e.progress for e in events if e.WhichOneof("event") == "progress"]
    assert all(p.failed and p.verdict == common_pb2.VERDICT_UNSPECIFIED for p in progress)
    # The reason names no RPC, and no raw error of the checker.
    reason = events[-1].finished.error_message
    assert "resuming the evaluation asks them again" in reason
    assert "ResumeEvaluation" not in reason and "UNAVAILABLE:" not in reason


async def test_cached_prompt_tokens_reach_each_score(channel, fake_models):
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "total_tokens": 110,
        "prompt_tokens_details": {"cached_tokens": 40},
    }
    fake_models.script(FAKE_CHECKER, reply(verification_text(["claim_1"], {"claim_1": "VERIFIED"}), usage=usage))
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    events = await events_of(service.RunEvaluation(run_request(FAKE_CHECKER), metadata=auth(), timeout=120))
    finished = events[-1].finished
    assert finished.usage.cached_tokens == 4 * 40
    assert finished.scores[0].usage.cached_tokens == 4 * 40
    items = await all_items(service, finished.evaluation_id, page_size=10)
    assert [item.usage.cached_tokens for item in items] == [40] * 4


async def test_the_list_gives_each_checkers_balanced_accuracy_per_set(channel, fake_models):
    fake_models.script(FAKE_CHECKER, by_claim_verdicts({"Lyon": "DISPUTED", "Moon": "VERIFIED"}))
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    events = await events_of(
        service.RunEvaluation(run_request(FAKE_CHECKER, "local/checker-lexical"), metadata=auth(), timeout=120)
    )
    finished = events[-1].finished
    listed = await service.ListEvaluations(evaluation_pb2.ListEvaluationsRequest(page_size=100), metadata=auth())
    [summary] = [e for e in listed.evaluations if e.evaluation_id == finished.evaluation_id]
    assert not summary.scores  # the scores stay GetEvaluation's
    assert [(h.checker_model, h.set) for h in summary.headlines] == [
        (FAKE_CHECKER, "capitals"),
        ("local/checker-lexical", "capitals"),
    ]
    for listed_headline, score in zip(summary.headlines, finished.scores):
        assert listed_headline.balanced_accuracy == pytest.approx(score.balanced_accuracy)
        assert (listed_headline.items, listed_headline.total, listed_headline.failed) == (score.items, 4, score.failed)
    assert summary.headlines[0].balanced_accuracy == pytest.approx((1 + 1 + 0) / 3)  # the Moon item is wrong
    assert list(finished.headlines) == list(summary.headlines)


async def test_two_evaluations_are_compared_on_the_items_both_judged(channel, fake_models):
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    fake_models.script(FAKE_CHECKER, by_claim_verdicts({"Lyon": "DISPUTED", "Moon": "UNVERIFIABLE"}))
    first = await events_of(service.RunEvaluation(run_request(FAKE_CHECKER), metadata=auth(), timeout=120))
    fake_models.script(FAKE_CHECKER, by_claim_verdicts({"Lyon": "VERIFIED", "Moon": "UNVERIFIABLE"}))
    second = await events_of(service.RunEvaluation(run_request(FAKE_CHECKER), metadata=auth(), timeout=120))
    a, b = first[-1].finished.evaluation_id, second[-1].finished.evaluation_id
    compared = await service.CompareEvaluations(
        evaluation_pb2.CompareEvaluationsRequest(evaluation_id=a, other_evaluation_id=b), metadata=auth()
    )
    [comparison] = compared.comparisons
    assert (comparison.checker_model, comparison.set, comparison.shared_items) == (FAKE_CHECKER, "capitals", 4)
    assert comparison.balanced_accuracy == pytest.approx(1.0)
    assert comparison.other_balanced_accuracy == pytest.approx((1 + 0 + 1) / 3)
    assert comparison.difference == pytest.approx(-1 / 3)
    # One DISPUTED item, which B gets wrong in every resample: the interval is that one point.
    assert comparison.difference_low == pytest.approx(-1 / 3) and comparison.difference_high == pytest.approx(-1 / 3)
    assert comparison.disagreements == 1 and compared.resamples == 2000
    [disagreement] = compared.disagreements
    assert (disagreement.item_id, disagreement.claim, disagreement.label) == (
        "lyon",
        "Lyon is the capital of France.",
        D,
    )
    assert (disagreement.verdict, disagreement.other_verdict) == (D, V)
    # The same evaluations give the same interval; an evaluation compared with itself, a zero one.
    again = await service.CompareEvaluations(
        evaluation_pb2.CompareEvaluationsRequest(evaluation_id=a, other_evaluation_id=b), metadata=auth()
    )
    assert again == compared
    same = await service.CompareEvaluations(
        evaluation_pb2.CompareEvaluationsRequest(evaluation_id=a, other_evaluation_id=a, max_disagreements=0),
        metadata=auth(),
    )
    assert (same.comparisons[0].difference_low, same.comparisons[0].difference_high) == (0.0, 0.0)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await service.CompareEvaluations(
            evaluation_pb2.CompareEvaluationsRequest(evaluation_id=a, other_evaluation_id=b), metadata=auth("globex")
        )
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND


async def test_an_unknown_evaluation_is_not_found_with_its_own_reason(channel):
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await service.GetEvaluation(evaluation_pb2.GetEvaluationRequest(evaluation_id="nope"), metadata=auth())
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    assert details_of(raised.value)["google.rpc.ErrorInfo"].reason == "EVALUATION_NOT_FOUND"


@pytest.mark.parametrize("engine", ["local/reporter", "local/generator", "local/title"])
async def test_engines_that_cannot_check_are_refused_as_checkers(channel, engine):
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await events_of(service.RunEvaluation(run_request(engine), metadata=auth(), timeout=30))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = raised.value.details() or ""
    assert f"'{engine.removeprefix('local/')}' is not a checker" in details
    named = details.split("the checker engines: ", 1)[1]
    assert "checker-lexical" in named and all(name not in named for name in ("reporter", "generator", "title"))
    unknown = run_request("local/no-such-engine")
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await events_of(service.RunEvaluation(unknown, metadata=auth(), timeout=30))
    available = (raised.value.details() or "").split("available: ", 1)[1]
    assert "checker" in available and all(name not in available for name in ("reporter", "generator", "title"))


async def test_a_spent_budget_says_what_the_ledger_says(channel, fake_models):
    fake_models.script(FAKE_CHECKER, delay(0.2, by_claim_verdicts({})))
    service = evaluation_pb2_grpc.EvaluationServiceStub(channel)
    request = run_request(FAKE_CHECKER, concurrency=2, budget=usage_pb2.RunBudget(max_tokens=1))
    events = await events_of(service.RunEvaluation(request, metadata=auth(), timeout=120))
    finished = events[-1].finished
    assert finished.status == evaluation_pb2.EVALUATION_STATUS_PARTIAL
    # Every call paid for is in the ledger before it ends, and the reason counts the same tokens.
    assert f"used {finished.usage.total_tokens:,} of 1 tokens" in finished.error_message
    got = (
        await service.GetEvaluation(
            evaluation_pb2.GetEvaluationRequest(evaluation_id=finished.evaluation_id), metadata=auth()
        )
    ).evaluation
    assert got.usage == finished.usage
