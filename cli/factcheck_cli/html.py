"""The HTML report of a fact-check: one self-contained page built from a FactCheckResult, as docs/cli.md
describes it, rendered from templates/fact_check.html.j2 (the frame, its escaping and
policy: html_page.py; a council run's page: council_html.py).

This module only computes what the page shows; the templates escape every piece of text.
"""

from __future__ import annotations

import math
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from markupsafe import Markup

import factcheck_cli.council_html as council_html
import factcheck_cli.investigation as investigation
import factcheck_cli.view as view
from factcheck.core.weighting_text import describe_weighting
from factcheck.text.evidence_text import passage_title
from factcheck.text.shorten import shorten
from factcheck.v1 import common_pb2, evaluation_pb2, factcheck_pb2
from factcheck_cli.html_citations import citations_context
from factcheck_cli.html_page import SCRIPT_HASH, frame, header_context
from factcheck_cli.markdown_html import cite_text, markdown_to_html, source_anchor, without_sections
from factcheck_cli.view import ClaimView

__all__ = ["SCRIPT_HASH", "render_page", "write_report"]

GAUGE_RADIUS = 52
GAUGE_CIRCUMFERENCE = 2 * math.pi * GAUGE_RADIUS
VERDICT_ICONS = {"VERIFIED": "✓", "DISPUTED": "✗", "UNVERIFIABLE": "?", view.UNCHECKED: "…"}
VERDICT_RANK = {"DISPUTED": 0, "UNVERIFIABLE": 1, "VERIFIED": 2, view.UNCHECKED: 3}
FINDING_TITLES = {"VERIFIED": "Verified claims", "DISPUTED": "Disputed claims", "UNVERIFIABLE": "Unverifiable claims"}
# The reporter's sections the page shows itself, from the run's data: its evidence table, the findings (each
# claim's accordion, grouped by verdict) and the annotated content. The report card keeps the rest.
PAGE_SECTIONS = ("Evidence Table", "Detailed Findings", "Annotated Content")
KNOWN_TYPES = ("STATISTIC", "DATE", "ATTRIBUTION", "TECHNICAL", "COMPARISON", "CAUSAL")
# Links a source may carry: to the web or to a local document (`kb add` stores file:// URLs).
LINK_SCHEMES = ("http", "https", "file")
SOURCE_EXCERPT_CHARS = 280


@dataclass
class CitationRow:
    text: str
    anchor: str | None  # the source entry it points to, when the page lists that passage


@dataclass
class CheckerRow:
    model: str
    verdict: str | None
    confidence: str
    evidence: Markup
    correction: str | None
    citations: list[CitationRow]
    # As it counted in the consensus (a VERIFIED the audit flagged counts as UNVERIFIABLE), and the audit's flags.
    counted: str | None = None
    flags: list[str] = field(default_factory=list)


@dataclass
class Vote:
    model: str
    verdict: str


@dataclass
class ClaimRow:
    """One claim as every part of the page shows it."""

    number: int
    text: str
    type: str
    verdict: str
    agreement: float | None
    agreement_text: str
    correction: str | None
    context: str | None
    checkers: list[CheckerRow]
    votes: list[Vote]

    @property
    def type_class(self) -> str:
        return f"t-{self.type.lower()}" if self.type in KNOWN_TYPES else ""

    @property
    def icon(self) -> str:
        return VERDICT_ICONS[self.verdict]

    @property
    def rank(self) -> int:
        return VERDICT_RANK[self.verdict]

    @property
    def split(self) -> str:
        """ "2 verified · 1 disputed": how the checkers voted."""
        counts = Counter(vote.verdict for vote in self.votes)
        return " · ".join(f"{count} {verdict.lower()}" for verdict, count in counts.most_common())

    @property
    def votes_title(self) -> str:
        return "; ".join(f"{vote.model}: {vote.verdict}" for vote in self.votes) or "no votes"


@dataclass
class SourceRow:
    id: str
    number: int
    title: str
    url: str | None
    text: str
    cited_by: list[int] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return source_anchor(self.id)


