"""The HTML report of a council run: one self-contained page, de-anonymised, built from the
FactCheckResult's council section (the frame, escaping and policy are html_page's).

The chart of error types per response is CSS bars: nothing is drawn by script or loaded.
"""

from __future__ import annotations

import re

from factcheck.cli import council_view, view
from factcheck.cli.council_view import NONE, Finding
from factcheck.cli.html_page import document, esc, header, metric
from factcheck.council_taxonomy import RATING_SCORES
from factcheck.v1 import council_pb2, factcheck_pb2

# One colour per error type, in the taxonomy's order (unclassified last).
ERROR_COLOURS = (
    "#cf222e",  # Hallucinated Fact
    "#9a6700",  # Outdated Information
    "#0969da",  # Numerical/Statistical Error
    "#8250df",  # Misattribution
    "#bc4c00",  # Overgeneralization
    "#bf3989",  # Conflation
    "#1b7c83",  # Omission of Critical Context
    "#4d2d00",  # Logical Fallacy
    "#6e7781",  # Other
    "#8c959f",  # Unclassified
)
RATING_CLASSES = {
    "ACCURATE": "r-accurate",
    "MOSTLY ACCURATE": "r-mostly-accurate",
    "MIXED": "r-mixed",
    "MOSTLY INACCURATE": "r-mostly-inaccurate",
    "INACCURATE": "r-inaccurate",
}
COUNCIL_STYLE = """
.rating { font-size: 12px; font-weight: 700; border-radius: 10px; padding: 1px 8px; white-space: nowrap;
  color: #fff; background: var(--none); display: inline-block; }
.r-accurate { background: #1a7f37; } .r-mostly-accurate { background: #4ac26b; color: #0d2b16; }
.r-mixed { background: #d97706; } .r-mostly-inaccurate { background: #e5534b; } .r-inaccurate { background: #a40e26; }
.self { font-size: 11px; color: var(--muted); margin-left: 4px; }
.score-bar { display: inline-block; width: 70px; height: 8px; border-radius: 4px; background: #e5e7eb;
  overflow: hidden; vertical-align: middle; margin-right: 6px; }
.score-bar span { display: block; height: 100%; }
.s-good { background: var(--good); } .s-mixed { background: var(--mixed); } .s-poor { background: var(--poor); }
.chart-row { display: grid; grid-template-columns: minmax(180px, 1fr) 3fr 3em; gap: 12px; align-items: center;
  padding: 4px 0; }
.chart-bar { display: flex; height: 18px; border-radius: 4px; overflow: hidden; background: #f0f2f4; }
.chart-bar span { display: block; height: 100%; }
.etype { font-size: 11px; font-weight: 700; border-radius: 4px; padding: 1px 6px; color: #fff; white-space: nowrap; }
pre.answer { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--paper); border-radius: 6px;
  padding: 12px 14px; font: 14px/1.6 "Liberation Sans", "DejaVu Sans", sans-serif; margin: 0 0 10px; }
.metrics.council { grid-template-columns: repeat(5, minmax(120px, 1fr)); }
""" + "".join(f".e-{index} {{ background: {colour}; }}\n" for index, colour in enumerate(ERROR_COLOURS))


def render_council_page(result: factcheck_pb2.FactCheckResult) -> str:
    """The council report page as one HTML string."""
    council = result.council
    models = council_view.label_models(council)
    found = council_view.findings(council)
    title = result.title if result.HasField("title") else "Council"
    sections = [
        header(result, title),
        _summary(council, models),
        _ranking(council.aggregate),
        _error_chart(council.aggregate),
        _synthesis(council, models),
        _responses(council, found),
        _fact_checkers(council),
        _excluded(council.aggregate),
        _footer(council),
    ]
    return document(title, sections, COUNCIL_STYLE)


def label_id(label: str) -> str:
    """ "Response A" -> "A": a label as a piece of an element id (labels come from the server, still untrusted)."""
    return re.sub(r"[^A-Za-z0-9_-]", "", label.removeprefix("Response ")) or "x"


