"""The HTML report's claim-level citations section (issue 17): per claim its four-tier support, its spans
with the source's title and link and the quote highlighted in its passage, the corrections made, and a
table of numeric comparisons (claimed value against the evidence's, both normalised).

Every text comes from the stored result and is escaped; only http(s) source links become links.
"""

from __future__ import annotations

from html import escape

from factcheck.v1 import citations_pb2, factcheck_pb2

STYLE = """<style>
.cite-claim { border-top: 1px solid var(--border); padding: 10px 0; }
.tier { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; font-weight: 600; }
.tier-supported { background: var(--verified-bg); color: var(--verified); }
.tier-partial { background: #fff8c5; color: #9a6700; }
.tier-unsupported, .tier-abstained { background: var(--unverifiable-bg); color: var(--unverifiable); }
.tier-contradicted { background: var(--disputed-bg); color: var(--disputed); }
.span { margin: 6px 0 6px 16px; font-size: 14px; } .span mark { background: #fff3b0; }
.correction { margin-left: 16px; font-size: 13px; color: var(--muted); }
table.numbers { border-collapse: collapse; width: 100%; font-size: 14px; }
table.numbers td, table.numbers th { border: 1px solid var(--border); padding: 4px 8px; text-align: left; }
.warn { color: var(--poor); font-weight: 600; }
</style>"""
CONTEXT_CHARS = 240


def esc(text: str) -> str:
    return escape(text, quote=True)


def tier_of(claim: citations_pb2.ClaimRecord) -> str:
    if claim.abstained:
        return "abstained"
    return citations_pb2.SupportTier.Name(claim.support).removeprefix("SUPPORT_TIER_").lower()


def citations_section(result: factcheck_pb2.FactCheckResult) -> str:
    """The section, or "" for a run without citations."""
    if not result.HasField("citations") or not result.citations.claims:
        return ""
    summary = result.citations.summary
    head = (
        f"<h2>Claim-level citations</h2><p>{summary.supported} supported · {summary.partial} partial · "
        f"{summary.unsupported} unsupported · {summary.contradicted} contradicted · {summary.abstained_count} abstained · "
        f"{summary.citation_corrections} corrections. Unsupported rate {summary.unsupported_rate:.0%}, "
        f"contradicted rate {summary.contradicted_rate:.0%}."
        + (' <span class="warn">Warning: too many claims lack support.</span>' if summary.warning else "")
        + "</p>"
    )
    claims = "".join(_claim(claim, result) for claim in result.citations.claims)
    return f'<section class="card" id="citations">{STYLE}{head}{claims}{_numbers(result.citations.claims)}</section>'


def _claim(claim: citations_pb2.ClaimRecord, result: factcheck_pb2.FactCheckResult) -> str:
    tier = tier_of(claim)
    spans = "".join(_span(link, result) for link in claim.citations) or '<div class="span muted">No citation.</div>'
    corrections = "".join(
        f'<div class="correction">Correction: '
        f"{esc(citations_pb2.CorrectionType.Name(c.correction_type).removeprefix('CORRECTION_TYPE_').lower())}"
        f" — {esc(c.reasoning)}</div>"
        for c in claim.corrections
    )
    return (
        f'<div class="cite-claim"><strong>{esc(claim.claim_key)}</strong> {esc(claim.claim_text)} '
        f'<span class="tier tier-{tier}">{esc(tier)}</span> '
        f'<span class="muted small">{esc(citations_pb2.ConfidenceLevel.Name(claim.confidence_level).removeprefix("CONFIDENCE_LEVEL_").lower())} confidence</span>'
        f'<div class="muted small">{esc(claim.verification_reasoning)}</div>{spans}{corrections}</div>'
    )


def _span(link: citations_pb2.CitationLink, result: factcheck_pb2.FactCheckResult) -> str:
    span = link.evidence_span
    title = esc(span.source_title or span.source_id)
    url = span.source_url
    source = (
        f'<a href="{esc(url)}" rel="noopener noreferrer">{title}</a>'
        if url.startswith(("http://", "https://"))
        else title
    )
    role = "primary" if link.is_primary else "alternate"
    return f'<div class="span">[{role}] {source}: {_highlighted(span, result)}</div>'


def _highlighted(span: citations_pb2.EvidenceSpan, result: factcheck_pb2.FactCheckResult) -> str:
    """The quote marked inside its passage (some context on each side), or the quote alone."""
    for passage in result.evidence.passages:
        if (
            passage.source_id == span.source_id
            and passage.start_offset <= span.start_offset
            and span.end_offset <= passage.end_offset
        ):
            start, end = span.start_offset - passage.start_offset, span.end_offset - passage.start_offset
            before = passage.text[max(0, start - CONTEXT_CHARS) : start]
            after = passage.text[end : end + CONTEXT_CHARS]
            return f"…{esc(before)}<mark>{esc(passage.text[start:end])}</mark>{esc(after)}…"
    return f"<mark>{esc(span.quote_text)}</mark>"


def _numbers(claims) -> str:
    rows = []
    for claim in claims:
        if not claim.HasField("numeric_detail"):
            continue
        detail = claim.numeric_detail
        for qa in detail.qa_verification or [citations_pb2.QAVerification(claim_answer=detail.number.raw_value)]:
            claimed = qa.claim_normalised if qa.HasField("claim_normalised") else detail.number
            stated = qa.evidence_normalised
            rows.append(
                "<tr>"
                f"<td>{esc(claim.claim_key)}</td><td>{esc(detail.entity_reference)}</td>"
                f"<td>{esc(qa.claim_answer)}</td><td>{_value(claimed)}</td>"
                f"<td>{esc(qa.evidence_answer or 'not stated')}</td>"
                f"<td>{_value(stated) if qa.HasField('evidence_normalised') else '—'}</td>"
                f"<td>{'match' if qa.match else 'no match'}</td><td>{esc(qa.explanation)}</td>"
                "</tr>"
            )
    if not rows:
        return ""
    return (
        '<h3>Numeric comparisons</h3><table class="numbers"><tr><th>claim</th><th>entity</th><th>claimed</th>'
        "<th>normalised</th><th>evidence</th><th>normalised</th><th>QA</th><th>why</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _value(number: citations_pb2.NormalisedNumber) -> str:
    if not number.HasField("value"):
        return "—"
    return esc(f"{number.value:,.6g} {number.unit}".strip())
