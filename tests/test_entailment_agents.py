"""The entailment agents over CheckerService.RunEntailmentAgent, against scripted models that break
every rule of the entailment workflow: strict JSON and the repair attempt, structured outputs, the extractor's verbatim
and id rules, the judge's references and empty-source rule, the auditor's keep-or-downgrade rule, the
final aggregation, and what each agent's failure means for its item."""

from __future__ import annotations

import json

import grpc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factcheck.core.entailment_agents import AgentFailed, AgentModels, judge_item
from factcheck.core.entailment_rules import (
    LOW_RELIABILITY_NOTE,
    RELIABILITY_NOTE,
    accepted_audit,
    aggregate,
    final_json,
)
from factcheck.kit.settings import ProviderOverride, Settings
from factcheck.models.client import ModelClient
from factcheck.serving.server import new_server
from factcheck.v1 import checker_pb2_grpc
from factcheck.v1 import entailment_pb2 as pb
from factcheck_checker.checker_service import CheckerService
from factcheck_checker.entailment.rules import agent_output
from tests.fake_model_server import FakeModelServer, fail, reply

CLAIM = "The vaccine prevented all infections in the trial."
EXCERPT = "The trial enrolled 300 adults.\nThe vaccine prevented most infections in the trial. Side effects were mild."
SUPPORTED, CONTRADICTED, NEI = (
    pb.ENTAILMENT_VERDICT_SUPPORTED,
    pb.ENTAILMENT_VERDICT_CONTRADICTED,
    pb.ENTAILMENT_VERDICT_NOT_ENOUGH_INFO,
)


def extractor_json(*statements, ids=None) -> str:
    ids = ids or list(range(1, len(statements) + 1))
    return json.dumps({"agent": "EXTRACTOR", "statements": [{"id": i, "text": t} for i, t in zip(ids, statements)]})


def judge_json(verdict="SUPPORTED", confidence=85, reasoning=("Statement 1 explicitly states it.",)) -> str:
    return json.dumps(
        {"agent": "ENTAILMENT_JUDGE", "verdict": verdict, "confidence": confidence, "reasoning": list(reasoning)}
    )


def auditor_json(final="UNCHANGED", adjustment=0, reasons=()) -> str:
    return json.dumps(
        {
            "agent": "ADVERSARIAL_AUDITOR",
            "final_verdict": final,
            "confidence_adjustment": adjustment,
            "auditor_reasoning": list(reasons),
        }
    )


def reliability_json(rating="HIGH", confidence=80, source_type="journal") -> str:
    return json.dumps(
        {"agent": "RELIABILITY", "source_type": source_type, "reliability": rating, "confidence": confidence}
    )


@pytest.fixture
def fake_models():
    with FakeModelServer() as server:
        yield server


