"""The verification loop end to end: fact-check mode with `investigate`, through the real
services in process, on SQLite and PostgreSQL. Checkers and the investigator are scripted on the
fake model server; evidence comes from the request's sources (the knowledge provider) or the
scripted SearxNG server."""

from __future__ import annotations

import grpc
import pytest

from factcheck.v1 import common_pb2, factcheck_pb2, factcheck_pb2_grpc, investigation_pb2, investigation_pb2_grpc
from tests.fake_model_server import FakeModelServer, assessments, verdicts
from tests.fake_searxng import FakeSearxng
from tests.inprocess import inprocess_settings, serve_everything

CONTENT = (
    "Officials say the Golden Gate Bridge carried 112,000 vehicles per day in 2019. "
    "The Eiffel Tower is 330 metres tall. "
    "Paris had 2.1 million inhabitants in 2015. "
    "Dozens of countries signed the Paris climate agreement. "
    "The Loch Ness monster was sighted 12 times in 1934."
)
SOURCES = [
    common_pb2.Source(
        id="ap-bridge",
        title="AP: Golden Gate Bridge traffic",
        url="https://apnews.com/article/golden-gate-bridge-traffic",
        text="The Golden Gate Bridge carried 112,000 vehicles per day in 2019, a bridge district spokesperson said.",
    ),
    common_pb2.Source(
        id="paris-2015",
        title="City statistics: Paris inhabitants 2015",
        url="https://paris-stats.example/2015",
        text="Paris had 2.1 million inhabitants in 2015 according to the census count.",
        published_at="2016-01-10",
    ),
    common_pb2.Source(
        id="paris-2023",
        title="Census bureau: Paris inhabitants 2023",
        url="https://www.census.gov/paris-inhabitants",
        text="Paris had 2.0 million inhabitants in 2023, down from earlier counts.",
        published_at="2024-02-01",
    ),
    common_pb2.Source(
        id="news-a",
        title="News A: climate agreement signatories",
        url="https://news-a.example/climate",
        text="The Paris climate agreement was signed by 195 countries, far more than dozens, in a ceremony in New York.",
    ),
    common_pb2.Source(
        id="news-a-copy",
        title="Syndicated: climate agreement signatories",
        url="https://syndicator.example/climate",
        text="The Paris climate agreement was signed by 195 countries, far more than dozens, in a ceremony in New York.",
    ),
    common_pb2.Source(
        id="news-b",
        title="News B: who signed the climate agreement",
        url="https://news-b.example/agreement",
        text="Countries that signed the Paris climate agreement number 195, the UN registry shows.",
    ),
]
INVESTIGATOR_RULES = {
    "apnews.com": "SUPPORTS",
    "paris-stats.example": "SUPPORTS",
    "census.gov": "REFUTES TEMPORAL",
    "news-a.example": "REFUTES",
    "syndicator.example": "REFUTES",
    "news-b.example": "REFUTES",
}


def kinds(events) -> list[str]:
    return [e.WhichOneof("event") for e in events]


def script_models(models: FakeModelServer) -> None:
    unverifiable = {"claim_1": "UNVERIFIABLE", "claim_4": "UNVERIFIABLE", "claim_5": "UNVERIFIABLE"}
    models.script("fake/checker-a", verdicts(unverifiable))
    models.script("fake/checker-b", verdicts({**unverifiable, "claim_3": "DISPUTED"}))
    models.script("fake/investigator", assessments(INVESTIGATOR_RULES))


def request(**config) -> factcheck_pb2.RunRequest:
    return factcheck_pb2.RunRequest(
        question="Fact-check this paragraph",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(
            content_to_check=CONTENT, investigate=True, investigator_model="fake/investigator", **config
        ),
    )


@pytest.fixture(scope="module")
def models():
    with FakeModelServer() as server:
        yield server


