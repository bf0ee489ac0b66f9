"""The HTML report of a fact-check: one self-contained page built from a FactCheckResult, after the
spec's UI Display section (the page frame, its escaping and policy: html_page.py; a council run's
page: council_html.py).
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path

from factcheck.cli import council_html, view
from factcheck.cli.html_page import SCRIPT_HASH, document, esc, header, metric
from factcheck.cli.view import ClaimView
from factcheck.v1 import factcheck_pb2

__all__ = ["SCRIPT_HASH", "esc", "render_page", "write_report"]

GAUGE_RADIUS = 52
GAUGE_CIRCUMFERENCE = 2 * math.pi * GAUGE_RADIUS
VERDICT_ICONS = {"VERIFIED": "✓", "DISPUTED": "✗", "UNVERIFIABLE": "?", view.UNCHECKED: "…"}
VERDICT_RANK = {"DISPUTED": 0, "UNVERIFIABLE": 1, "VERIFIED": 2, view.UNCHECKED: 3}
FINDING_TITLES = {"VERIFIED": "Verified claims", "DISPUTED": "Disputed claims", "UNVERIFIABLE": "Unverifiable claims"}
KNOWN_TYPES = ("STATISTIC", "DATE", "ATTRIBUTION", "TECHNICAL", "COMPARISON", "CAUSAL")


def verdict_class(verdict: str) -> str:
    return f"v-{verdict.lower()}"


def badge(verdict: str) -> str:
    return f'<span class="badge {verdict_class(verdict)}">{esc(verdict)}</span>'


def type_badge(claim_type: str) -> str:
    css = f"t-{claim_type.lower()}" if claim_type in KNOWN_TYPES else ""
    return f'<span class="type {css}">{esc(claim_type)}</span>'


def agreement_bar(claim: ClaimView) -> str:
    if claim.agreement is None:
        return '<span class="muted">—</span>'
    rate = min(max(claim.agreement, 0.0), 100.0)
    fill = f'<span class="fill {verdict_class(claim.verdict)}" style="width:{rate:.1f}%"></span>'
    return f'<span class="agree" title="{rate:.0f}% agreement">{fill}</span>{rate:.0f}%'


def render_page(result: factcheck_pb2.FactCheckResult) -> str:
    """The whole report page as one HTML string (a council run's: council_html's)."""
    if result.mode == factcheck_pb2.MODE_COUNCIL:
        return council_html.render_council_page(result)
    views = view.claim_views(result)
    title = result.title if result.HasField("title") else "Fact-check"
    sections = [
        header(result, title),
        _summary(result, views),
        _content_and_claims(result, views),
        _evidence_table(views),
        _claim_details(views),
        _findings(views),
        _report_text(result),
        _footer(result),
    ]
    return document(title, sections)


def write_report(path: Path, result: factcheck_pb2.FactCheckResult) -> None:
    """Write the page to path and say where on stderr (stdout may carry --json output)."""
    path.write_text(render_page(result), encoding="utf-8")
    print(f"HTML report written to {path}", file=sys.stderr)


def _gauge(score: int | None) -> str:
    """The circular reliability gauge (green 70-100, amber 40-69, red 0-39; "n/a" without a score)."""
    band = view.score_band(score)
    value = "n/a" if score is None else str(score)
    filled = GAUGE_CIRCUMFERENCE * min(max(score or 0, 0), 100) / 100
    arc = (
        f'<circle class="arc" cx="60" cy="60" r="{GAUGE_RADIUS}" transform="rotate(-90 60 60)" '
        f'stroke-dasharray="{filled:.2f} {GAUGE_CIRCUMFERENCE:.2f}"/>'
        if score
        else ""
    )
    unit = '<text x="60" y="84" class="gauge-unit">/ 100</text>' if score is not None else ""
    return (
        f'<figure class="gauge band-{band}" id="gauge" data-score="{value}">\n'
        f'<svg viewBox="0 0 120 120" width="168" height="168" role="img" aria-label="Reliability score {value}">\n'
        f'<circle class="track" cx="60" cy="60" r="{GAUGE_RADIUS}"/>{arc}\n'
        f'<text x="60" y="58" class="gauge-value" id="gauge-value">{value}</text>{unit}\n</svg>\n'
        f"<figcaption>Reliability: {esc(view.score_label(score))}</figcaption>\n</figure>"
    )


def _verdict_breakdown(views: list[ClaimView]) -> str:
    """The verdicts as a stacked bar with a legend."""
    counts = view.verdict_counts(views)
    total = sum(counts.values())
    segments = "".join(
        f'<span class="fill {verdict_class(verdict)}" style="width:{100 * count / total:.2f}%" '
        f'title="{count} {verdict.lower()}"></span>'
        for verdict, count in counts.items()
        if count and total
    )
    legend = "".join(
        f'<span><span class="dot {verdict_class(verdict)}"></span>{count} {verdict.lower()}</span>'
        for verdict, count in counts.items()
    )
    return f'<div class="stack" id="verdict-bar">{segments}</div><div class="legend">{legend}</div>'


def _summary(result: factcheck_pb2.FactCheckResult, views: list[ClaimView]) -> str:
    score = view.score_of(result)
    rate = view.consensus_rate(views)
    metrics = [
        metric("Claims", str(len(views))),
        metric("Reliability", "n/a" if score is None else f"{score}/100"),
        metric("Consensus", "n/a" if rate is None else f"{rate:.0f}%"),
        metric("Verdicts", "", _verdict_breakdown(views)),
    ]
    note = ""
    if result.report.fallback:
        note = '<p class="muted small">The reporter failed: the report below is the consensus table.</p>'
    return (
        f'<section class="card summary" id="summary">\n{_gauge(score)}\n'
        f'<div class="metrics" id="metrics">{"".join(metrics)}</div>\n{note}</section>'
    )


def _annotated(content: str, views: list[ClaimView]) -> str:
    """The content with each located claim highlighted and followed by its numbered, coloured marker."""
    parts = []
    for piece, claim in view.segments(content, views):
        if claim is None:
            parts.append(esc(piece))
            continue
        css = verdict_class(claim.verdict)
        label = f"Claim {claim.number}: {claim.verdict}"
        parts.append(
            f'<mark class="claim {css}" id="claim-{claim.number}" title="{label}">{esc(piece)}</mark>'
            f'<sup class="marker {css}"><a href="#detail-{claim.number}" title="{label}">{claim.number}</a></sup>'
        )
    return "".join(parts)


def _content_and_claims(result: factcheck_pb2.FactCheckResult, views: list[ClaimView]) -> str:
    legend = "".join(
        f'<span><span class="dot {verdict_class(verdict)}"></span>{verdict.lower()}</span>' for verdict in view.VERDICTS
    )
    content = (
        '<article class="card">\n<h2>Annotated content</h2>\n'
        f'<div class="muted small">{esc(view.content_source(result))}</div>\n'
        f'<div class="legend" style="margin:6px 0 12px">{legend}</div>\n'
        f'<div class="content" id="content">{_annotated(result.content.text, views)}</div>\n</article>'
    )
    return f'<section class="columns">\n{content}\n{_claims_by_type(views)}\n</section>'


def _claims_by_type(views: list[ClaimView]) -> str:
    """The sidebar: claims grouped by type, each with its verdict icon."""
    groups: dict[str, list[ClaimView]] = defaultdict(list)
    for claim in views:
        groups[claim.type].append(claim)
    body = []
    for claim_type, claims in groups.items():
        items = "".join(_sidebar_item(claim) for claim in claims)
        count = f'<span class="muted small">{len(claims)}</span>'
        body.append(f"<div>{type_badge(claim_type)} {count}<ul>{items}</ul></div>")
    inner = "".join(body) or '<p class="muted">No verifiable claims were identified.</p>'
    return f'<aside class="card claims-panel">\n<h2>Claims ({len(views)})</h2>\n{inner}\n</aside>'


def _sidebar_item(claim: ClaimView) -> str:
    """A claim in the sidebar: its verdict icon (✓ ✗ ? …), number and text."""
    css, symbol = verdict_class(claim.verdict), VERDICT_ICONS[claim.verdict]
    icon = f'<span class="icon {css}" title="{claim.verdict}">{symbol}</span>'
    return f"<li>{icon}<span><b>{claim.number}.</b> {esc(claim.claim.claim)}</span></li>"


def _evidence_table(views: list[ClaimView]) -> str:
    """The evidence table; the page script sorts it by the clicked column."""
    if not views:
        return ""
    header = (
        '<th data-type="number">#</th><th>Claim</th><th>Type</th><th data-type="number">Verdict</th>'
        '<th data-type="number">Agreement</th><th>Correction</th>'
    )
    rows = "\n".join(
        f'<tr class="evidence-row" id="evidence-{c.number}">'
        f'<td class="num" data-sort="{c.number}">{c.number}</td>'
        f'<td data-sort="{esc(c.claim.claim)}">{esc(c.claim.claim)}</td>'
        f'<td data-sort="{esc(c.type)}">{type_badge(c.type)}</td>'
        f'<td data-sort="{VERDICT_RANK[c.verdict]}">{badge(c.verdict)}</td>'
        f'<td class="nowrap" data-sort="{-1 if c.agreement is None else c.agreement}">{agreement_bar(c)}</td>'
        f'<td data-sort="{esc(c.correction or "")}">{esc(c.correction or "—")}</td>'
        f"</tr>"
        for c in views
    )
    return (
        '<section class="card">\n<h2>Evidence</h2>\n'
        f'<table class="sortable" id="evidence-table">\n<thead><tr>{header}</tr></thead>\n'
        f"<tbody>\n{rows}\n</tbody>\n</table>\n</section>"
    )


def _checker_evidence(verification) -> str:
    """A checker's evidence, its correction and the passages it cited."""
    parts = [esc(verification.evidence) or "—"]
    if verification.HasField("correction"):
        parts.append(f'<div class="correction">Correction: {esc(verification.correction)}</div>')
    if verification.citations:
        cited = "".join(f"<li>{esc(view.citation_text(citation))}</li>" for citation in verification.citations)
        parts.append(f'<ul class="citations">{cited}</ul>')
    return "".join(parts)


