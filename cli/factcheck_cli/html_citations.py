"""The HTML report's claim-level citations section: what `fact_check.html.j2` shows per claim
(its four-tier support, its spans with the source's title and link and the quote highlighted in its
passage, the corrections made) and the table of numeric comparisons (claimed value against the
evidence's, both normalised). Plain values only: the template escapes everything and builds the markup;
only http(s) source links become links.
"""

from __future__ import annotations

from factcheck.v1 import citations_pb2, factcheck_pb2

CONTEXT_CHARS = 240


def tier_of(claim: citations_pb2.ClaimRecord) -> str:
    if claim.abstained:
        return "abstained"
    return citations_pb2.SupportTier.Name(claim.support).removeprefix("SUPPORT_TIER_").lower()


def citations_context(result: factcheck_pb2.FactCheckResult) -> dict | None:
    """The section's values, or None for a run without citations."""
    if not result.HasField("citations") or not result.citations.claims:
        return None
    summary = result.citations.summary
    return {
        "summary": summary,
        "unsupported_rate": f"{summary.unsupported_rate:.0%}",
        "contradicted_rate": f"{summary.contradicted_rate:.0%}",
        "claims": [_claim(claim, result) for claim in result.citations.claims],
        "numbers": _numbers(result.citations.claims),
    }


def _claim(claim: citations_pb2.ClaimRecord, result: factcheck_pb2.FactCheckResult) -> dict:
    return {
        "key": claim.claim_key,
        "text": claim.claim_text,
        "tier": tier_of(claim),
        "level": citations_pb2.ConfidenceLevel.Name(claim.confidence_level).removeprefix("CONFIDENCE_LEVEL_").lower(),
        "reasoning": claim.verification_reasoning,
        "spans": [_span(link, result) for link in claim.citations],
        "corrections": [
            {
                "kind": citations_pb2.CorrectionType.Name(c.correction_type).removeprefix("CORRECTION_TYPE_").lower(),
                "reasoning": c.reasoning,
            }
            for c in claim.corrections
        ],
    }


def _span(link: citations_pb2.CitationLink, result: factcheck_pb2.FactCheckResult) -> dict:
    span = link.evidence_span
    before, quote, after = _in_passage(span, result)
    return {
        "role": "primary" if link.is_primary else "alternate",
        "title": span.source_title or span.source_id,
        "url": span.source_url if span.source_url.startswith(("http://", "https://")) else "",
        "before": before,
        "quote": quote,
        "after": after,
    }


def _in_passage(span: citations_pb2.EvidenceSpan, result: factcheck_pb2.FactCheckResult) -> tuple[str, str, str]:
    """(text before, the quote, text after) within its passage; the quote alone when no passage holds it."""
    for passage in result.evidence.passages:
        if (
            passage.source_id == span.source_id
            and passage.start_offset <= span.start_offset
            and span.end_offset <= passage.end_offset
        ):
            start, end = span.start_offset - passage.start_offset, span.end_offset - passage.start_offset
            before = passage.text[max(0, start - CONTEXT_CHARS) : start]
            return before, passage.text[start:end], passage.text[end : end + CONTEXT_CHARS]
    return "", span.quote_text, ""


def _numbers(claims) -> list[dict]:
    rows = []
    for claim in claims:
        if not claim.HasField("numeric_detail"):
            continue
        detail = claim.numeric_detail
        for qa in detail.qa_verification or [citations_pb2.QAVerification(claim_answer=detail.number.raw_value)]:
            claimed = qa.claim_normalised if qa.HasField("claim_normalised") else detail.number
            rows.append(
                {
                    "key": claim.claim_key,
                    "entity": detail.entity_reference,
                    "claimed": qa.claim_answer,
                    "claimed_value": _value(claimed),
                    "evidence": qa.evidence_answer or "not stated",
                    "evidence_value": _value(qa.evidence_normalised) if qa.HasField("evidence_normalised") else "—",
                    "match": "match" if qa.match else "no match",
                    "why": qa.explanation,
                }
            )
    return rows


def _value(number: citations_pb2.NormalisedNumber) -> str:
    if not number.HasField("value"):
        return "—"
    return f"{number.value:,.6g} {number.unit}".strip()
