"""The HTML report: one self-contained page (inline CSS and JS, no external assets) built from a FactCheckResult.

It follows the spec's UI Display section. Every piece of text that came from a person or
a model goes through `esc`; as a second line of defence the page's Content-Security-Policy
only lets the page's own script run (by its hash), so a script smuggled into the content
stays text even if an escape were missed.
"""

from __future__ import annotations

import base64
import hashlib
import math
import sys
from collections import defaultdict
from html import escape
from pathlib import Path

from factcheck.cli import view
from factcheck.cli.view import ClaimView
from factcheck.v1 import factcheck_pb2

GAUGE_RADIUS = 52
GAUGE_CIRCUMFERENCE = 2 * math.pi * GAUGE_RADIUS
VERDICT_ICONS = {"VERIFIED": "✓", "DISPUTED": "✗", "UNVERIFIABLE": "?", view.UNCHECKED: "…"}
VERDICT_RANK = {"DISPUTED": 0, "UNVERIFIABLE": 1, "VERIFIED": 2, view.UNCHECKED: 3}
FINDING_TITLES = {"VERIFIED": "Verified claims", "DISPUTED": "Disputed claims", "UNVERIFIABLE": "Unverifiable claims"}
KNOWN_TYPES = ("STATISTIC", "DATE", "ATTRIBUTION", "TECHNICAL", "COMPARISON", "CAUSAL")

# Sorts the evidence table when a header is clicked; marks the table so the sort arrows show only when it works.
SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.classList.add("js-sortable");
  var headers = table.querySelectorAll("th");
  headers.forEach(function (th, column) {
    th.addEventListener("click", function () {
      var ascending = th.getAttribute("aria-sort") !== "ascending";
      var numeric = th.dataset.type === "number";
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
        var order = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
      headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    });
  });
});
"""
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SORT_SCRIPT.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{SCRIPT_HASH}'"

STYLE = """
:root { --good:#1a7f37; --mixed:#d97706; --poor:#cf222e; --none:#8c959f;
  --verified:#1a7f37; --verified-bg:#dafbe1; --disputed:#cf222e; --disputed-bg:#ffebe9;
  --unverifiable:#6e7781; --unverifiable-bg:#eaeef2; --unchecked:#8c959f; --unchecked-bg:#f6f8fa;
  --border:#d0d7de; --muted:#57606a; --ink:#1f2328; --paper:#f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--paper); color: var(--ink);
  font: 15px/1.55 "Liberation Sans", "DejaVu Sans", system-ui, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 24px; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 0 0 12px; }
