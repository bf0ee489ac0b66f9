"""The HTML report of a council run: one self-contained page, de-anonymised, rendered from
templates/council.html.j2 with what this module computes from the FactCheckResult's council
section (the frame, escaping and policy are html_page's).

The chart of error types per response is CSS bars: nothing is drawn by script or loaded.
"""

from __future__ import annotations

import re
from importlib import resources

from markupsafe import Markup

import factcheck_cli.council_view as council_view
import factcheck_cli.view as view
from factcheck.core.council_taxonomy import RATING_SCORES
from factcheck.v1 import council_pb2, factcheck_pb2
from factcheck_cli.council_view import NONE, Finding
from factcheck_cli.html_page import frame, header_context

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
COUNCIL_STYLE = Markup(
    (resources.files("factcheck_cli") / "templates" / "council.css").read_text(encoding="utf-8")
    + "".join(f".e-{index} {{ background: {colour}; }}\n" for index, colour in enumerate(ERROR_COLOURS))
)


def render_council_page(result: factcheck_pb2.FactCheckResult) -> str:
    """The council report page as one HTML string."""
    council = result.council
    aggregate = council.aggregate
    models = council_view.label_models(council)
    title = result.title if result.HasField("title") else "Council"
    return frame(
        "council.html.j2",
        extra_style=COUNCIL_STYLE,
        **header_context(result, title),
        metrics=_metrics(council, models),
        agreement=council_view.agreement_text(aggregate),
        self_preference=council_view.self_preference_text(aggregate),
        column_headers=[column.header for column in council_view.checker_columns(aggregate)],
        ranking=_ranking(aggregate),
        exclude_self=aggregate.exclude_self_ratings,
        chart=_error_chart(aggregate),
        chart_legend=[
            _error(name)
            for name in sorted(
                {name for ranked in aggregate.ranking for name, _ in council_view.error_type_counts(ranked)},
                key=council_view.error_type_order,
            )
        ],
        synthesis=_synthesis(council, models),
        responses=_responses(council, council_view.findings(council)),
        fact_checkers=_fact_checkers(council),
        excluded=[(checker.model, checker.message) for checker in aggregate.excluded_fact_checkers],
        footer=_footer(council),
    )


def label_id(label: str) -> str:
    """ "Response A" -> "A": a label as a piece of an element id (labels come from the server, still untrusted)."""
    return re.sub(r"[^A-Za-z0-9_-]", "", label.removeprefix("Response ")) or "x"


def _error(name: str) -> dict:
    return {"name": name, "css": f"e-{council_view.error_type_order(name)}"}


def _rating(value: int) -> dict:
    name = council_view.rating_name(value)
    return {"name": name, "css": RATING_CLASSES.get(name, "")}


def _metrics(council: council_pb2.CouncilResult, models: dict[str, str]) -> list[tuple[str, str]]:
    aggregate = council.aggregate
    top = aggregate.ranking[0] if aggregate.ranking else None
    counted = len(aggregate.counted_fact_checkers)
    total = counted + len(aggregate.excluded_fact_checkers)
    w = council_view.kendall_w_of(aggregate)
    preference = council_view.self_preference_of(aggregate)
    return [
        ("Responses", str(len(council.responses) or len(aggregate.ranking))),
        ("Fact-checkers counted", f"{counted}/{total}" if total else "0"),
        ("Agreement (Kendall's W)", "n/a" if w is None else f"{w:.2f}"),
        ("Self-preference", "n/a" if preference is None else f"{preference:+.2f}"),
        ("Most reliable", council_view.response_name(top.label, models) if top else NONE),
    ]