async def _checker(settings: Settings):
    client = ModelClient(settings)
    server = new_server(settings)
    checker_pb2_grpc.add_CheckerServiceServicer_to_server(CheckerService(client, settings), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return client, server, f"127.0.0.1:{port}"


def _settings(fake_models, **overrides) -> Settings:
    values = dict(
        model_base_url=fake_models.base_url, model_backoff_base_s=0.01, model_max_retries=0, stage_timeout_ms=10_000
    )
    return Settings(**{**values, **overrides})


@pytest.fixture
async def checker(fake_models):
    client, server, target = await _checker(_settings(fake_models))
    async with grpc.aio.insecure_channel(target) as channel:
        yield checker_pb2_grpc.CheckerServiceStub(channel)
    await server.stop(None)
    await client.aclose()


def extractor_request(model="fake/extractor", claim=CLAIM, excerpt=EXCERPT):
    return pb.RunEntailmentAgentRequest(model=model, extractor=pb.ExtractorInput(claim=claim, source_excerpt=excerpt))


def judge_request(*statements, model="fake/judge", claim=CLAIM):
    items = [pb.ExtractedStatement(id=n, text=t) for n, t in enumerate(statements, 1)]
    return pb.RunEntailmentAgentRequest(model=model, judge=pb.JudgeInput(claim=claim, statements=items))


def auditor_request(verdict=SUPPORTED, confidence=85, model="fake/auditor"):
    given = pb.AuditorInput(claim=CLAIM, source_excerpt=EXCERPT, judge_verdict=verdict, judge_confidence=confidence)
    return pb.RunEntailmentAgentRequest(model=model, auditor=given)


# --- strict JSON and the repair attempt --------------------------------------------------------------


async def test_a_valid_answer_needs_one_attempt(checker, fake_models):
    fake_models.script("fake/extractor", reply(extractor_json("The trial enrolled 300 adults.")))
    response = await checker.RunEntailmentAgent(extractor_request())
    assert response.agent == pb.ENTAILMENT_AGENT_EXTRACTOR and response.attempts == 1
    assert [s.text for s in response.output.extractor.statements] == ["The trial enrolled 300 adults."]
    assert not response.structured and fake_models.requests[0].response_format is None


@pytest.mark.parametrize(
    "bad, complaint",
    [
        ("```json\n" + extractor_json("The trial enrolled 300 adults.") + "\n```", "standalone JSON object"),
        ('Here you go: {"agent": "EXTRACTOR", "statements": []}', "standalone JSON object"),
        ('{"agent": "EXTRACTOR", "statements": [], "note": "x"}', "note: Extra inputs are not permitted"),
        ('{"agent": "EXTRACTOR"}', "statements: Field required"),
        ('{"agent": "JUDGE", "statements": []}', "agent: Input should be 'EXTRACTOR'"),
        ('{"agent": "EXTRACTOR", "statements": [{"id": "1", "text": "x"}]}', "statements.0.id"),
        (extractor_json("The trial enrolled 300 adults.", ids=[2]), "ids must be 1, 2, 3"),
        (extractor_json("A.", "B.", ids=[1, 1]), "ids must be 1, 2, 3"),
    ],
)
async def test_an_invalid_answer_is_repaired_once_quoting_the_error(checker, fake_models, bad, complaint):
    fake_models.script("fake/extractor", reply(bad), reply(extractor_json("Side effects were mild.")))
    response = await checker.RunEntailmentAgent(extractor_request())
    assert response.attempts == 2
    assert [s.text for s in response.output.extractor.statements] == ["Side effects were mild."]
    first, repair = fake_models.requests
    assert repair.prompt.startswith(first.prompt)
    assert "YOUR PREVIOUS ANSWER:" in repair.prompt and complaint in repair.prompt


async def test_a_second_invalid_answer_fails_the_agent(checker, fake_models):
    fake_models.script("fake/judge", reply(judge_json(confidence=150)))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await checker.RunEntailmentAgent(judge_request("The trial enrolled 300 adults."))
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert "ENTAILMENT_JUDGE answer invalid after one repair attempt" in (raised.value.details() or "")
    assert "confidence: Input should be less than or equal to 100" in (raised.value.details() or "")
    assert len(fake_models.requests) == 2


@pytest.mark.parametrize(
    "bad",
    [
        judge_json(verdict="TRUE"),
        judge_json(verdict="Supported"),
        judge_json(confidence=-1),
        judge_json(confidence=90.5),
        json.dumps({"agent": "ENTAILMENT_JUDGE", "verdict": "SUPPORTED", "confidence": 90}),
    ],
)
async def test_the_judge_schema_is_exact(checker, fake_models, bad):
    fake_models.script("fake/judge", reply(bad), reply(judge_json()))
    response = await checker.RunEntailmentAgent(judge_request("The trial enrolled 300 adults."))
    assert response.attempts == 2 and response.output.judge.verdict == SUPPORTED


async def test_reliability_schema_is_exact(checker, fake_models):
    fake_models.script("fake/rel", reply(reliability_json(rating="VERY HIGH")), reply(reliability_json(rating="LOW")))
    request = pb.RunEntailmentAgentRequest(model="fake/rel", reliability=pb.ReliabilityInput(source_type="a blog"))
    response = await checker.RunEntailmentAgent(request)
    assert response.attempts == 2 and response.output.reliability.reliability == pb.RELIABILITY_RATING_LOW


# --- structured outputs ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "overrides, structured",
    [
        ({"model_structured_outputs": True}, True),
        ({"model_providers": {"fake": ProviderOverride(base_url="", structured_outputs=True)}}, True),
        (
            {
                "model_structured_outputs": True,
                "model_providers": {"fake": ProviderOverride(base_url="", structured_outputs=False)},
            },
            False,
        ),
    ],
)
async def test_the_schema_is_asked_for_where_the_endpoint_has_structured_outputs(fake_models, overrides, structured):
    if "model_providers" in overrides:
        for override in overrides["model_providers"].values():
            override.base_url = fake_models.base_url
    client, server, target = await _checker(_settings(fake_models, **overrides))
    try:
        async with grpc.aio.insecure_channel(target) as channel:
            stub = checker_pb2_grpc.CheckerServiceStub(channel)
            response = await stub.RunEntailmentAgent(judge_request("The trial enrolled 300 adults."))
    finally:
        await server.stop(None)
        await client.aclose()
    assert response.structured is structured
    sent = fake_models.requests[0].response_format
    if not structured:
        assert sent is None
        return
    assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "entailment_judge"
    schema = sent["json_schema"]["schema"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["verdict"]["enum"] == ["SUPPORTED", "CONTRADICTED", "NOT ENOUGH INFO"]
    assert set(schema["required"]) == {"agent", "verdict", "confidence", "reasoning"}


# --- the extractor's rules ---------------------------------------------------------------------------


async def test_paraphrases_are_dropped_counted_and_the_rest_renumbered(checker, fake_models):
    answer = extractor_json(
        "The trial enrolled 300 adults.",
        "The vaccine stopped nearly every infection.",  # a paraphrase
        "The vaccine prevented most infections   in the trial.",  # verbatim but for whitespace
        "",
    )
    fake_models.script("fake/extractor", reply(answer))
    response = await checker.RunEntailmentAgent(extractor_request())
    out = response.output.extractor
    assert [(s.id, s.text) for s in out.statements] == [
        (1, "The trial enrolled 300 adults."),
        (2, "The vaccine prevented most infections   in the trial."),
    ]
    assert out.dropped_paraphrases == 2 and response.attempts == 1


# --- the judge's rules -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reasoning, complaint",
    [
        (["Statement 3 explicitly states it."], "ids that do not exist (3); the statements are 1..2"),
        (["Statements 1 and 7 agree."], "ids that do not exist (7)"),
        (["The source says so."], "must reference the statement ids"),
    ],
)
async def test_judge_reasoning_must_reference_existing_ids(checker, fake_models, reasoning, complaint):
    fake_models.script("fake/judge", reply(judge_json(reasoning=reasoning)))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await checker.RunEntailmentAgent(judge_request("The trial enrolled 300 adults.", "Side effects were mild."))
    assert complaint in (raised.value.details() or "")
    assert complaint in fake_models.requests[1].prompt  # the repair prompt quoted it