async def test_offline_loop_reclassifies_reviews_and_stores_the_evidence_chain(models, database_url):
    models.reset()
    script_models(models)
    settings = inprocess_settings(models.base_url, database_url)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        reviews = investigation_pb2_grpc.ReviewServiceStub(channel)
        events = [r.event async for r in gateway.Run(request(sources=SOURCES), timeout=60)]
        message_id = events[0].message_id
        result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result

        # The stage sits between all_checkers_complete and the report.
        order = kinds(events)
        assert order[order.index("all_checkers_complete") + 1] == "investigation_start"
        assert order[order.index("investigation_complete") + 1] == "report_start"
        assert order[-1] == "complete"
        start = next(e.investigation_start for e in events if e.HasField("investigation_start"))
        queued = [q.claim_id for q in start.queue]
        assert "claim_2" not in queued  # unanimous, unflagged: not dubious
        assert start.queue[0].claim_id == "claim_3"  # ANOMALY (split vote) → CRITICAL first
        assert [q.priority for q in start.queue] == sorted((q.priority for q in start.queue), reverse=True)

        outcomes = {
            e.claim_investigated.claim_id: e.claim_investigated for e in events if e.HasField("claim_investigated")
        }
        assert set(outcomes) == set(queued)
        bridge, paris, signed, loch = outcomes["claim_1"], outcomes["claim_3"], outcomes["claim_4"], outcomes["claim_5"]
        assert bridge.status == investigation_pb2.INVESTIGATION_STATUS_CONFIRMED
        assert investigation_pb2.DUBIOUS_FLAG_PHANTOM in bridge.origin_flags
        assert bridge.succeeded_variant == "source_chain" and not bridge.pending_review
        assert round(bridge.confidence, 2) == round(0.5 + 0.3, 2)  # HIGH first pass 0.5, one wire +0.3
        assert paris.status == investigation_pb2.INVESTIGATION_STATUS_SUPERSEDED and paris.pending_review
        assert investigation_pb2.DUBIOUS_FLAG_ANOMALY in paris.origin_flags
        assert signed.status == investigation_pb2.INVESTIGATION_STATUS_REFUTED
        assert investigation_pb2.DUBIOUS_FLAG_FOG in signed.origin_flags
        assert loch.status == investigation_pb2.INVESTIGATION_STATUS_UNVERIFIABLE
        assert "exhausted" in loch.reasoning and loch.searches == 3 and loch.succeeded_variant == ""

        # The report uses the outcomes in force and marks the pending one.
        report = next(e.report_complete for e in events if e.HasField("report_complete"))
        assert "## Investigation" in report.report_text
        assert "claim_3: SUPERSEDED (pending human review)" in report.report_text

        # The stored result: evidence chains, syndicated copy counted once, pending review.
        investigation = result.investigation
        assert investigation.summary.investigated == 4 and investigation.summary.pending_review == 1
        by_id = {c.claim_id: c for c in investigation.claims}
        chain = by_id["claim_4"]
        assert [q.variant for q in chain.queries][:1] == ["entity"]
        copies = [e for e in chain.evidence if e.result.source_id in ("news-a", "news-a-copy")]
        assert len(copies) == 2 and sum(e.independent for e in copies) == 1
        assert [b.boost for b in chain.confidence_breakdown] == [0.2, 0.2]
        assert by_id["claim_3"].review_state == investigation_pb2.REVIEW_STATE_PENDING
        assert by_id["claim_3"].status == investigation_pb2.INVESTIGATION_STATUS_UNSPECIFIED
        assert by_id["claim_3"].proposed_status == investigation_pb2.INVESTIGATION_STATUS_SUPERSEDED
        assert by_id["claim_1"].review_state == investigation_pb2.REVIEW_STATE_NOT_REQUIRED

        # Human review: list, decide, see the event and the updated result.
        listed = await reviews.ListReviews(investigation_pb2.ListReviewsRequest(message_id=message_id))
        assert [(r.claim_id, r.state) for r in listed.reviews] == [("claim_3", investigation_pb2.REVIEW_STATE_PENDING)]
        with pytest.raises(grpc.aio.AioRpcError) as missing_reason:
            await reviews.DecideReview(
                investigation_pb2.DecideReviewRequest(
                    message_id=message_id, claim_id="claim_3", decision=investigation_pb2.REVIEW_DECISION_APPROVE
                )
            )
        assert missing_reason.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        decided = await reviews.DecideReview(
            investigation_pb2.DecideReviewRequest(
                message_id=message_id,
                claim_id="claim_3",
                decision=investigation_pb2.REVIEW_DECISION_APPROVE,
                reason="The census bureau's 2023 count is the current figure.",
            )
        )
        assert decided.review.state == investigation_pb2.REVIEW_STATE_APPROVED
        with pytest.raises(grpc.aio.AioRpcError) as twice:
            await reviews.DecideReview(
                investigation_pb2.DecideReviewRequest(
                    message_id=message_id,
                    claim_id="claim_3",
                    decision=investigation_pb2.REVIEW_DECISION_REJECT,
                    reason="again",
                )
            )
        assert twice.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        watched = [
            r.event
            async for r in gateway.Watch(
                factcheck_pb2.WatchRequest(message_id=message_id, after_seq=events[-1].seq), timeout=10
            )
        ]
        assert kinds(watched) == ["review_decided"] and watched[0].seq == events[-1].seq + 1
        assert watched[0].review_decided.status == investigation_pb2.INVESTIGATION_STATUS_SUPERSEDED
        after = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
        paris_after = next(c for c in after.investigation.claims if c.claim_id == "claim_3")
        assert paris_after.review_state == investigation_pb2.REVIEW_STATE_APPROVED
        assert paris_after.status == investigation_pb2.INVESTIGATION_STATUS_SUPERSEDED
        assert paris_after.review_reason.startswith("The census bureau")
        pending = await reviews.ListReviews(investigation_pb2.ListReviewsRequest(message_id=message_id))
        assert list(pending.reviews) == []


BRIDGE = "Officials say the Golden Gate Bridge carried 112,000 vehicles per day in 2019."


