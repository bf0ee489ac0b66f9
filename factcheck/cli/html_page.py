"""What every HTML page of the CLI shares: one self-contained document (inline CSS and JS, no external
assets), its stylesheet and sort script, the escaping of untrusted text, and the page header.

Every piece of text that came from a person or a model goes through `esc`; as a second line of
defence the page's Content-Security-Policy only lets the page's own script run (by its hash), so
a script smuggled into the content stays text even if an escape were missed.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

from factcheck.cli import view
from factcheck.v1 import factcheck_pb2

# Sorts a table (class "sortable") by the clicked column header when a header is clicked; marks the table so the sort arrows show only when it works.
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


def document(title: str, sections: list[str], style: str = "") -> str:
    """The whole page: head (policy, stylesheet and the page's extra style), the non-empty sections, the script."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>{STYLE}{style}</style>\n</head>\n<body>\n<main>\n"
        + "\n".join(section for section in sections if section)
        + f"\n</main>\n<script>{SORT_SCRIPT}</script>\n</body>\n</html>\n"
    )


def header(result: factcheck_pb2.FactCheckResult, title: str) -> str:
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


def metric(label: str, value: str, extra: str = "") -> str:
    return f'<div class="metric"><div class="label">{label}</div><div class="value">{value}</div>{extra}</div>'