def error_class(name: str) -> str:
    return f"e-{council_view.error_type_order(name)}"


def error_badge(name: str) -> str:
    return f'<span class="etype {error_class(name)}">{esc(name)}</span>'


def rating_badge(value: int) -> str:
    name = council_view.rating_name(value)
    css = RATING_CLASSES.get(name, "")
    return f'<span class="rating {css}">{esc(name)}</span>'


def score_bar(score: float | None) -> str:
    if score is None:
        return f'<span class="muted">{NONE}</span>'
    band = "good" if score >= 4 else "mixed" if score >= 3 else "poor"
    width = min(max((score - 1) / 4, 0.0), 1.0) * 100
    return f'<span class="score-bar"><span class="s-{band}" style="width:{width:.1f}%"></span></span>{score:.2f}'


def _summary(council: council_pb2.CouncilResult, models: dict[str, str]) -> str:
    aggregate = council.aggregate
    top = aggregate.ranking[0] if aggregate.ranking else None
    counted = len(aggregate.counted_fact_checkers)
    total = counted + len(aggregate.excluded_fact_checkers)
    w = council_view.kendall_w_of(aggregate)
    preference = council_view.self_preference_of(aggregate)
    metrics = [
        metric("Responses", str(len(council.responses) or len(aggregate.ranking))),
        metric("Fact-checkers counted", f"{counted}/{total}" if total else "0"),
        metric("Agreement (Kendall's W)", "n/a" if w is None else f"{w:.2f}"),
        metric("Self-preference", "n/a" if preference is None else f"{preference:+.2f}"),
        metric("Most reliable", esc(council_view.response_name(top.label, models)) if top else NONE),
    ]
    notes = [
        f'<p class="muted small">Agreement: {esc(council_view.agreement_text(aggregate))}. '
        f"Self-preference: {esc(council_view.self_preference_text(aggregate))}.</p>"
    ]
    return (
        f'<section class="card" id="summary">\n<div class="metrics council" id="metrics">{"".join(metrics)}</div>\n'
        f"{''.join(notes)}\n</section>"
    )


def _ranking(aggregate: council_pb2.CouncilAggregate) -> str:
    """The ranking table; the page script sorts it by the clicked column."""
    if not aggregate.ranking:
        return '<section class="card">\n<h2>Ranking</h2>\n<p class="muted">No fact-checker\'s ratings were counted.</p>\n</section>'
    columns = council_view.checker_columns(aggregate)
    heads = [
        '<th data-type="number">Rank</th>',
        "<th>Response</th>",
        "<th>Model</th>",
        '<th data-type="number">Average</th>',
        *(f'<th data-type="number">{esc(column.header)}</th>' for column in columns),
        '<th data-type="number">Most reliable votes</th>',
        '<th data-type="number">Inaccurate claims</th>',
    ]
    rows = []
    for ranked in aggregate.ranking:
        average = council_view.average_of(ranked)
        cells = [
            f'<td class="num" data-sort="{ranked.rank}">{ranked.rank}</td>',
            f'<td data-sort="{esc(ranked.label)}"><a href="#response-{label_id(ranked.label)}">{esc(ranked.label)}</a></td>',
            f'<td data-sort="{esc(ranked.model)}">{esc(ranked.model or NONE)}</td>',
            f'<td class="nowrap" data-sort="{-1 if average is None else average}">{score_bar(average)}</td>',
        ]
        for column in columns:
            rating = council_view.rating_by(ranked, column)
            if rating is None:
                cells.append(f'<td data-sort="0"><span class="muted">{NONE}</span></td>')
                continue
            score = RATING_SCORES.get(rating.rating, 0)
            self_mark = '<span class="self">(self)</span>' if rating.self_rating else ""
            cells.append(f'<td class="nowrap" data-sort="{score}">{rating_badge(rating.rating)}{self_mark}</td>')
        cells.append(f'<td class="num" data-sort="{ranked.most_reliable_votes}">{ranked.most_reliable_votes}</td>')
        cells.append(
            f'<td class="num" data-sort="{ranked.inaccurate_claim_count}">{ranked.inaccurate_claim_count}</td>'
        )
        rows.append(f'<tr class="ranking-row" id="rank-{label_id(ranked.label)}">{"".join(cells)}</tr>')
    note = ""
    if aggregate.exclude_self_ratings:
        note = '<p class="muted small">Ratings marked (self) are left out of the averages.</p>'
    return (
        '<section class="card">\n<h2>Ranking</h2>\n'
        f'<table class="sortable" id="ranking-table">\n<thead><tr>{"".join(heads)}</tr></thead>\n'
        f"<tbody>\n{chr(10).join(rows)}\n</tbody>\n</table>\n{note}</section>"
    )


