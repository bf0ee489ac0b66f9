"""The verification loop as its design defines it, through the real services: scripted checkers and
investigator on the fake model server, search results from the scripted SearxNG server, in process, on
SQLite and PostgreSQL.

- authority is not a sum: one .gov refutation outweighs three social-media posts;
- malformed search result items are dropped and counted, never stringified into evidence;
- a confirmed claim's impact tier is re-assessed with its evidence (promotion and demotion), stored and sent;
- contradicting claims are linked both ways once resolved (temporal loser SUPERSEDED, factual REFUTED);
- the report's Investigation section follows the review decisions.
"""

from __future__ import annotations

import grpc
import pytest

from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc, investigation_pb2, investigation_pb2_grpc
from tests.fake_model_server import FakeModelServer, assessments, assessments_by_claim, verdicts
from tests.fake_searxng import FakeSearxng
from tests.inprocess import inprocess_settings, serve_everything

STATUS = investigation_pb2.InvestigationStatus


@pytest.fixture(scope="module")
def models():
    with FakeModelServer() as server:
        yield server


def run_request(content: str, question: str = "Fact-check this paragraph") -> factcheck_pb2.RunRequest:
    return factcheck_pb2.RunRequest(
        question=question,
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(
            content_to_check=content, investigate=True, investigator_model="fake/investigator"
        ),
    )


def outcomes(events) -> dict[str, investigation_pb2.ClaimInvestigatedPayload]:
    """The last claim_investigated of each claim: the one in force."""
    return {e.claim_investigated.claim_id: e.claim_investigated for e in events if e.HasField("claim_investigated")}


async def test_one_gov_source_outweighs_social_posts_and_malformed_results_are_dropped(models, database_url):
    models.reset()
    models.script("fake/checker-a", verdicts(default="UNVERIFIABLE"))
    models.script("fake/checker-b", verdicts(default="UNVERIFIABLE"))
    models.script(
        "fake/investigator",
        assessments(
            {"census.gov": "REFUTES", "x.com": "SUPPORTS", "facebook.com": "SUPPORTS", "reddit.com": "SUPPORTS"}
        ),
    )
    with FakeSearxng() as searx:
        searx.add(
            "https://www.census.gov/gorlan-bridge",
            "Census bureau: Gorlan bridge records",
            "Records show the Gorlan bridge opened in 1994, not 1990.",
        )
        searx.add(
            "https://x.com/user1/status/1", "Post about Gorlan bridge", "Gorlan bridge opened in 1990, I was there"
        )
        searx.add(
            "https://facebook.com/groups/gorlan/2",
            "Gorlan bridge memories",
            "My grandfather saw the Gorlan bridge open in 1990 with a parade.",
        )
        searx.add(
            "https://reddit.com/r/gorlan/3",
            "TIL about the Gorlan bridge",
            "The Gorlan bridge was opened to traffic in 1990 according to the plaque.",
        )
        searx.add_raw({"url": "https://bad.example/x", "title": {"a": 1}, "content": ["Gorlan", 7]})
        settings = inprocess_settings(
            models.base_url,
            database_url,
            investigate_search_providers=["searxng"],
            searxng_url=searx.base_url,
            investigate_human_review=False,
        )
        async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
            gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
            events = [
                r.event
                async for r in gateway.Run(run_request("Officials say the Gorlan bridge opened in 1990."), timeout=60)
            ]
            result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result

    [outcome] = outcomes(events).values()
    assert outcome.status == investigation_pb2.INVESTIGATION_STATUS_REFUTED
    assert "stands on its own" in outcome.reasoning
    assert outcome.dropped_results == 1
    summary = next(e.investigation_complete for e in events if e.HasField("investigation_complete")).summary
    assert summary.dropped_results == 1
    [chain] = result.investigation.claims
    assert chain.queries[0].dropped_results == 1
    texts = [f"{e.result.source_title} {e.result.text}" for e in chain.evidence]
    assert len(texts) == 4 and not any("{'a'" in t or "'Gorlan', 7" in t or "bad.example" in t for t in texts)
    assert all(e.result.source_url != "https://bad.example/x" for e in chain.evidence)


GORLAN = "Officials say the Gorlan bridge carried 112,000 vehicles per day in 2019."
CONTENT = (
    f"{GORLAN} "
    "Paris had 2.1 million inhabitants in 2015. "
    "Paris had 2.0 million inhabitants in 2023. "
    "The Brora tower is 330 metres tall. "
    "The Brora tower is 450 metres tall."
)
QUESTION = "Is the Gorlan harbour safe for ferries?"


