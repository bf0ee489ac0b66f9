"""Entailment mode end to end (SQLite and PostgreSQL): validation, the event sequence, a stage row per
agent output and per item, the agents' failure semantics through the gateway, and GetResult rebuilt
from the rows."""

from __future__ import annotations

import json

import grpc
import pytest

from factcheck.v1 import entailment_pb2 as pb
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from tests.conftest import content_request, run_events
from tests.fake_model_server import FakeModelServer, classify, default_answer, reply
from tests.inprocess import inprocess_settings, serve_everything

pytestmark = pytest.mark.e2e

MODEL = "fake/agents"
SUPPORTED_ITEM = pb.EntailmentItem(
    claim="The bridge opened in 1932.",
    source_excerpt="The bridge opened in 1932. It spans the river.",
    source_type="peer-reviewed journal article",
)
BROKEN_JUDGE_ITEM = pb.EntailmentItem(
    claim="The tunnel opened in 1950.", source_excerpt="The tunnel opened in 1950.", source_type="city archive"
)
UPGRADING_AUDITOR_ITEM = pb.EntailmentItem(
    claim="The tower is 300 metres tall.",
    source_excerpt="Some say the tower is tall.",
    source_type="anonymous forum post",
)


def _agents(prompt: str) -> str:
    """The local engine's answers, except a judge that never answers JSON for the tunnel and an auditor
    that tries to upgrade the tower."""
    kind = classify(prompt)
    if kind == "entail_judge" and "> The tunnel opened in 1950." in prompt:
        return "The claim is SUPPORTED."
    if kind == "entail_auditor" and "> The tower is 300 metres tall." in prompt:
        return json.dumps(
            {
                "agent": "ADVERSARIAL_AUDITOR",
                "final_verdict": "SUPPORTED",
                "confidence_adjustment": 10,
                "auditor_reasoning": ["x"],
            }
        )
    return default_answer(prompt)


@pytest.fixture(scope="module")
def fake_models():
    with FakeModelServer() as server:
        yield server


@pytest.fixture
async def everything(fake_models, database_url):
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url, default_entailment_model=MODEL)
    async with serve_everything(settings) as running:
        async with grpc.aio.insecure_channel(running.target) as channel:
            yield running, factcheck_pb2_grpc.FactCheckServiceStub(channel)


def entailment_request(*items, **config) -> factcheck_pb2.RunRequest:
    return factcheck_pb2.RunRequest(
        question="Are these claims entailed by their sources?",
        mode=factcheck_pb2.MODE_ENTAILMENT,
        entailment_config=pb.EntailmentConfig(items=items, **config),
    )


def _kinds(events) -> list[str]:
    return [event.WhichOneof("event") for event in events]