async def test_no_statements_means_not_enough_info_at_most_20(checker, fake_models):
    fake_models.script("fake/judge", reply(judge_json("SUPPORTED", 95, reasoning=["The claim sounds right."])))
    response = await checker.RunEntailmentAgent(judge_request())
    judge = response.output.judge
    assert (judge.verdict, judge.confidence) == (NEI, 20)
    assert "Empty source" in judge.enforced[0] and "SUPPORTED, 95" in judge.enforced[0]


async def test_no_statements_the_rule_stands_whatever_the_judge_cites(checker, fake_models):
    # The empty-source rule comes before validation: citing a statement that does not exist is not an error.
    fake_models.script("fake/judge", reply(judge_json("SUPPORTED", 80, reasoning=["Statement 1 states it."])))
    response = await checker.RunEntailmentAgent(judge_request())
    judge = response.output.judge
    assert (judge.verdict, judge.confidence, response.attempts) == (NEI, 20, 1)
    assert "SUPPORTED, 80" in judge.enforced[0] and "cites statements that do not exist (1)" in judge.enforced[1]


async def test_no_statements_an_unreadable_judge_answer_is_not_enough_info_too(checker, fake_models):
    fake_models.script("fake/judge", reply("The claim is SUPPORTED."))
    response = await checker.RunEntailmentAgent(judge_request())
    judge = response.output.judge
    assert (judge.verdict, judge.confidence, response.attempts) == (NEI, 0, 1)
    assert "could not be read" in judge.enforced[0] and len(fake_models.requests) == 1