def render_page(result: factcheck_pb2.FactCheckResult) -> str:
    """The whole report page as one HTML string (a council run's: council_html's)."""
    if result.mode == factcheck_pb2.MODE_COUNCIL:
        return council_html.render_council_page(result)
    views = view.claim_views(result)
    title = result.title if result.HasField("title") else "Fact-check"
    sources = source_rows(result, views)
    passage_ids = {source.id for source in sources}
    claims = [claim_row(claim, passage_ids) for claim in views]
    rows_by_number = {claim.number: claim for claim in claims}
    score = view.score_of(result)
    return frame(
        "fact_check.html.j2",
        **header_context(result, title),
        gauge=gauge(score),
        claims=claims,
        no_claims=view.no_claims_text(result),
        agreement_summary=view.agreement_summary(views),
        audit_findings=view.audit_findings(views),
        not_audited=view.not_audited_note(views),
        verdict_counts=[{"verdict": v, "count": c} for v, c in view.verdict_counts(views).items()],
        verdicts=view.VERDICTS,
        fallback=view.fallback_text(result.report.fallback_reason) if result.report.fallback else None,
        content_source=view.content_source(result),
        segments=[
            {"text": piece, "claim": None if claim is None else rows_by_number[claim.number]}
            for piece, claim in view.segments(result.content.text, views)
        ],
        claim_groups=claim_groups(claims),
        sources=sources,
        findings=findings(claims),
        **report_context(result.report.report_text, passage_ids),
        report_model=result.report.model,
        investigation=investigation.html_context(result),
        footer=footer(result),
        citations=citations_context(result),
    )


def findings(claims: list[ClaimRow]) -> list[dict]:
    """The claims by verdict (the report's Detailed Findings, in collapsible groups), each claim once; claims a
    failed run
    left unchecked in a group of their own."""
    groups = dict(FINDING_TITLES)
    if any(claim.verdict == view.UNCHECKED for claim in claims):
        groups[view.UNCHECKED] = "Unchecked claims"
    return [
        {"verdict": verdict, "title": heading, "claims": [c for c in claims if c.verdict == verdict]}
        for verdict, heading in groups.items()
    ]


def report_context(report_text: str, passage_ids: set[str]) -> dict:
    """The reporter's markdown as the report card shows it: without the sections the page shows itself."""
    kept, left_out = without_sections(report_text, PAGE_SECTIONS)
    return {
        "report_html": markdown_to_html(kept, passage_ids) if kept.strip() else "",
        "report_left_out": left_out,
    }


def write_report(path: Path, result: factcheck_pb2.FactCheckResult) -> None:
    """Write the page to path and say where on stderr (stdout may carry --json output)."""
    path.write_text(render_page(result), encoding="utf-8")
    print(f"HTML report written to {path}", file=sys.stderr)


def gauge(score: int | None) -> dict:
    """The circular reliability gauge (green 70-100, amber 40-69, red 0-39; "n/a" without a score)."""
    return {
        "score": score,
        "band": view.score_band(score),
        "value": "n/a" if score is None else str(score),
        "label": view.score_label(score),
        "radius": GAUGE_RADIUS,
        "circumference": GAUGE_CIRCUMFERENCE,
        "filled": GAUGE_CIRCUMFERENCE * min(max(score or 0, 0), 100) / 100,
    }


def claim_row(claim: ClaimView, passage_ids: set[str]) -> ClaimRow:
    verifications = list(claim.consensus.verdicts) if claim.consensus is not None else []
    checkers = [checker_row(verification, passage_ids) for verification in verifications]
    votes = [Vote(row.model, row.counted or row.verdict) for row in checkers if row.verdict is not None]
    # The consensus verdict's votes first, so the bar reads "agreeing, then dissenting".
    votes.sort(key=lambda vote: vote.verdict != claim.verdict)
    context = claim.claim.context if claim.claim.context and claim.claim.context != claim.claim.claim else None
    return ClaimRow(
        number=claim.number,
        text=claim.claim.claim,
        type=claim.type,
        verdict=claim.verdict,
        agreement=None if claim.agreement is None else min(max(claim.agreement, 0.0), 100.0),
        agreement_text=claim.agreement_text,
        correction=claim.correction,
        context=context,
        checkers=checkers,
        votes=votes,
    )


