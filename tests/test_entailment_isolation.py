"""Agent isolation: no agent's prompt holds what it must not see, by construction (each input
message has only its agent's fields) and in the prompts actually sent; and the reliability rating
never changes a verdict or a confidence, whatever it is and even when the agent fails."""

from __future__ import annotations

import itertools

import pytest

from factcheck.core.entailment_agents import AgentFailed, AgentModels, judge_item
from factcheck.core.entailment_rules import aggregate
from factcheck.kit.settings import Settings
from factcheck.models.client import ModelClient
from factcheck.models.errors import ModelError
from factcheck.v1 import entailment_pb2 as pb
from factcheck_checker.entailment.agents import run_agent
from tests.fake_model_server import FakeModelServer, default_reply, fail, reply

CLAIM = "Lake Zorvath freezes over every winter."
RELEVANT = "Lake Zorvath freezes over every winter, locals say."
UNRELATED = "The quarry opened in Qelmar township in 1920."
EXCERPT = f"{RELEVANT} {UNRELATED}"
SOURCE_TYPE = "Xantheum regional almanac"
MODEL = "fake/agents"


@pytest.fixture(scope="module")
def fake_models():
    with FakeModelServer() as server:
        yield server


@pytest.fixture
async def client(fake_models):
    fake_models.reset()
    settings = Settings(model_base_url=fake_models.base_url, model_max_retries=0, stage_timeout_ms=10_000)
    async with ModelClient(settings) as model_client:
        yield model_client


async def _judge(client, item=None):
    async def call(request):
        try:
            return await run_agent(client, request, 10)
        except ModelError as error:
            raise AgentFailed(error.message) from None

    return await judge_item(
        item or pb.EntailmentItem(claim=CLAIM, source_excerpt=EXCERPT, source_type=SOURCE_TYPE),
        AgentModels(*(MODEL,) * 4),
        call,
    )


def _prompts(fake_models) -> dict[str, str]:
    return {request.kind: request.prompt for request in fake_models.requests}


def test_each_agent_input_holds_only_what_its_agent_may_see():
    fields = {
        name: {f.name for f in message.DESCRIPTOR.fields}
        for name, message in (
            ("extractor", pb.ExtractorInput),
            ("reliability", pb.ReliabilityInput),
            ("judge", pb.JudgeInput),
            ("auditor", pb.AuditorInput),
        )
    }
    assert fields == {
        "extractor": {"claim", "source_excerpt"},
        "reliability": {"source_type"},
        "judge": {"claim", "statements"},
        "auditor": {"claim", "source_excerpt", "judge_verdict", "judge_confidence"},
    }
    assert {f.name for f in pb.RunEntailmentAgentRequest.DESCRIPTOR.oneofs_by_name["input"].fields} == set(fields)


async def test_no_prompt_contains_what_its_agent_must_not_see(client, fake_models):
    outcome = await _judge(client)
    assert outcome.error is None
    prompts = _prompts(fake_models)
    assert set(prompts) == {"entail_extractor", "entail_reliability", "entail_judge", "entail_auditor"}

    extractor = prompts["entail_extractor"]
    assert f"> {CLAIM}" in extractor and f"> {EXCERPT}" in extractor
    assert "Xantheum" not in extractor

    reliability = prompts["entail_reliability"]
    assert f"> {SOURCE_TYPE}" in reliability
    assert not any(word in reliability for word in ("Zorvath", "Qelmar", "freezes", "quarry"))

    judge = prompts["entail_judge"]
    assert f"> {CLAIM}" in judge and RELEVANT in judge  # the extracted statement
    assert not any(word in judge for word in ("Qelmar", "quarry", "Xantheum"))  # the rest of the excerpt, the source

    auditor = prompts["entail_auditor"]
    assert f"> {CLAIM}" in auditor and f"> {EXCERPT}" in auditor and "JUDGE VERDICT: " in auditor
    assert (
        "Xantheum" not in auditor and '"reliability"' not in auditor and "RELIABILITY" not in auditor.split("\n", 1)[1]
    )


@pytest.mark.parametrize(
    "reliability",
    [
        reply('{"agent": "RELIABILITY", "source_type": "x", "reliability": "HIGH", "confidence": 99}'),
        reply('{"agent": "RELIABILITY", "source_type": "x", "reliability": "LOW", "confidence": 99}'),
        fail(400),
    ],
    ids=["high", "low", "failed"],
)
async def test_reliability_never_changes_a_verdict_or_what_the_judges_see(client, fake_models, reliability):
    baseline = await _judge(client)
    baseline_prompts = _prompts(fake_models)
    fake_models.reset()
    fake_models.script(MODEL, default_reply())  # every other agent answers as before
    # Route only the reliability agent's prompts to the scripted behaviour.
    fake_models.script("fake/reliability", reliability)

    async def call(request):
        model = "fake/reliability" if request.WhichOneof("input") == "reliability" else MODEL
        request.model = model
        try:
            return await run_agent(client, request, 10)
        except ModelError as error:
            raise AgentFailed(error.message) from None

    item = pb.EntailmentItem(claim=CLAIM, source_excerpt=EXCERPT, source_type=SOURCE_TYPE)
    varied = await judge_item(item, AgentModels(*(MODEL,) * 4), call)
    assert varied.final is not None
    assert (varied.final.final_verdict, varied.final.final_confidence, varied.final.entailment_confidence) == (
        baseline.final.final_verdict,
        baseline.final.final_confidence,
        baseline.final.entailment_confidence,
    )
    prompts = _prompts(fake_models)
    for kind in ("entail_extractor", "entail_judge", "entail_auditor"):
        assert prompts[kind] == baseline_prompts[kind]


def test_aggregation_ignores_reliability_for_verdict_and_confidence():
    ratings = [None] + [
        pb.ReliabilityOutput(source_type="s", reliability=r, confidence=c)
        for r in (pb.RELIABILITY_RATING_HIGH, pb.RELIABILITY_RATING_MEDIUM, pb.RELIABILITY_RATING_LOW)
        for c in (0, 100)
    ]
    auditors = [None] + [
        pb.AuditorOutput(final_verdict=v, confidence_adjustment=a, auditor_reasoning=["ambiguity"])
        for v, a in itertools.product(
            (pb.AUDITOR_VERDICT_UNCHANGED, pb.AUDITOR_VERDICT_NOT_ENOUGH_INFO, pb.AUDITOR_VERDICT_SUPPORTED),
            (-20, -5, 0, 5),
        )
    ]
    verdicts = (
        pb.ENTAILMENT_VERDICT_SUPPORTED,
        pb.ENTAILMENT_VERDICT_CONTRADICTED,
        pb.ENTAILMENT_VERDICT_NOT_ENOUGH_INFO,
    )
    for verdict, confidence, auditor in itertools.product(verdicts, (0, 15, 55, 100), auditors):
        judge = pb.JudgeOutput(verdict=verdict, confidence=confidence)
        outcomes = {
            (f.final_verdict, f.final_confidence, f.entailment_confidence)
            for f in (aggregate("c", judge, rating, auditor) for rating in ratings)
        }
        assert len(outcomes) == 1, (verdict, confidence, auditor)