judge_answers = st.one_of(
    st.builds(
        lambda verdict, confidence, reasoning: judge_json(verdict, confidence, reasoning=reasoning),
        st.sampled_from(["SUPPORTED", "CONTRADICTED", "NOT ENOUGH INFO"]),
        st.integers(min_value=0, max_value=100),
        st.lists(
            st.one_of(
                st.sampled_from(["Statement 1 says so.", "Statements 2 and 3 agree.", "ID 4", "No statement."]),
                st.text(max_size=40),
            ),
            max_size=3,
        ),
    ),
    st.text(max_size=80),  # anything at all, JSON or not
)


@given(judge_answers)
@settings(max_examples=200, deadline=None)
def test_with_no_statements_any_judge_answer_is_not_enough_info_at_most_20(text):
    output = agent_output(pb.ENTAILMENT_AGENT_JUDGE, text, pb.JudgeInput(claim=CLAIM)).judge
    assert output.verdict == NEI and 0 <= output.confidence <= 20


# --- the auditor's rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "judge_verdict, answer, why",
    [
        (CONTRADICTED, auditor_json("SUPPORTED", 0), "not make it SUPPORTED"),  # an upgrade
        (NEI, auditor_json("SUPPORTED", -5, ["x"]), "not make it SUPPORTED"),
        (SUPPORTED, auditor_json("CONTRADICTED", -10, ["x"]), "not make it CONTRADICTED"),
        (SUPPORTED, auditor_json("UNCHANGED", 5), "outside -20..0"),
        (SUPPORTED, auditor_json("NOT ENOUGH INFO", -30, ["'most' is not 'all'"]), "outside -20..0"),
        (SUPPORTED, auditor_json("NOT ENOUGH INFO", -10, []), "must identify the ambiguity"),
    ],
)
async def test_an_auditor_breaking_its_rules_is_rejected_and_never_applied(
    checker, fake_models, judge_verdict, answer, why
):
    fake_models.script("fake/auditor", reply(answer))
    response = await checker.RunEntailmentAgent(auditor_request(judge_verdict, 60))
    auditor = response.output.auditor
    assert auditor.rejected and why in auditor.rejection and response.attempts == 1
    judge = pb.JudgeOutput(verdict=judge_verdict, confidence=60, reasoning=["Statement 1."])
    final = aggregate(CLAIM, judge, None, auditor)
    assert (final.final_verdict, final.final_confidence) == (judge_verdict, 60)
    assert any(note.startswith("Auditor output rejected, not applied") and why in note for note in final.notes)


@pytest.mark.parametrize(
    "answer, verdict, confidence",
    [
        (auditor_json("UNCHANGED", 0), SUPPORTED, 85),
        (auditor_json("SUPPORTED", -10, ["minor hedge"]), SUPPORTED, 75),
        (auditor_json("NOT ENOUGH INFO", -20, ["'most' is not 'all'"]), NEI, 65),
    ],
)
async def test_an_auditor_may_keep_or_downgrade(checker, fake_models, answer, verdict, confidence):
    fake_models.script("fake/auditor", reply(answer))
    auditor = (await checker.RunEntailmentAgent(auditor_request(SUPPORTED, 85))).output.auditor
    assert not auditor.rejected
    final = aggregate(CLAIM, pb.JudgeOutput(verdict=SUPPORTED, confidence=85), None, auditor)
    assert (final.final_verdict, final.final_confidence, final.entailment_confidence) == (verdict, confidence, 85)


def test_a_rule_breaking_auditor_marked_accepted_is_still_not_applied():
    forged = pb.AuditorOutput(final_verdict=pb.AUDITOR_VERDICT_SUPPORTED, confidence_adjustment=10)
    assert accepted_audit("CONTRADICTED", forged) is None


# --- aggregation -------------------------------------------------------------------------------------


def test_final_confidence_is_judge_plus_adjustment_within_0_to_100():
    auditor = pb.AuditorOutput(
        final_verdict=pb.AUDITOR_VERDICT_NOT_ENOUGH_INFO, confidence_adjustment=-20, auditor_reasoning=["hedge"]
    )
    final = aggregate(CLAIM, pb.JudgeOutput(verdict=SUPPORTED, confidence=12), None, auditor)
    assert (final.final_confidence, final.entailment_confidence) == (0, 12)


