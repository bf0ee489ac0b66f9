"""Claim-level citations through the real services with the scripted fake model server,
on SQLite and PostgreSQL: the Support lines and their server-side rules, confidence-level routing,
the review pass (corrections and numeric QA) and its failure, the stored rows and the events."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from factcheck.v1 import citations_pb2, common_pb2, factcheck_pb2
from factcheck_gateway.claims.tables import CitationCorrectionRow, CitationRow, ClaimRow, EvidenceSpanRow
from tests import conftest
from tests.conftest import CHECKERS, content_request, payload, run_events
from tests.fake_model_server import extraction_levels, fail, review, verdicts

pytestmark = pytest.mark.e2e
# The session's shared suite (conftest.py), with its fake model server.
fake_models = conftest.shared_fake_models

CONTENT = (
    "The Paris Agreement was adopted in 2015 by 196 parties. "
    "Mount Everest is 8,849 metres tall. "
    "The Moon is made of cheese."
)
PARIS = common_pb2.Source(
    id="un-paris",
    title="UN: The Paris Agreement",
    url="https://example.org/paris",
    text="The Paris Agreement was adopted in 2015 by 196 parties at COP21. It entered into force in 2016.",
)
EVEREST = common_pb2.Source(
    id="everest",
    title="Mount Everest facts",
    url="https://example.org/everest",
    text="Mount Everest is 8,849 metres tall, the highest mountain above sea level. Its height was measured in 2020.",
)
NEW_EVENTS = ("claim_verified", "numeric_claim_detected", "citation_corrected", "verification_summary")


def cited(events) -> dict[str, citations_pb2.ClaimVerifiedPayload]:
    return {e.claim_verified.claim_key: e.claim_verified for e in events if e.WhichOneof("event") == "claim_verified"}


def citation_request(**config):
    return content_request(CONTENT, sources=[PARIS, EVEREST], use_knowledge_store=False, citations=True, **config)


async def test_tiers_routing_review_rows_and_events(gateway, store, fake_models):
    # claim_3 ("The Moon is made of cheese.") is LOW: one checker abstains, so it is not judged.
    fake_models.script(
        "fake/extractor", extraction_levels({1: "HIGH", 2: "HIGH", 3: "LOW"}, {2: "height of Mount Everest"})
    )
    # The second checker says SUPPORTED for claim_2 but DISPUTED: it disagrees with itself → abstains (rule 4).
    fake_models.script(
        CHECKERS[1],
        verdicts(
            {"claim_2": "DISPUTED"},
            cite="quote",
            support={"claim_1": "PARTIAL", "claim_2": "SUPPORTED", "claim_3": "SUPPORTED"},
        ),
    )
    fake_models.script(
        CHECKERS[0],  # the review (first checker model by default) comes after its Verify answer
        verdicts(cite="quote", support={"claim_1": "SUPPORTED", "claim_2": "SUPPORTED", "claim_3": "ABSTAIN"}),
        review(
            decisions={
                "claim_1": ("ADD_ALTERNATE", "P2", "Its height was measured in 2020."),
                "claim_2": ("REMOVE", "", ""),
            },
            answers={"claim_2": ("8,849 metres", "P2", "8,849 metres")},
        ),
    )
    events = await run_events(gateway, citation_request())
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[-1] == "complete"
    after = kinds[kinds.index("all_checkers_complete") + 1 : kinds.index("report_start")]
    # claim_1 (196 parties) and claim_2 (8,849 metres) are numeric.
    assert after == ["claim_verified"] * 3 + ["numeric_claim_detected"] * 2 + ["citation_corrected"] * 2 + [
        "verification_summary"
    ]

    by_key = cited(events)
    # claim_1: SUPPORTED + PARTIAL → PARTIAL (SUPPORTED needs more than half of the votes).
    assert by_key["claim_1"].verdict == citations_pb2.SUPPORT_TIER_PARTIAL
    assert by_key["claim_1"].evidence_preview == "The Paris Agreement was adopted in"  # the first six words
    # claim_2: one SUPPORTED vote, one abstention (self-contradiction): abstentions are not a majority.
    assert by_key["claim_2"].verdict == citations_pb2.SUPPORT_TIER_SUPPORTED
    # claim_3 is LOW and a checker abstained: abstained, whatever the other says.
    assert by_key["claim_3"].abstained and by_key["claim_3"].confidence_level == citations_pb2.CONFIDENCE_LEVEL_LOW

    parties, numeric = [e.numeric_claim_detected for e in events if e.WhichOneof("event") == "numeric_claim_detected"]
    assert (parties.raw_value, parties.unit, parties.qa_verified) == ("196 parties", "party", False)  # no QA answer
    assert (numeric.raw_value, numeric.normalized_value, numeric.unit) == ("8,849 metres", 8849.0, "m")
    assert numeric.qa_verified and numeric.entity_reference == "height of Mount Everest"

    corrections = [e.citation_corrected for e in events if e.WhichOneof("event") == "citation_corrected"]
    assert [c.correction_type for c in corrections] == [
        citations_pb2.CORRECTION_TYPE_ADD_ALTERNATE,
        citations_pb2.CORRECTION_TYPE_REMOVE,
    ]
    assert corrections[0].corrected_evidence.quote_text == "Its height was measured in 2020."
    assert EVEREST.text[
        corrections[0].corrected_evidence.start_offset : corrections[0].corrected_evidence.end_offset
    ] == ("Its height was measured in 2020.")
    # Removing claim_2's only citation leaves its SUPPORTED tier without a quote: it becomes abstained.
    assert [c.claim_abstained for c in corrections] == [False, True]
    summary = payload(events, "verification_summary").summary
    assert (summary.supported, summary.partial, summary.abstained_count, summary.citation_corrections) == (0, 1, 2, 2)
    assert summary.warning  # two claims in three without support: 67% > 20%

    message_id = events[0].message_id
    with Session(store.engine) as session:
        claims = {c.claim_key: c for c in session.scalars(select(ClaimRow).where(ClaimRow.message_id == message_id))}
        assert claims["claim_1"].verification_verdict == "partial" and claims["claim_1"].spec_verdict == "VERIFIED"
        assert claims["claim_3"].abstained and claims["claim_3"].verification_verdict is None
        links = session.scalars(select(CitationRow).where(CitationRow.claim_id == claims["claim_1"].id)).all()
        assert sorted(link.is_primary for link in links) == [False, True]
        assert claims["claim_2"].abstained and claims["claim_2"].verification_verdict is None
        for removed in ("claim_2", "claim_3"):  # claim_2's citation was removed; claim_3 had no passage
            assert not session.scalars(select(CitationRow).where(CitationRow.claim_id == claims[removed].id)).all()
        types = sorted(
            c.correction_type
            for c in session.scalars(select(CitationCorrectionRow)).all()
            if c.claim_id in {r.id for r in claims.values()}
        )
        assert types == ["add_alternate", "remove"]
        sources = {
            s.source_id: (PARIS if s.source_id == "un-paris" else EVEREST).text
            for s in session.scalars(select(EvidenceSpanRow).where(EvidenceSpanRow.message_id == message_id))
        }
        assert set(sources) == {"un-paris", "everest"}

    # The Support section was sent, naming the LOW claim; the review prompt carried the numeric claim.
    verify_prompts = [r.prompt for r in fake_models.requests if r.kind == "verify"]
    assert all("\nSUPPORT:\n" in p and "them): claim_3" in p for p in verify_prompts)
    [review_prompt] = [r.prompt for r in fake_models.requests if r.kind == "review"]
    assert "NUMERIC: 8,849 metres (entity: height of Mount Everest)" in review_prompt

    result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
    assert result.citations.summary == summary
    assert [c.claim_key for c in result.citations.claims] == ["claim_1", "claim_2", "claim_3"]
    report = store.get_stages(message_id)
    report_row = next(s for s in report if s.stage_type == "report")
    assert report_row.parsed_data["verificationSummary"]["warning"] is True


async def test_without_the_option_nothing_changes(gateway, store, fake_models):
    for model in CHECKERS:
        fake_models.script(model, verdicts(cite="quote"))
    events = await run_events(gateway, content_request(CONTENT, sources=[PARIS, EVEREST], use_knowledge_store=False))
    kinds = [e.WhichOneof("event") for e in events]
    assert not set(NEW_EVENTS) & set(kinds)
    assert all("SUPPORT:" not in r.prompt for r in fake_models.requests if r.kind == "verify")
    assert not [r for r in fake_models.requests if r.kind == "review"]
    assert all("CLAIM DETAIL:" not in r.prompt for r in fake_models.requests if r.kind == "extract")
    with Session(store.engine) as session:
        assert not session.scalars(select(ClaimRow).where(ClaimRow.message_id == events[0].message_id)).all()


async def test_forged_quotes_and_missing_support_lines_abstain(gateway, fake_models):
    # No Support lines and quotes that are in no passage: every tier must rest on a kept quote, so all abstain.
    for model in CHECKERS:
        fake_models.script(model, verdicts(cite="forged"))
    events = await run_events(gateway, citation_request())
    assert all(v.abstained for v in cited(events).values())
    summary = payload(events, "verification_summary").summary
    assert summary.abstained_count == 3 and summary.warning


async def test_a_failed_review_keeps_the_verified_citations(gateway, fake_models):
    fake_models.script(CHECKERS[0], verdicts(cite="quote", support="SUPPORTED"), fail(500), fail(500))
    fake_models.script(CHECKERS[1], verdicts(cite="quote", support="SUPPORTED"))
    events = await run_events(gateway, citation_request())
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[-1] == "complete" and "citation_corrected" not in kinds
    summary = payload(events, "verification_summary").summary
    assert summary.citation_corrections == 0 and summary.supported >= 1
    result = (await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=events[0].message_id))).result
    assert any(f.stage == "citations" for f in result.failures)


async def test_citations_with_pipelined_is_invalid(gateway):
    import grpc

    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await run_events(gateway, citation_request(pipelined=True))
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "pipelined" in (raised.value.details() or "")