def checker_row(verification: common_pb2.ClaimVerification, passage_ids: set[str]) -> CheckerRow:
    verdict = view.verdict_name(verification.verdict)
    counted = view.counted_verdict(verification)
    return CheckerRow(
        counted=counted if counted in view.VERDICTS and counted != verdict else None,
        flags=[flag.detail for flag in verification.audit_flags],
        model=verification.checker_model + (" (cached)" if verification.cached else ""),
        verdict=verdict if verdict in view.VERDICTS else None,
        confidence=view.confidence_name(verification.confidence),
        evidence=cite_text(verification.evidence, passage_ids),
        correction=verification.correction if verification.HasField("correction") else None,
        citations=[
            CitationRow(
                view.citation_text(citation),
                source_anchor(citation.passage_id) if citation.passage_id in passage_ids else None,
            )
            for citation in verification.citations
        ],
    )


def source_rows(result: factcheck_pb2.FactCheckResult, views: list[ClaimView]) -> list[SourceRow]:
    """The numbered source list: every passage the run retrieved, then any passage only a checker's
    citation names; each with the claims whose checkers cited it."""
    rows: dict[str, SourceRow] = {}
    for passage in result.evidence.passages:
        rows.setdefault(
            passage.id,
            SourceRow(
                id=passage.id,
                number=len(rows) + 1,
                title=passage_title(passage) or passage.id,
                url=safe_link(passage.source_url),
                text=excerpt(passage.text),
            ),
        )
    for claim in views:
        for verification in claim.consensus.verdicts if claim.consensus is not None else ():
            for citation in verification.citations:
                if not citation.passage_id:
                    continue
                row = rows.setdefault(
                    citation.passage_id,
                    SourceRow(
                        id=citation.passage_id,
                        number=len(rows) + 1,
                        title=citation.source_title or citation.source_id or citation.passage_id,
                        url=None,
                        text=excerpt(citation.quote),
                    ),
                )
                if claim.number not in row.cited_by:
                    row.cited_by.append(claim.number)
    return sorted(rows.values(), key=lambda row: row.number)


def safe_link(url: str) -> str | None:
    """The URL when it goes to the web or a local file; None for anything a click could run (javascript:)."""
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return None
    return url.strip() if scheme in LINK_SCHEMES else None


def excerpt(text: str) -> str:
    return shorten(text, SOURCE_EXCERPT_CHARS)


def claim_groups(claims: list[ClaimRow]) -> list[dict]:
    """The sticky panel's groups: claims by type, in order of first appearance."""
    groups: dict[str, list[ClaimRow]] = defaultdict(list)
    for claim in claims:
        groups[claim.type].append(claim)
    return [{"type": claim_type, "claims": members} for claim_type, members in groups.items()]


def _consensus_text(result: factcheck_pb2.FactCheckResult) -> str:
    """How the consensus was reached: the majority, or the weights of the evaluation the run used."""
    weighting = result.verification.consensus_weighting
    if result.verification.HasField("consensus_weighting") and weighting.used == evaluation_pb2.CONSENSUS_WEIGHTED:
        return f"consensus {describe_weighting(weighting)}"
    return "consensus by majority verdict (ties go to DISPUTED)"


def footer(result: factcheck_pb2.FactCheckResult) -> str:
    checkers = ", ".join(checker.model for checker in result.verification.checkers) or "—"
    return "; ".join(
        [
            f"claims extracted by {result.extraction.model or '—'}",
            f"checked by {checkers}",
            *([thresholds[0].lower() + thresholds[1:]] if (thresholds := view.thresholds_line(result)) else []),
            _consensus_text(result),
            f"report by {result.report.model or '—'}",
        ]
    )