def test_the_final_output_has_exactly_the_seeds_fields_and_notes():
    low = pb.ReliabilityOutput(source_type="forum", reliability=pb.RELIABILITY_RATING_LOW, confidence=80)
    unchanged = pb.AuditorOutput(final_verdict=pb.AUDITOR_VERDICT_UNCHANGED)
    final = final_json(aggregate(CLAIM, pb.JudgeOutput(verdict=SUPPORTED, confidence=90), low, unchanged))
    assert final == {
        "claim": CLAIM,
        "final_verdict": "SUPPORTED",
        "final_confidence": 90,
        "entailment_confidence": 90,
        "reliability_rating": "LOW",
        "notes": [RELIABILITY_NOTE, LOW_RELIABILITY_NOTE],
    }
    high = pb.ReliabilityOutput(source_type="journal", reliability=pb.RELIABILITY_RATING_HIGH, confidence=80)
    notes = final_json(aggregate(CLAIM, pb.JudgeOutput(verdict=SUPPORTED, confidence=90), high, unchanged))["notes"]
    assert notes == [RELIABILITY_NOTE]


# --- failure semantics -------------------------------------------------------------------------------

MODELS = AgentModels("fake/extractor", "fake/rel", "fake/judge", "fake/auditor")
ITEM = pb.EntailmentItem(claim=CLAIM, source_excerpt=EXCERPT, source_type="peer-reviewed journal article")


def _script_all(fake_models, **broken):
    answers = {
        "fake/extractor": reply(extractor_json("The vaccine prevented most infections in the trial.")),
        "fake/rel": reply(reliability_json()),
        "fake/judge": reply(judge_json("SUPPORTED", 80)),
        "fake/auditor": reply(auditor_json()),
    }
    answers.update(broken)
    for model, behaviour in answers.items():
        fake_models.script(model, behaviour)


async def _judge_over_grpc(checker, listener=None):
    async def call(request):
        try:
            return await checker.RunEntailmentAgent(request)
        except grpc.aio.AioRpcError as error:
            raise AgentFailed(error.details() or "") from None

    return await judge_item(ITEM, MODELS, call, listener)


async def test_every_agent_answering_gives_the_final_output(checker, fake_models):
    _script_all(fake_models)
    seen = []

    async def listener(agent, model, response, failure):
        seen.append((agent, model, failure))

    outcome = await _judge_over_grpc(checker, listener)
    assert outcome.error is None and outcome.failures == []
    assert final_json(outcome.final)["final_verdict"] == "SUPPORTED"
    assert {a for a, _, _ in seen} == {1, 2, 3, 4} and [a for a, _, _ in seen][2:] == [3, 4]


async def test_no_auditor_the_judges_verdict_stands_with_a_note(checker, fake_models):
    _script_all(fake_models, **{"fake/auditor": fail(400)})
    outcome = await _judge_over_grpc(checker)
    assert (outcome.final.final_verdict, outcome.final.final_confidence) == (SUPPORTED, 80)
    assert any(n.startswith("Auditor failed; the judge's verdict stands unaudited") for n in outcome.final.notes)
    assert [f.agent for f in outcome.failures] == [pb.ENTAILMENT_AGENT_AUDITOR]


async def test_no_judge_the_item_fails_with_a_clear_error(checker, fake_models):
    _script_all(fake_models, **{"fake/judge": reply("SUPPORTED, I think")})
    outcome = await _judge_over_grpc(checker)
    assert outcome.final is None
    assert outcome.error.startswith("Entailment judge failed: ") and "invalid after one repair" in outcome.error
    assert not fake_models.requests_for("fake/auditor")


async def test_no_extractor_the_item_fails_without_a_judge(checker, fake_models):
    _script_all(fake_models, **{"fake/extractor": fail(400)})
    outcome = await _judge_over_grpc(checker)
    assert outcome.final is None and outcome.error.startswith("Extractor failed: ")
    assert not fake_models.requests_for("fake/judge") and not fake_models.requests_for("fake/auditor")


async def test_no_reliability_the_verdict_is_unchanged_and_the_rating_unknown(checker, fake_models):
    _script_all(fake_models, **{"fake/rel": fail(400)})
    outcome = await _judge_over_grpc(checker)
    final = final_json(outcome.final)
    assert (final["final_verdict"], final["final_confidence"], final["reliability_rating"]) == ("SUPPORTED", 80, None)
    assert any(n.startswith("Reliability assessment failed") for n in final["notes"])