async def test_the_loop_searches_a_searxng_server_and_retries_a_failing_one(models, database_url):
    models.reset()
    models.script("fake/checker-a", verdicts(default="UNVERIFIABLE"))
    models.script("fake/checker-b", verdicts(default="UNVERIFIABLE"))
    models.script("fake/investigator", assessments({"apnews.com": "SUPPORTS", "reuters.com": "SUPPORTS"}))
    with FakeSearxng() as searx:
        searx.add(
            url="https://apnews.com/article/bridge",
            title="Golden Gate Bridge traffic in 2019",
            content="The Golden Gate Bridge carried 112,000 vehicles per day in 2019, district spokesperson said.",
            published="2020-01-05T00:00:00",
        )
        searx.add(url="https://example.com/unrelated", title="Cooking", content="Bridge recipes for 2019 cakes.")
        settings = inprocess_settings(
            models.base_url,
            database_url,
            investigate_search_providers=["searxng"],
            searxng_url=searx.base_url,
            investigate_human_review=False,
        )
        async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
            gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
            run = factcheck_pb2.RunRequest(
                question="Check this",
                mode=factcheck_pb2.MODE_FACT_CHECK,
                mode_config=factcheck_pb2.FactCheckConfig(
                    content_to_check=BRIDGE, investigate=True, investigator_model="fake/investigator"
                ),
            )
            events = [r.event async for r in gateway.Run(run, timeout=60)]
            [outcome] = [e.claim_investigated for e in events if e.HasField("claim_investigated")]
            assert outcome.status == investigation_pb2.INVESTIGATION_STATUS_CONFIRMED
            assert outcome.succeeded_variant == "source_chain" and outcome.searches == 1
            assert "spokesperson" in searx.queries[0] and "Officials" not in searx.queries[0]
            result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
            [chain] = result.investigation.claims
            supporting = [e for e in chain.evidence if e.stance == investigation_pb2.EVIDENCE_STANCE_SUPPORTS]
            assert [(e.provider, e.domain, e.result.source_url) for e in supporting] == [
                ("searxng", "apnews.com", "https://apnews.com/article/bridge")
            ]
            assert supporting[0].result.authority == 0.9 and supporting[0].result.published_at.startswith("2020")

            # The search engine down: the claim is retried once in a later batch, then UNVERIFIABLE.
            searx.fail_with(503)
            asked = len(searx.queries)
            events = [r.event async for r in gateway.Run(run, timeout=60)]
            [outcome] = [e.claim_investigated for e in events if e.HasField("claim_investigated")]
            assert outcome.status == investigation_pb2.INVESTIGATION_STATUS_UNVERIFIABLE
            assert "failed twice" in outcome.reasoning and outcome.batch == 2
            assert len(searx.queries) - asked == 2
            summary = next(e.investigation_complete for e in events if e.HasField("investigation_complete")).summary
            assert summary.failed == 1 and summary.batches == 2
            assert [e.WhichOneof("event") for e in events][-1] == "complete"


async def test_cancel_stops_the_loop(models, database_url):
    models.reset()
    models.script("fake/checker-a", verdicts(default="UNVERIFIABLE"))
    models.script("fake/checker-b", verdicts(default="UNVERIFIABLE"))
    models.set_latency("fake/investigator", 30)
    settings = inprocess_settings(models.base_url, database_url)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        seen = []
        async for response in gateway.Run(request(sources=SOURCES), timeout=60):
            seen.append(response.event)
            if response.event.HasField("investigation_start"):
                await gateway.Cancel(factcheck_pb2.CancelRequest(message_id=response.event.message_id))
        assert kinds(seen)[-1] == "cancelled"
        # Claims with no search results resolve at once; those waiting on the slow model never do.
        queued = next(e.investigation_start for e in seen if e.HasField("investigation_start")).queue
        assert kinds(seen).count("claim_investigated") < len(queued)
        assert "investigation_complete" not in kinds(seen) and "report_start" not in kinds(seen)
        result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=seen[0].message_id))).result
        assert result.status == factcheck_pb2.MESSAGE_STATUS_CANCELLED


async def test_the_option_is_checked_and_off_by_default(models, database_url):
    models.reset()
    settings = inprocess_settings(models.base_url, database_url)
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        plain = factcheck_pb2.RunRequest(
            question="q",
            mode=factcheck_pb2.MODE_FACT_CHECK,
            mode_config=factcheck_pb2.FactCheckConfig(content_to_check=CONTENT),
        )
        events = [r.event async for r in gateway.Run(plain, timeout=60)]
        assert not any(k.startswith(("investigation", "claim_investigated")) for k in kinds(events))
        for config, field in (
            (
                factcheck_pb2.FactCheckConfig(content_to_check=CONTENT, investigate_batch_size=3),
                "investigate_batch_size",
            ),
            (
                factcheck_pb2.FactCheckConfig(content_to_check=CONTENT, investigate=True, investigate_batch_size=50),
                "investigate_batch_size",
            ),
            (
                factcheck_pb2.FactCheckConfig(content_to_check=CONTENT, investigate=True, investigator_model="nope"),
                "investigator_model",
            ),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                async for _ in gateway.Run(
                    factcheck_pb2.RunRequest(question="q", mode=factcheck_pb2.MODE_FACT_CHECK, mode_config=config),
                    timeout=10,
                ):
                    pass
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert field in (refused.value.details() or "")