.muted { color: var(--muted); } .small { font-size: 13px; }
.card { background: #fff; border: 1px solid var(--border); border-radius: 8px; padding: 18px 20px; margin: 16px 0; }
.summary { display: flex; gap: 24px; align-items: center; flex-wrap: wrap; }
.gauge { margin: 0; text-align: center; }
.gauge .track { fill: none; stroke: #e5e7eb; stroke-width: 12; }
.gauge .arc { fill: none; stroke-width: 12; stroke-linecap: round; }
.band-good .arc { stroke: var(--good); } .band-mixed .arc { stroke: var(--mixed); }
.band-poor .arc { stroke: var(--poor); }
.gauge-value { font-size: 30px; font-weight: 700; text-anchor: middle; dominant-baseline: middle; fill: var(--ink); }
.band-none .gauge-value { fill: var(--none); font-size: 24px; }
.gauge-unit { font-size: 11px; text-anchor: middle; fill: var(--muted); }
.gauge figcaption { font-weight: 600; }
.metrics { flex: 1; display: grid; grid-template-columns: repeat(3, minmax(120px, 1fr)) minmax(240px, 2fr); gap: 12px; }
.metric { border: 1px solid var(--border); border-radius: 6px; padding: 10px 14px; }
.metric .label { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.metric .value { font-size: 24px; font-weight: 700; }
.stack { display: flex; height: 14px; border-radius: 7px; overflow: hidden; background: #e5e7eb; margin: 8px 0 6px; }
.stack span { display: block; height: 100%; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 12px; font-size: 13px; }
.dot { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 4px; }
.v-verified.fill, .dot.v-verified { background: var(--verified); }
.v-disputed.fill, .dot.v-disputed { background: var(--disputed); }
.v-unverifiable.fill, .dot.v-unverifiable { background: var(--unverifiable); }
.v-unchecked.fill, .dot.v-unchecked { background: var(--unchecked); }
.columns { display: grid; grid-template-columns: minmax(0, 2fr) minmax(260px, 1fr); gap: 16px; }
.columns .card { margin: 0; }
.content { white-space: pre-wrap; overflow-wrap: anywhere; font-size: 16px; line-height: 1.8; }
mark.claim { background: none; color: inherit; border-bottom: 3px solid; padding: 1px 0; }
mark.v-verified { border-color: var(--verified); background: var(--verified-bg); }
mark.v-disputed { border-color: var(--disputed); background: var(--disputed-bg); }
mark.v-unverifiable { border-color: var(--unverifiable); background: var(--unverifiable-bg); }
mark.v-unchecked { border-color: var(--unchecked); background: var(--unchecked-bg); }
sup.marker { font-size: 11px; font-weight: 700; line-height: 1; margin-left: 2px; }
sup.marker a { color: #fff; text-decoration: none; border-radius: 8px; padding: 1px 5px; }
.badge, sup.marker a { display: inline-block; }
.badge { font-size: 12px; font-weight: 700; border-radius: 10px; padding: 1px 8px; white-space: nowrap; }
.badge.v-verified, sup.marker.v-verified a { background: var(--verified); color: #fff; }
.badge.v-disputed, sup.marker.v-disputed a { background: var(--disputed); color: #fff; }
.badge.v-unverifiable, sup.marker.v-unverifiable a { background: var(--unverifiable); color: #fff; }
.badge.v-unchecked, sup.marker.v-unchecked a { background: var(--unchecked); color: #fff; }
.type { font-size: 11px; font-weight: 700; border-radius: 4px; padding: 1px 6px; color: #fff; background: #6e7781; }
.t-statistic { background: #0969da; } .t-date { background: #8250df; } .t-attribution { background: #1b7c83; }
.t-technical { background: #bc4c00; } .t-comparison { background: #bf3989; } .t-causal { background: #7d4e00; }
.claims-panel ul { list-style: none; margin: 6px 0 14px; padding: 0; }
.claims-panel li { display: flex; gap: 8px; padding: 4px 0; border-bottom: 1px solid #eaeef2; font-size: 14px; }
.icon { font-weight: 700; width: 1.2em; text-align: center; flex: none; }
.icon.v-verified { color: var(--verified); } .icon.v-disputed { color: var(--disputed); }
.icon.v-unverifiable, .icon.v-unchecked { color: var(--unverifiable); }
table { width: 100%; border-collapse: collapse; font-size: 14px; }
th, td { text-align: left; vertical-align: top; padding: 8px 10px; border-bottom: 1px solid #eaeef2; }
th { background: var(--paper); white-space: nowrap; user-select: none; }
.js-sortable th { cursor: pointer; }
.js-sortable th::after { content: " ↕"; color: var(--muted); }
.js-sortable th[aria-sort=ascending]::after { content: " ↑"; }
.js-sortable th[aria-sort=descending]::after { content: " ↓"; }
td.num { text-align: right; } td.num, td.nowrap { white-space: nowrap; }
.agree { display: inline-block; width: 90px; height: 8px; border-radius: 4px; background: #e5e7eb; overflow: hidden;
  vertical-align: middle; margin-right: 6px; }
.agree .fill { display: block; height: 100%; }
details { border: 1px solid var(--border); border-radius: 6px; margin: 8px 0; background: #fff; }
summary { cursor: pointer; padding: 10px 14px; display: flex; gap: 10px; align-items: center; flex-wrap: wrap; }
summary::before { content: "▸"; color: var(--muted); } details[open] > summary::before { content: "▾"; }
details > .body { padding: 0 14px 12px; }
.claim-text { flex: 1 1 320px; }
.citations { margin: 4px 0 0; padding-left: 18px; font-size: 13px; color: var(--muted); }
.correction { color: var(--verified); font-weight: 600; }
.findings summary { font-weight: 700; }
.findings ul { margin: 0; padding: 0 14px 12px 34px; } .findings li { margin: 6px 0; }
pre.report { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--paper); border-radius: 6px;
  padding: 14px; font: 13px/1.5 "DejaVu Sans Mono", "Liberation Mono", monospace; margin: 0; }
.notice { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: 8px 12px; margin: 12px 0 0; }
.notice p { margin: 0; } .notice ul { margin: 4px 0 0; padding-left: 20px; font-size: 13px; }
footer { color: var(--muted); font-size: 13px; margin: 24px 0; }
@media (max-width: 860px) { .columns, .metrics { grid-template-columns: 1fr; } }
"""


def esc(text: str) -> str:
    """Text from the result as inert HTML (quotes too, so it is safe inside attributes)."""
    return escape(text, quote=True)


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
    """The whole report page as one HTML string."""
    views = view.claim_views(result)
    title = result.title if result.HasField("title") else "Fact-check"
    sections = [
        _header(result, title),
        _summary(result, views),
        _content_and_claims(result, views),
        _evidence_table(views),
        _claim_details(views),
        _findings(views),
        _report_text(result),
        _footer(result),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(section for section in sections if section)
        + f"\n</main>\n<script>{SORT_SCRIPT}</script>\n</body>\n</html>\n"
    )


def write_report(path: Path, result: factcheck_pb2.FactCheckResult) -> None:
    """Write the page to path and say where on stderr (stdout may carry --json output)."""
    path.write_text(render_page(result), encoding="utf-8")
    print(f"HTML report written to {path}", file=sys.stderr)


def _header(result: factcheck_pb2.FactCheckResult, title: str) -> str:
    meta = " · ".join(
        [
            esc(view.status_name(result.status)),
            f"created {esc(view.local_time(result.created_at))}",
            f"id <code>{esc(result.message_id)}</code>",
        ]
    )
    note = view.status_note(result)
    notice = f'<p class="notice" id="status-note">{esc(note)}</p>\n' if note else ""
    message, causes = view.explanation(result)
    if message or causes:
        items = "".join(f"<li>{esc(cause)}</li>" for cause in causes)
        notice += (
            '<div class="notice" id="failure">'
            + (f"<p>{esc(message)}</p>" if message else "")
            + (f'<ul id="failure-causes">{items}</ul>' if items else "")
            + "</div>\n"
        )
    return (
        f'<header>\n<h1>{esc(title)}</h1>\n<div class="muted">Question: {esc(result.question)}</div>\n'
        f'<div class="muted small">{meta}</div>\n{notice}</header>'
    )


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


def _metric(label: str, value: str, extra: str = "") -> str:
    return f'<div class="metric"><div class="label">{label}</div><div class="value">{value}</div>{extra}</div>'


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
        _metric("Claims", str(len(views))),
        _metric("Reliability", "n/a" if score is None else f"{score}/100"),
        _metric("Consensus", "n/a" if rate is None else f"{rate:.0f}%"),
        _metric("Verdicts", "", _verdict_breakdown(views)),
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
