"""The entailment checker strategy: CheckerService.Verify with CHECKER_STRATEGY_ENTAILMENT_AGENTS judges
each claim against each of its passages with the four agents, maps the outcome to fact-check verdicts
and confidence bands, and returns every agent output; end to end, a fact-check run with
FactCheckConfig.checker_strategy keeps them in its verify rows (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

import grpc
import pytest

from factcheck.kit.settings import Settings
from factcheck.models.client import ModelClient
from factcheck.serving.server import new_server
from factcheck.v1 import checker_pb2, checker_pb2_grpc, common_pb2, factcheck_pb2, factcheck_pb2_grpc
from factcheck.v1 import entailment_pb2 as pb
from factcheck_checker.checker_service import CheckerService
from factcheck_checker.entailment.strategy import confidence_band
from tests.conftest import content_request, payload, run_events
from tests.fake_model_server import FakeModelServer, classify, default_answer, fail, reply
from tests.inprocess import inprocess_settings, serve_everything

CLAIMS = [
    common_pb2.Claim(id="claim_1", claim="The bridge opened in 1932.", context="c", type=common_pb2.CLAIM_TYPE_DATE),
    common_pb2.Claim(
        id="claim_2", claim="The bridge is 500 metres long.", context="c", type=common_pb2.CLAIM_TYPE_STATISTIC
    ),
    common_pb2.Claim(
        id="claim_3", claim="The bridge is painted red.", context="c", type=common_pb2.CLAIM_TYPE_TECHNICAL
    ),
]
PASSAGES = [
    common_pb2.Passage(
        id="P1",
        source_id="s1",
        source_title="City archive",
        source_url="https://city.example/bridge",
        text="The bridge opened in 1932. It cost a fortune.",
        authority=0.9,
    ),
    common_pb2.Passage(id="P2", source_id="s2", source_title="Travel forum", text="The bridge is 300 metres long."),
]
EVIDENCE = [
    common_pb2.ClaimEvidence(claim_id="claim_1", passage_ids=["P1"]),
    common_pb2.ClaimEvidence(claim_id="claim_2", passage_ids=["P2"]),
]


def _agents(judge_by_claim: dict[str, tuple[str, int]]):
    """One model for all four agents: the judge's verdict per claim, the others' default answers."""

    def answer(prompt: str) -> str:
        if classify(prompt) != "entail_judge":
            return default_answer(prompt)
        for claim in CLAIMS:
            if f"> {claim.claim}" in prompt and claim.id in judge_by_claim:
                verdict, confidence = judge_by_claim[claim.id]
                return json.dumps(
                    {
                        "agent": "ENTAILMENT_JUDGE",
                        "verdict": verdict,
                        "confidence": confidence,
                        "reasoning": ["Statement 1 says so."],
                    }
                )
        return default_answer(prompt)

    return reply(answer)


@pytest.fixture
def fake_models():
    with FakeModelServer() as server:
        yield server


@pytest.fixture
async def checker(fake_models):
    settings = Settings(model_base_url=fake_models.base_url, model_max_retries=0, stage_timeout_ms=10_000)
    client = ModelClient(settings)
    server = new_server(settings)
    checker_pb2_grpc.add_CheckerServiceServicer_to_server(CheckerService(client, settings), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield checker_pb2_grpc.CheckerServiceStub(channel)
    await server.stop(None)
    await client.aclose()


def _request(strategy=pb.CHECKER_STRATEGY_ENTAILMENT_AGENTS, passages=PASSAGES, evidence=EVIDENCE):
    return checker_pb2.VerifyRequest(
        model="fake/agents", content="c", claims=CLAIMS, passages=passages, evidence=evidence, strategy=strategy
    )


@pytest.mark.parametrize(
    "confidence, band", [(100, "HIGH"), (70, "HIGH"), (69, "MEDIUM"), (40, "MEDIUM"), (39, "LOW"), (0, "LOW")]
)
def test_confidence_bands_follow_the_anchors(confidence, band):
    assert confidence_band(confidence) == band


async def test_claims_are_judged_by_the_agents_and_mapped_to_the_spec(checker, fake_models):
    fake_models.script("fake/agents", _agents({"claim_1": ("SUPPORTED", 95), "claim_2": ("CONTRADICTED", 60)}))
    response = await checker.Verify(_request())
    by_claim = {v.claim_id: v for v in response.verifications}
    assert [v.claim_id for v in response.verifications] == ["claim_1", "claim_2", "claim_3"]
    assert (by_claim["claim_1"].verdict, by_claim["claim_1"].confidence) == (
        common_pb2.VERDICT_VERIFIED,
        common_pb2.CONFIDENCE_HIGH,
    )
    assert by_claim["claim_1"].citations[0].passage_id == "P1"
    assert by_claim["claim_1"].citations[0].quote == "The bridge opened in 1932."
    assert (by_claim["claim_2"].verdict, by_claim["claim_2"].confidence) == (
        common_pb2.VERDICT_DISPUTED,
        common_pb2.CONFIDENCE_MEDIUM,
    )
    assert by_claim["claim_2"].correction == "The source states: The bridge is 300 metres long."
    # No passage for claim_3: the empty-source rule, without a model call.
    assert (by_claim["claim_3"].verdict, by_claim["claim_3"].confidence) == (
        common_pb2.VERDICT_UNVERIFIABLE,
        common_pb2.CONFIDENCE_LOW,
    )
    assert (response.summary.verified, response.summary.disputed, response.summary.unverifiable) == (1, 1, 1)

    assert [(e.claim_id, e.passage_id) for e in response.entailment] == [("claim_1", "P1"), ("claim_2", "P2")]
    first = response.entailment[0]
    assert first.extractor.statements[0].text == "The bridge opened in 1932."
    assert first.judge.verdict == pb.ENTAILMENT_VERDICT_SUPPORTED and first.HasField("auditor")
    assert (
        first.source_type == "City archive (https://city.example/bridge); caller-assigned authority 0.90 on a 0-1 scale"
    )
    assert first.reliability.reliability == pb.RELIABILITY_RATING_HIGH
    assert first.final.final_confidence == 95
    kinds = [r.kind for r in fake_models.requests]
    assert "verify" not in kinds and kinds.count("entail_judge") == 2
    reliability_prompts = [r.prompt for r in fake_models.requests if r.kind == "entail_reliability"]
    assert any("> Travel forum" in p for p in reliability_prompts) and not any(
        w in p for p in reliability_prompts for w in ("1932", "metres", "opened")
    )


async def test_without_passages_the_default_prompt_runs(checker, fake_models):
    response = await checker.Verify(_request(passages=[], evidence=[]))
    assert [r.kind for r in fake_models.requests] == ["verify"] and not response.entailment


async def test_a_model_failing_every_item_fails_the_checker(checker, fake_models):
    fake_models.script("fake/agents", fail(400))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await checker.Verify(_request())
    assert "400" in (raised.value.details() or "")


async def test_a_claim_whose_judge_fails_is_unverifiable_naming_why(checker, fake_models):
    def answer(prompt: str) -> str:
        if classify(prompt) == "entail_judge" and "> The bridge opened in 1932." in prompt:
            return "not json"
        return default_answer(prompt)

    fake_models.script("fake/agents", reply(answer))
    response = await checker.Verify(_request())
    first = response.verifications[0]
    assert first.verdict == common_pb2.VERDICT_UNVERIFIABLE and first.evidence.startswith("Entailment judge failed")
    assert response.entailment[0].error.startswith("Entailment judge failed")


# --- end to end ----------------------------------------------------------------------------------------

SOURCE = common_pb2.Source(
    id="paris",
    title="UN treaty archive",
    text="The Paris Agreement was signed in 2015 by 196 countries.",
    authority=0.9,
)


@pytest.mark.e2e
async def test_a_fact_check_run_with_the_strategy_keeps_the_agent_outputs(fake_models, database_url):
    settings = inprocess_settings(fake_models.base_url, database_url, default_checker_models=["fake/agents"])
    async with serve_everything(settings) as running:
        async with grpc.aio.insecure_channel(running.target) as channel:
            gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
            request = content_request(
                "The Paris Agreement was signed in 2015 by 196 countries.",
                sources=[SOURCE],
                use_knowledge_store=False,
                checker_strategy=pb.CHECKER_STRATEGY_ENTAILMENT_AGENTS,
            )
            events = await run_events(gateway, request)
            result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
        rows = {row.stage_type: row for row in running.gateway._store.get_stages(events[0].message_id)}
    assert events[-1].complete.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
    checker = payload(events, "checker_complete")
    assert checker.verifications[0].verdict == common_pb2.VERDICT_VERIFIED
    stored = rows["verify_0"].parsed_data
    assert stored["verifications"][0]["verdict"] == "VERIFIED"
    [item] = stored["entailment"]
    assert set(item) >= {"claimId", "passageId", "sourceType", "extractor", "reliability", "judge", "auditor", "final"}
    assert item["extractor"]["agent"] == "EXTRACTOR" and item["final"]["final_verdict"] == "SUPPORTED"
    assert item["final"]["notes"][0] == "Reliability rating does NOT determine entailment."
    assert result.verification.consensus[0].consensus_verdict == common_pb2.VERDICT_VERIFIED
