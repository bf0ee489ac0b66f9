"""Claim-level citations with no network: local/ engines only, request sources,
on SQLite and PostgreSQL: events after the others, the stored rows, GetResult and ClaimsService."""

from __future__ import annotations

import grpc
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from factcheck.v1 import citations_pb2, citations_pb2_grpc, common_pb2, factcheck_pb2, factcheck_pb2_grpc
from factcheck_cli.html import render_page
from factcheck_gateway.claims.tables import (
    CitationCorrectionRow,
    CitationRow,
    ClaimRow,
    EvidenceSpanRow,
    NumericClaimRow,
    VerificationSummaryRow,
)
from factcheck_gateway.store.stage_store import StageStore
from tests.inprocess import inprocess_settings, serve_everything

SOURCES = [
    common_pb2.Source(
        id="eiffel",
        title="Eiffel Tower facts",
        url="https://example.org/eiffel",
        text=(
            "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. "
            "The tower is 330 metres tall. It was designed by the engineering company of Gustave Eiffel."
        ),
    ),
    common_pb2.Source(
        id="visitors",
        title="Visitor numbers",
        url="https://example.org/visitors",
        text="In 2019 the Eiffel Tower received 6.2 million visitors. Ticket prices rose in 2020.",
    ),
]
CONTENT = (
    "The Eiffel Tower was completed in 1889. The tower is 330 metres tall. "
    "In 2019 the Eiffel Tower received 9 million visitors. The tower was designed by Gustave Eiffel's company."
)
SPEC_SEQUENCE_TAIL = ["all_checkers_complete", "report_start", "report_complete", "title_complete", "complete"]


def offline_settings(database_url: str):
    return inprocess_settings(
        "http://127.0.0.1:9",  # nothing listens: every model here must be local/
        database_url,
        default_generator_model="local/generator",
        default_extractor_model="local/extractor",
        default_checker_models=["local/checker"],
        default_reporter_model="local/reporter",
    )


def request(citations: bool) -> factcheck_pb2.RunRequest:
    return factcheck_pb2.RunRequest(
        question="Check this paragraph about the Eiffel Tower",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        mode_config=factcheck_pb2.FactCheckConfig(
            content_to_check=CONTENT, sources=SOURCES, citations=citations, use_knowledge_store=False
        ),
    )


async def test_offline_citations_end_to_end(database_url):
    async with (
        serve_everything(offline_settings(database_url)) as running,
        grpc.aio.insecure_channel(running.target) as channel,
    ):
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        plain = [r.event async for r in stub.Run(request(False), timeout=60)]
        events = [r.event async for r in stub.Run(request(True), timeout=60)]
        message_id = events[0].message_id
        result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))).result
        plain_result = (await stub.GetResult(factcheck_pb2.GetResultRequest(message_id=plain[0].message_id))).result
        claims = citations_pb2_grpc.ClaimsServiceStub(channel)
        listed = await claims.ListClaims(citations_pb2.ListClaimsRequest(message_id=message_id))
        numeric = next(c for c in listed.claims if c.claim_type == citations_pb2.CITATION_CLAIM_TYPE_NUMERIC)
        detail = (await claims.GetClaim(citations_pb2.GetClaimRequest(claim_id=numeric.id))).claim

    plain_kinds = [e.WhichOneof("event") for e in plain]
    kinds = [e.WhichOneof("event") for e in events]
    # Off: the sequence of a run without options exactly. On: the same sequence with the new events after
    # all_checkers_complete.
    assert not {"claim_verified", "verification_summary"} & set(plain_kinds)
    spec_only = [
        k
        for k in kinds
        if k not in ("claim_verified", "numeric_claim_detected", "citation_corrected", "verification_summary")
    ]
    assert spec_only == plain_kinds
    after = kinds[kinds.index("all_checkers_complete") + 1 : kinds.index("report_start")]
    assert after[0] == "claim_verified" and after[-1] == "verification_summary"
    assert after.count("claim_verified") == len(result.extraction.claims) == 4
    assert "numeric_claim_detected" in after

    verified = [e.claim_verified for e in events if e.WhichOneof("event") == "claim_verified"]
    summary = next(e for e in events if e.WhichOneof("event") == "verification_summary").verification_summary.summary
    assert summary.total_claims == 4
    assert (
        summary.supported + summary.partial + summary.unsupported + summary.contradicted + summary.abstained_count == 4
    )
    tall = next(v for v in verified if "330 metres" in v.claim_text)
    assert tall.verdict == citations_pb2.SUPPORT_TIER_SUPPORTED and "330 metres" in tall.evidence_preview

    # The 9 million visitors claim: numeric, QA finds 6.2 million in the cited span and does not match.
    visitors = next(c for c in result.citations.claims if "9 million visitors" in c.claim_text)
    assert visitors.claim_type == citations_pb2.CITATION_CLAIM_TYPE_NUMERIC
    [qa] = visitors.numeric_detail.qa_verification
    assert (qa.claim_answer, qa.evidence_answer, qa.match) == ("9 million visitors", "6.2 million visitors", False)
    assert result.citations.summary == summary

    # Every stored span is verbatim in its source at the stored offsets.
    texts = {s.id: s.text for s in SOURCES}
    store = StageStore(database_url)
    try:
        with Session(store.engine) as session:
            spans = session.scalars(select(EvidenceSpanRow).where(EvidenceSpanRow.message_id == message_id)).all()
            assert spans and all(texts[s.source_id][s.start_offset : s.end_offset] == s.quote_text for s in spans)
            assert (
                session.scalar(select(func.count()).select_from(ClaimRow).where(ClaimRow.message_id == message_id)) == 4
            )
            assert (session.scalar(select(func.count()).select_from(CitationRow)) or 0) >= 1
            assert (session.scalar(select(func.count()).select_from(NumericClaimRow)) or 0) >= 1
            row = session.get(VerificationSummaryRow, message_id)
            assert row is not None and row.total_claims == 4 and row.warning == summary.warning
            assert (
                session.scalar(select(func.count()).select_from(CitationCorrectionRow)) == summary.citation_corrections
            )
    finally:
        store.close()

    # The HTML report: spans with the source's link and the quote marked, and the numeric comparison table.
    page = render_page(result)
    assert '<section class="card" id="citations">' in page and 'href="https://example.org/eiffel"' in page
    assert "<mark>The tower is 330 metres tall.</mark>" in page
    assert "<td>9 million visitors</td>" in page and "<td>6.2 million visitors</td>" in page and "no match" in page
    assert 'id="citations"' not in render_page(plain_result)  # a run without citations has no section

    assert numeric.message_id == message_id and numeric.numeric_detail.number.raw_value
    assert detail.id == numeric.id and detail.citations and detail.numeric_detail.qa_verification