def _ranking(aggregate: council_pb2.CouncilAggregate) -> list[dict]:
    """The ranking table's rows; the page script sorts it by the clicked column."""
    columns = council_view.checker_columns(aggregate)
    rows = []
    for ranked in aggregate.ranking:
        ratings = []
        for column in columns:
            rating = council_view.rating_by(ranked, column)
            ratings.append(
                None
                if rating is None
                else {
                    **_rating(rating.rating),
                    "score": RATING_SCORES.get(rating.rating, 0),
                    "self": rating.self_rating,
                }
            )
        rows.append(
            {
                "rank": ranked.rank,
                "label": ranked.label,
                "anchor": label_id(ranked.label),
                "model": ranked.model,
                "average": council_view.average_of(ranked),
                "ratings": ratings,
                "votes": ranked.most_reliable_votes,
                "inaccurate": ranked.inaccurate_claim_count,
            }
        )
    return rows


def _error_chart(aggregate: council_pb2.CouncilAggregate) -> list[dict]:
    """Error types per response: one stacked bar per response, its length the response's number of
    inaccurate claims (scaled to the largest), one coloured segment per error type."""
    counts = [(ranked, council_view.error_type_counts(ranked)) for ranked in aggregate.ranking]
    largest = max((sum(count for _, count in types) for _, types in counts), default=0)
    if not largest:
        return []
    return [
        {
            "anchor": label_id(ranked.label),
            "name": council_view.response_name(ranked.label, {ranked.label: ranked.model}),
            "segments": [{**_error(name), "count": count, "width": 100 * count / largest} for name, count in types],
            "total": sum(count for _, count in types),
        }
        for ranked, types in counts
    ]


def _synthesis(council: council_pb2.CouncilResult, models: dict[str, str]) -> dict | None:
    if not council.HasField("synthesis"):
        return None
    synthesis = council.synthesis
    return {
        "model": synthesis.model,
        "based_on": council_view.response_name(synthesis.based_on_label, models),
        "text": synthesis.text,
    }


def _ordered_responses(council: council_pb2.CouncilResult) -> list[council_pb2.CouncilResponse]:
    """The responses in ranking order, then those the ranking lacks (e.g. failed ones) in label order."""
    place = {ranked.label: position for position, ranked in enumerate(council.aggregate.ranking)}
    return sorted(council.responses, key=lambda response: (place.get(response.label, len(place)), response.label))


def _responses(council: council_pb2.CouncilResult, found: list[Finding]) -> list[dict]:
    """Each response, de-anonymised, with its text and the inaccurate claims found in it."""
    averages = {ranked.label: council_view.average_of(ranked) for ranked in council.aggregate.ranking}
    return [
        {
            "label": response.label,
            "anchor": label_id(response.label),
            "model": response.model,
            "average": averages.get(response.label),
            "error": response.error if response.HasField("error") else None,
            "source": "supplied by the caller" if response.supplied else "generated",
            "took": view.seconds(response.response_time_ms) if response.response_time_ms else "",
            "text": response.text,
            "findings": [
                {
                    "claim": finding.claim,
                    "error": _error(finding.error_type),
                    "correction": finding.correction,
                    "found_by": finding.found_by,
                }
                for finding in found
                if finding.label == response.label
            ],
        }
        for response in _ordered_responses(council)
    ]


def _fact_checkers(council: council_pb2.CouncilResult) -> list[dict]:
    """Each counted fact-checker: its ratings, its vote, its warnings and its full analysis."""
    return [
        {
            "index": check.checker_index,
            "model": check.model,
            "took": view.seconds(check.response_time_ms),
            "most_reliable": check.most_reliable,
            "ratings": [(rating.label, _rating(rating.rating)) for rating in check.ratings],
            "warnings": list(check.warnings),
            "analysis": check.analysis,
        }
        for check in sorted(council.fact_checks, key=lambda check: check.checker_index)
    ]


def _footer(council: council_pb2.CouncilResult) -> str:
    config = council.config
    parts = [
        f"responses: {council_view.council_models_text(config)}",
        f"fact-checked by {', '.join(config.fact_checker_models) or NONE}",
        "ratings mapped ACCURATE=5 … INACCURATE=1 and averaged",
    ]
    if config.HasField("chairman_model"):
        parts.append(f"synthesis by {config.chairman_model}")
    return "; ".join(parts)