def _error_chart(aggregate: council_pb2.CouncilAggregate) -> str:
    """Error types per response: one stacked bar per response, its length the response's number of
    inaccurate claims (scaled to the largest), one coloured segment per error type."""
    counts = [(ranked, council_view.error_type_counts(ranked)) for ranked in aggregate.ranking]
    largest = max((sum(count for _, count in types) for _, types in counts), default=0)
    if not largest:
        return ""
    rows = []
    for ranked, types in counts:
        total = sum(count for _, count in types)
        segments = "".join(
            f'<span class="{error_class(name)}" style="width:{100 * count / largest:.2f}%" '
            f'title="{esc(name)}: {count}" data-type="{esc(name)}" data-count="{count}"></span>'
            for name, count in types
        )
        rows.append(
            f'<div class="chart-row" id="chart-{label_id(ranked.label)}">'
            f"<span>{esc(council_view.response_name(ranked.label, {ranked.label: ranked.model}))}</span>"
            f'<div class="chart-bar">{segments}</div><span class="num">{total}</span></div>'
        )
    present = sorted(
        {name for _, types in counts for name, _ in types},
        key=council_view.error_type_order,
    )
    legend = "".join(f"<span>{error_badge(name)}</span>" for name in present)
    return (
        '<section class="card" id="error-chart">\n<h2>Error types per response</h2>\n'
        f'{"".join(rows)}\n<div class="legend" style="margin-top:10px">{legend}</div>\n</section>'
    )


def _synthesis(council: council_pb2.CouncilResult, models: dict[str, str]) -> str:
    if not council.HasField("synthesis"):
        return ""
    synthesis = council.synthesis
    based_on = council_view.response_name(synthesis.based_on_label, models)
    return (
        f'<section class="card">\n<h2>Chairman\'s synthesis <span class="muted small">{esc(synthesis.model)}, '
        f"from {esc(based_on)}</span></h2>\n"
        f'<pre class="answer" id="synthesis">{esc(synthesis.text)}</pre>\n</section>'
    )


def _ordered_responses(council: council_pb2.CouncilResult) -> list[council_pb2.CouncilResponse]:
    """The responses in ranking order, then those the ranking lacks (e.g. failed ones) in label order."""
    place = {ranked.label: position for position, ranked in enumerate(council.aggregate.ranking)}
    return sorted(council.responses, key=lambda response: (place.get(response.label, len(place)), response.label))


def _claims_table(found: list[Finding]) -> str:
    if not found:
        return '<p class="muted small">No inaccurate claims were reported.</p>'
    rows = "".join(
        f'<tr class="inaccurate-claim"><td>{esc(finding.claim)}</td><td>{error_badge(finding.error_type)}</td>'
        f'<td class="correction">{esc(finding.correction or NONE)}</td>'
        f'<td class="small">{esc(", ".join(finding.found_by))}</td></tr>'
        for finding in found
    )
    return (
        "<table><thead><tr><th>Inaccurate claim</th><th>Error type</th><th>Correction</th><th>Found by</th></tr>"
        f"</thead><tbody>{rows}</tbody></table>"
    )