def _checker_rows(claim: ClaimView) -> str:
    rows = []
    for verification in claim.consensus.verdicts:
        verdict = view.verdict_name(verification.verdict)
        rows.append(
            f"<tr><td>{esc(verification.checker_model)}{' (cached)' if verification.cached else ''}</td>"
            f"<td>{badge(verdict) if verdict in view.VERDICTS else '—'}</td>"
            f"<td>{esc(view.confidence_name(verification.confidence))}</td>"
            f"<td>{_checker_evidence(verification)}</td></tr>"
        )
    return "".join(rows)


def _claim_detail(claim: ClaimView) -> str:
    """One accordion entry: the claim, its consensus, and what every checker said."""
    summary = (
        f'<summary><b>{claim.number}.</b><span class="claim-text">{esc(claim.claim.claim)}</span>'
        f"{type_badge(claim.type)}{badge(claim.verdict)}<span>{agreement_bar(claim)}</span></summary>"
    )
    body = []
    if claim.claim.context and claim.claim.context != claim.claim.claim:
        body.append(f'<p class="muted small">Context: {esc(claim.claim.context)}</p>')
    if claim.correction:
        body.append(f'<p class="correction">Correction: {esc(claim.correction)}</p>')
    if claim.consensus is not None and claim.consensus.verdicts:
        body.append(
            "<table><thead><tr><th>Checker</th><th>Verdict</th><th>Confidence</th><th>Evidence</th></tr></thead>"
            f"<tbody>{_checker_rows(claim)}</tbody></table>"
        )
    else:
        body.append('<p class="muted">No checker judged this claim.</p>')
    # Disputed claims open: they are what a reader needs to look at.
    opened = " open" if claim.verdict == "DISPUTED" else ""
    return (
        f'<details class="claim-detail" id="detail-{claim.number}"{opened}>{summary}'
        f'<div class="body">{"".join(body)}</div></details>'
    )