async def test_items_run_through_the_agents_with_rows_events_and_a_result(everything, fake_models):
    running, gateway = everything
    fake_models.script(MODEL, reply(_agents))
    events = await run_events(gateway, entailment_request(SUPPORTED_ITEM, BROKEN_JUDGE_ITEM, UPGRADING_AUDITOR_ITEM))
    kinds = _kinds(events)
    assert kinds[:2] == ["factcheck_start", "entailment_start"] and kinds[-2:] == ["entailment_complete", "complete"]
    start = events[0].factcheck_start
    assert start.mode == factcheck_pb2.MODE_ENTAILMENT
    assert (start.entailment.item_count, start.entailment.judge_model) == (3, MODEL)
    assert events[-1].complete.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE

    agents = {
        (e.entailment_agent_complete.item_index, e.entailment_agent_complete.agent)
        for e in events
        if e.HasField("entailment_agent_complete")
    }
    assert {a for i, a in agents if i == 0} == {1, 2, 3, 4} and {a for i, a in agents if i == 2} == {1, 2, 3, 4}
    assert {a for i, a in agents if i == 1} == {1, 2}  # no judge, so no auditor
    [judge_failed] = [e.entailment_agent_failed for e in events if e.HasField("entailment_agent_failed")]
    assert (judge_failed.item_index, judge_failed.agent) == (1, pb.ENTAILMENT_AGENT_JUDGE)
    # Per item: its agents' events come before its final one.
    for index in range(3):
        positions = [
            n for n, e in enumerate(events) if getattr(getattr(e, e.WhichOneof("event")), "item_index", -1) == index
        ]
        last = events[positions[-1]].WhichOneof("event")
        assert last == ("entailment_item_failed" if index == 1 else "entailment_item_complete")

    finals = {
        e.entailment_item_complete.item_index: e.entailment_item_complete.final
        for e in events
        if e.HasField("entailment_item_complete")
    }
    assert finals[0].final_verdict == pb.ENTAILMENT_VERDICT_SUPPORTED
    assert finals[0].reliability_rating == pb.RELIABILITY_RATING_HIGH
    assert finals[2].reliability_rating == pb.RELIABILITY_RATING_LOW
    assert "Supported only within provided source." in finals[2].notes
    assert any(note.startswith("Auditor output rejected") for note in finals[2].notes)
    failed = next(e.entailment_item_failed for e in events if e.HasField("entailment_item_failed"))
    assert failed.item_index == 1 and failed.message.startswith("Entailment judge failed: ")
    summary = events[-2].entailment_complete
    assert summary.failed == 1 and summary.supported + summary.contradicted + summary.not_enough_info == 2

    message_id = events[0].message_id
    rows = {row.stage_type: row for row in running.gateway._store.get_stages(message_id)}
    assert (rows["entail_0_extractor"].stage_order, rows["entail_0_extractor"].role) == (500, "entailment_extractor")
    assert (rows["entail_0_reliability"].stage_order, rows["entail_0_judge"].stage_order) == (501, 502)
    assert (rows["entail_0_auditor"].stage_order, rows["entail_0_final"].stage_order) == (503, 504)
    assert rows["entail_2_final"].stage_order == 514 and rows["entail_2_final"].role == "aggregator"
    assert "entail_1_judge" not in rows and "entail_1_auditor" not in rows
    assert rows["entail_0_extractor"].parsed_data["statements"][0] == {"id": 1, "text": "The bridge opened in 1932."}
    assert rows["entail_0_judge"].parsed_data["agent"] == "ENTAILMENT_JUDGE"
    assert rows["entail_2_auditor"].parsed_data["rejected"] is True
    assert rows["entail_1_final"].parsed_data["error"] == failed.message

    result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
    assert result.mode == factcheck_pb2.MODE_ENTAILMENT
    stored = result.entailment
    assert stored.config.item_count == 3 and [i.item.claim for i in stored.items] == [
        SUPPORTED_ITEM.claim,
        BROKEN_JUDGE_ITEM.claim,
        UPGRADING_AUDITOR_ITEM.claim,
    ]
    assert stored.items[0].final == finals[0] and stored.items[2].final == finals[2]
    assert stored.items[0].judge.verdict == pb.ENTAILMENT_VERDICT_SUPPORTED
    assert stored.items[1].error == failed.message and not stored.items[1].HasField("judge")
    assert [f.agent for f in stored.items[1].failures] == [pb.ENTAILMENT_AGENT_JUDGE]
    assert stored.summary == summary
    listing = await gateway.ListResults(factcheck_pb2.ListResultsRequest(page_size=5))
    assert next(r for r in listing.results if r.message_id == message_id).mode == factcheck_pb2.MODE_ENTAILMENT


async def test_every_item_failing_fails_the_run(everything, fake_models):
    _, gateway = everything
    fake_models.script(
        MODEL, reply(lambda prompt: "no" if classify(prompt) == "entail_extractor" else default_answer(prompt))
    )
    events = await run_events(gateway, entailment_request(SUPPORTED_ITEM))
    assert _kinds(events)[-1] == "error"
    assert events[-1].error.message == "Every entailment item failed; the agents' outputs are stored."
    assert any(f.stage == "entail_0_extractor" for f in events[-1].error.failures)