async def test_impact_reassessment_contradiction_links_and_the_report_after_review(models, database_url):
    models.reset()
    models.script("fake/checker-a", verdicts(default="UNVERIFIABLE"))
    models.script("fake/checker-b", verdicts(default="UNVERIFIABLE"))
    models.script(
        "fake/investigator",
        assessments_by_claim(
            {
                "Gorlan": {"apnews.com": "SUPPORTS"},
                "2023": {"census.gov": "SUPPORTS"},
                "330 metres": {"brora.gov": "SUPPORTS"},
            }
        ),
    )
    with FakeSearxng() as searx:
        searx.add(
            "https://apnews.com/article/gorlan-bridge",
            "AP: Gorlan bridge traffic",
            "The Gorlan bridge carried 112,000 vehicles per day in 2019, and that traffic makes the Gorlan harbour "
            "unsafe for ferries.",
        )
        searx.add(
            "https://www.census.gov/paris",
            "Census bureau: Paris inhabitants 2023",
            "Paris had 2.0 million inhabitants in 2023, down from earlier counts.",
        )
        searx.add(
            "https://www.brora.gov/tower",
            "Brora council: the tower",
            "The Brora tower is 330 metres tall, a survey shows.",
        )
        settings = inprocess_settings(
            models.base_url, database_url, investigate_search_providers=["searxng"], searxng_url=searx.base_url
        )
        async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
            gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
            reviews = investigation_pb2_grpc.ReviewServiceStub(channel)
            events = [r.event async for r in gateway.Run(run_request(CONTENT, QUESTION), timeout=60)]
            message_id = events[0].message_id
            before = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
            await reviews.DecideReview(
                investigation_pb2.DecideReviewRequest(
                    message_id=message_id,
                    claim_id="claim_1",
                    decision=investigation_pb2.REVIEW_DECISION_APPROVE,
                    reason="AP's report stands.",
                )
            )
            await reviews.DecideReview(
                investigation_pb2.DecideReviewRequest(
                    message_id=message_id,
                    claim_id="claim_4",
                    decision=investigation_pb2.REVIEW_DECISION_REJECT,
                    reason="The survey is disputed.",
                )
            )
            after = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result

    found = outcomes(events)
    by_id = {c.claim_id: c for c in before.investigation.claims}

    # Impact re-assessed once confirmed: promoted by evidence tying it to the question, demoted once its
    # contradiction is settled; the queue's tier is kept beside it.
    gorlan, paris_2023 = by_id["claim_1"], by_id["claim_3"]
    assert gorlan.proposed_status == investigation_pb2.INVESTIGATION_STATUS_CONFIRMED
    assert gorlan.impact_tier == investigation_pb2.IMPACT_TIER_LESS_CRITICAL
    assert gorlan.reassessed_impact_tier == investigation_pb2.IMPACT_TIER_CRITICAL
    assert "promoted" in gorlan.impact_reasoning and "harbour" in gorlan.impact_reasoning
    assert found["claim_1"].reassessed_impact_tier == investigation_pb2.IMPACT_TIER_CRITICAL
    assert found["claim_1"].pending_review  # promoted to CRITICAL: a person reviews it
    assert paris_2023.impact_tier == investigation_pb2.IMPACT_TIER_CRITICAL
    assert paris_2023.reassessed_impact_tier == investigation_pb2.IMPACT_TIER_LESS_CRITICAL
    assert "demoted" in paris_2023.impact_reasoning
    assert by_id["claim_2"].reassessed_impact_tier == investigation_pb2.IMPACT_TIER_UNSPECIFIED  # not confirmed

    # Contradictions: winner and loser linked both ways; temporal → SUPERSEDED, factual → REFUTED.
    def links(claim_id):
        return [(link.claim_id, link.role, link.kind) for link in by_id[claim_id].contradictions]

    temporal, factual = investigation_pb2.CONTRADICTION_KIND_TEMPORAL, investigation_pb2.CONTRADICTION_KIND_FACTUAL
    winner, loser = investigation_pb2.CONTRADICTION_ROLE_WINNER, investigation_pb2.CONTRADICTION_ROLE_LOSER
    assert links("claim_3") == [("claim_2", winner, temporal)]
    assert links("claim_2") == [("claim_3", loser, temporal)]
    assert by_id["claim_2"].proposed_status == investigation_pb2.INVESTIGATION_STATUS_SUPERSEDED
    assert links("claim_4") == [("claim_5", winner, factual)]
    assert links("claim_5") == [("claim_4", loser, factual)]
    assert by_id["claim_5"].proposed_status == investigation_pb2.INVESTIGATION_STATUS_REFUTED
    # The loser's outcome is sent again with its new status and its link.
    assert found["claim_2"].status == investigation_pb2.INVESTIGATION_STATUS_SUPERSEDED
    assert [(link.claim_id, link.role) for link in found["claim_2"].contradictions] == [("claim_3", loser)]
    summary = before.investigation.summary
    assert (summary.confirmed, summary.superseded, summary.refuted) == (3, 1, 1)

    # The report's Investigation section: pending before the decisions, the decisions after them.
    assert "- claim_1: CONFIRMED (pending human review)" in before.report.report_text
    text = after.report.report_text
    assert "- claim_1: CONFIRMED (approved by human review: AP's report stands.)" in text
    assert "- claim_4: CONFIRMED (rejected by human review, the first pass's verdict stands: " in text
    assert "claim_1: CONFIRMED (pending" not in text and "claim_4: CONFIRMED (pending" not in text
    assert "- claim_2: SUPERSEDED (pending human review)" in text  # still undecided
    assert text.startswith(before.report.report_text.split("\n\n## Investigation")[0])  # the body is kept