def _claim_details(views: list[ClaimView]) -> str:
    if not views:
        return ""
    entries = "\n".join(_claim_detail(claim) for claim in views)
    return f'<section class="card">\n<h2>Claims in detail</h2>\n{entries}\n</section>'


def _lead_evidence(claim: ClaimView) -> str:
    """What a checker that voted with the consensus said: the reason behind the verdict."""
    if claim.consensus is None:
        return ""
    for verification in claim.consensus.verdicts:
        if view.verdict_name(verification.verdict) == claim.verdict and verification.evidence:
            return verification.evidence
    return ""


def _finding(claim: ClaimView) -> str:
    parts = [f"<b>{claim.number}.</b> {esc(claim.claim.claim)}"]
    if claim.correction:
        parts.append(f'<div class="correction">Correction: {esc(claim.correction)}</div>')
    evidence = _lead_evidence(claim)
    if evidence:
        parts.append(f'<div class="muted small">{esc(evidence)}</div>')
    return f"<li>{''.join(parts)}</li>"


def _findings(views: list[ClaimView]) -> str:
    """Detailed findings in collapsible sections, one per verdict."""
    if not views:
        return ""
    groups = []
    for verdict, title in FINDING_TITLES.items():
        claims = [claim for claim in views if claim.verdict == verdict]
        items = "".join(_finding(claim) for claim in claims) or '<li class="muted">None.</li>'
        groups.append(
            f'<details class="findings {verdict_class(verdict)}" open>'
            f'<summary><span class="dot {verdict_class(verdict)}"></span>{title} ({len(claims)})</summary>'
            f"<ul>{items}</ul></details>"
        )
    return '<section class="card">\n<h2>Findings</h2>\n' + "\n".join(groups) + "\n</section>"


def _report_text(result: factcheck_pb2.FactCheckResult) -> str:
    if not result.report.report_text:
        return ""
    return (
        f'<section class="card">\n<h2>Report <span class="muted small">{esc(result.report.model)}</span></h2>\n'
        f'<pre class="report" id="report-text">{esc(result.report.report_text)}</pre>\n</section>'
    )


def _footer(result: factcheck_pb2.FactCheckResult) -> str:
    checkers = ", ".join(checker.model for checker in result.verification.checkers) or "—"
    models = [
        f"claims extracted by {result.extraction.model or '—'}",
        f"checked by {checkers}",
        "consensus by majority verdict (ties go to DISPUTED)",
        f"report by {result.report.model or '—'}",
    ]
    return f"<footer>{esc('; '.join(models))}. Generated by factcheck.</footer>"