async def test_no_statements_left_is_not_enough_info_even_when_the_judge_cites_one(everything, fake_models):
    # The extractor's only statement is a paraphrase (dropped); the judge still cites "Statement 1".
    def agents(prompt: str) -> str:
        kind = classify(prompt)
        if kind == "entail_extractor":
            return json.dumps(
                {"agent": "EXTRACTOR", "statements": [{"id": 1, "text": "The bridge was opened in 1932."}]}
            )
        if kind == "entail_judge":
            return json.dumps(
                {
                    "agent": "ENTAILMENT_JUDGE",
                    "verdict": "SUPPORTED",
                    "confidence": 85,
                    "reasoning": ["Statement 1 explicitly states the claim."],
                }
            )
        return default_answer(prompt)

    _, gateway = everything
    fake_models.script(MODEL, reply(agents))
    events = await run_events(gateway, entailment_request(SUPPORTED_ITEM))
    assert _kinds(events)[-1] == "complete"
    [item] = [e.entailment_item_complete for e in events if e.HasField("entailment_item_complete")]
    assert item.final.final_verdict == pb.ENTAILMENT_VERDICT_NOT_ENOUGH_INFO and item.final.final_confidence <= 20
    assert any(note.startswith("Empty source") for note in item.final.notes)
    result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
    [stored] = result.entailment.items
    assert stored.final == item.final and stored.extractor.dropped_paraphrases == 1


async def test_the_offline_agents_confidence_lies_in_the_anchor_band_through_the_services(everything):
    # The calibration anchors: explicit confirmation or contradiction is 90-100, whatever the fitted calibration says.
    excerpt = "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. It is about 330 metres tall."
    items = [
        pb.EntailmentItem(claim=claim, source_excerpt=excerpt, source_type="encyclopedia article")
        for claim in (
            "The Eiffel Tower was completed in 1889.",
            "The Eiffel Tower was completed in 1925.",
            "The Eiffel Tower was finished in 1889.",
        )
    ]
    _, gateway = everything
    events = await run_events(gateway, entailment_request(*items, model="local/entailment"))
    assert _kinds(events)[-1] == "complete"
    finals = {
        e.entailment_item_complete.item_index: e.entailment_item_complete.final
        for e in events
        if e.HasField("entailment_item_complete")
    }
    got = [(finals[i].final_verdict, finals[i].final_confidence) for i in range(3)]
    assert got[0][0] == pb.ENTAILMENT_VERDICT_SUPPORTED and 90 <= got[0][1] <= 100
    assert got[1][0] == pb.ENTAILMENT_VERDICT_CONTRADICTED and 90 <= got[1][1] <= 100
    # A paraphrase ("finished" for "completed"): supported, in the strong band below explicit confirmation.
    assert got[2][0] == pb.ENTAILMENT_VERDICT_SUPPORTED and 70 <= got[2][1] <= 89


@pytest.mark.parametrize(
    "request_, field",
    [
        (entailment_request(), "entailment_config.items"),
        (entailment_request(*[SUPPORTED_ITEM] * 51), "entailment_config.items"),
        (
            entailment_request(pb.EntailmentItem(claim=" ", source_excerpt="x", source_type="blog")),
            "entailment_config.items[0].claim",
        ),
        (
            entailment_request(pb.EntailmentItem(claim="c", source_excerpt="x", source_type="")),
            "entailment_config.items[0].source_type",
        ),
        (entailment_request(SUPPORTED_ITEM, judge_model="no-slash"), "entailment_config.judge_model"),
        (factcheck_pb2.RunRequest(question="q", mode=factcheck_pb2.MODE_ENTAILMENT), "entailment_config"),
    ],
)
async def test_invalid_requests_are_refused_before_any_event(everything, request_, field):
    _, gateway = everything
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await run_events(gateway, request_)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in (raised.value.details() or "")


async def test_a_config_of_another_mode_is_refused(everything):
    _, gateway = everything
    wrong = content_request("Some content.")
    wrong.entailment_config.CopyFrom(pb.EntailmentConfig(items=[SUPPORTED_ITEM]))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await run_events(gateway, wrong)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "entailment_config is the config of MODE_ENTAILMENT" in (raised.value.details() or "")