def _responses(council: council_pb2.CouncilResult, found: list[Finding]) -> str:
    """Each response, de-anonymised, with its text and the inaccurate claims found in it."""
    if not council.responses:
        return ""
    averages = {ranked.label: council_view.average_of(ranked) for ranked in council.aggregate.ranking}
    entries = []
    for response in _ordered_responses(council):
        summary = (
            f"<summary><b>{esc(response.label)}</b><span>{esc(response.model or NONE)}</span>"
            f"<span>{score_bar(averages.get(response.label))}</span></summary>"
        )
        if response.HasField("error"):
            body = f'<p class="notice">No answer: {esc(response.error)}</p>'
        else:
            mine = [finding for finding in found if finding.label == response.label]
            took = f" · {esc(view.seconds(response.response_time_ms))}" if response.response_time_ms else ""
            source = "supplied by the caller" if response.supplied else "generated"
            body = (
                f'<p class="muted small">{source}{took}</p>'
                f'<pre class="answer">{esc(response.text)}</pre>{_claims_table(mine)}'
            )
        entries.append(
            f'<details class="response" id="response-{label_id(response.label)}" open>{summary}'
            f'<div class="body">{body}</div></details>'
        )
    return '<section class="card">\n<h2>Responses</h2>\n' + "\n".join(entries) + "\n</section>"


def _fact_checkers(council: council_pb2.CouncilResult) -> str:
    """Each counted fact-checker: its ratings, its vote, its warnings and its full analysis."""
    if not council.fact_checks:
        return ""
    entries = []
    for check in sorted(council.fact_checks, key=lambda check: check.checker_index):
        ratings = "".join(
            f"<tr><td>{esc(rating.label)}</td><td>{rating_badge(rating.rating)}</td></tr>" for rating in check.ratings
        )
        warnings = "".join(f"<li>{esc(warning)}</li>" for warning in check.warnings)
        analysis = (
            f'<details><summary>Full analysis</summary><div class="body"><pre class="report">{esc(check.analysis)}'
            "</pre></div></details>"
            if check.analysis
            else ""
        )
        entries.append(
            f'<details class="fact-checker" id="checker-{check.checker_index}" open>'
            f'<summary><b>{esc(check.model)}</b><span class="muted small">'
            f"{esc(view.seconds(check.response_time_ms))} · most reliable: {esc(check.most_reliable or 'none named')}"
            "</span></summary>"
            f'<div class="body"><table><thead><tr><th>Response</th><th>Rating</th></tr></thead>'
            f"<tbody>{ratings}</tbody></table>"
            + (f'<div class="notice"><p>Ignored in its summary:</p><ul>{warnings}</ul></div>' if warnings else "")
            + f"{analysis}</div></details>"
        )
    return '<section class="card">\n<h2>Fact-checkers</h2>\n' + "\n".join(entries) + "\n</section>"


def _excluded(aggregate: council_pb2.CouncilAggregate) -> str:
    if not aggregate.excluded_fact_checkers:
        return ""
    items = "".join(
        f"<li><b>{esc(checker.model)}</b>: {esc(checker.message)}</li>" for checker in aggregate.excluded_fact_checkers
    )
    return (
        '<section class="card">\n<h2>Excluded fact-checkers</h2>\n'
        f'<ul id="excluded">{items}</ul>\n<p class="muted small">Their ratings are not in the ranking.</p>\n</section>'
    )


def _footer(council: council_pb2.CouncilResult) -> str:
    config = council.config
    parts = [
        f"responses: {council_view.council_models_text(config)}",
        f"fact-checked by {', '.join(config.fact_checker_models) or NONE}",
        "ratings mapped ACCURATE=5 … INACCURATE=1 and averaged",
    ]
    if config.HasField("chairman_model"):
        parts.append(f"synthesis by {config.chairman_model}")
    return f"<footer>{esc('; '.join(parts))}. Generated by factcheck.</footer>"
