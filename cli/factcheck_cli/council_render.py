"""Terminal output of a council run: its progress lines, and its ranking once it is done.

During the run responses are named by label only (the gateway reveals the models in
council_aggregate_complete); the report is de-anonymised.
"""

from __future__ import annotations

from typing import Any, Callable

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

import factcheck_cli.council_view as council_view
import factcheck_cli.view as view
from factcheck.v1 import council_pb2, factcheck_pb2
from factcheck_cli.council_view import NONE
from factcheck_cli.terminal import counted, plain, print_status, section, stage_line, with_lines

RATING_STYLES = {
    "ACCURATE": "bold green",
    "MOSTLY ACCURATE": "green",
    "MIXED": "yellow",
    "MOSTLY INACCURATE": "red",
    "INACCURATE": "bold red",
    NONE: "dim",
}
# What the spinner says while the gateway works on the stage an event opened.
ACTIVITY = {
    "respond_start": "Waiting for the council's answers",
    "responses_anonymised": "Anonymising the responses",
    "council_check_start": "Fact-checking the responses",
    "council_aggregate_complete": "Ranking the responses",
    "synthesis_start": "Writing the chairman's answer",
    "synthesis_complete": "Writing the title",
}


def score_style(score: float | None) -> str:
    if score is None:
        return "dim"
    return "bold green" if score >= 4 else "bold yellow" if score >= 3 else "bold red"


def rating_text(value: int) -> Text:
    name = council_view.rating_name(value)
    return Text(name, style=RATING_STYLES[name])


# --- progress -----------------------------------------------------------------------------


def started(payload: factcheck_pb2.FactCheckStartPayload) -> Text:
    """The start line of a council run: who answers (or that the answers were supplied), who checks."""
    config = payload.council
    if config.responses_supplied:
        answers = f"ranking {counted(config.response_count, 'supplied response')}"
    else:
        models = list(config.council_models)
        answers = f"council of {counted(len(models), 'model')}: {', '.join(models)}"
    checkers = list(config.fact_checker_models)
    line = stage_line(
        "start",
        f"run {payload.message_id}: {answers}; {counted(len(checkers), 'fact-checker')}: {', '.join(checkers)}",
    )
    if config.HasField("chairman_model"):
        line.append(plain(f"; chairman {config.chairman_model}"))
    if config.exclude_self_ratings:
        line.append("; self-ratings left out of the averages")
    return line


def _respond_started(payload: council_pb2.RespondStartPayload) -> Text:
    return stage_line("respond", f"waiting for {counted(payload.response_count, 'response')}")


def _response_arrived(payload: council_pb2.ResponseCompletePayload) -> Text:
    took = view.seconds(payload.response_time_ms)
    return stage_line("respond", f"{payload.label}: {counted(len(payload.text), 'character')} in {took}")


def _response_failed(payload: council_pb2.ResponseFailedPayload) -> Text:
    return stage_line("respond", Text(f"{payload.label} failed: ", style="yellow"), plain(payload.message, "yellow"))


def _anonymised(payload: council_pb2.ResponsesAnonymisedPayload) -> Text:
    labels = ", ".join(payload.labels)
    return stage_line("anonymise", f"the fact-checkers see {labels} (the models are revealed in the ranking)")


def _check_started(payload: council_pb2.CouncilCheckStartPayload) -> Text:
    responses = counted(payload.response_count, "response")
    return stage_line("check", f"fact-checking {responses} with {counted(payload.fact_checker_count, 'fact-checker')}")


def _check_done(payload: council_pb2.CouncilCheckCompletePayload) -> Text:
    took = view.seconds(payload.response_time_ms)
    line = stage_line("check", f"{payload.model} done in {took}: ")
    for position, rating in enumerate(payload.ratings):
        if position:
            line.append(", ")
        line.append(plain(f"{rating.label.removeprefix('Response ')} "))
        line.append_text(rating_text(rating.rating))
    line.append(plain(f"; most reliable {payload.most_reliable or 'none named'}"))
    line.append(f"; {counted(len(payload.inaccurate_claims), 'inaccurate claim')}")
    return with_lines(line, (f"warning: {warning}" for warning in payload.warnings))


def _check_failed(payload: council_pb2.CouncilCheckFailedPayload) -> Text:
    message = f"{payload.model} failed (left out of the ranking): {payload.message}"
    return stage_line("check", plain(message, "yellow"))


def _ranked(payload: council_pb2.CouncilAggregateCompletePayload) -> Text:
    aggregate = payload.aggregate
    line = stage_line("rank", "")
    for position, ranked in enumerate(aggregate.ranking):
        if position:
            line.append(" · ")
        line.append(plain(f"{ranked.rank}. {ranked.label} ({ranked.model or NONE}) "))
        average = council_view.average_of(ranked)
        line.append(council_view.score_text(average), style=score_style(average))
    line.append(f"; Kendall's W {council_view.agreement_text(aggregate)}")
    excluded = (f"{checker.model} excluded: {checker.message}" for checker in aggregate.excluded_fact_checkers)
    return with_lines(line, excluded)


def _synthesised(payload: council_pb2.SynthesisCompletePayload) -> Text:
    took = view.seconds(payload.response_time_ms)
    return stage_line(
        "synthesis",
        f"{payload.model} wrote {counted(len(payload.text), 'character')} from {payload.based_on_label} in {took}",
    )


DESCRIBERS: dict[str, Callable[[Any], Text]] = {  # each takes its own event's payload
    "respond_start": _respond_started,
    "response_complete": _response_arrived,
    "response_failed": _response_failed,
    "responses_anonymised": _anonymised,
    "council_check_start": _check_started,
    "council_check_complete": _check_done,
    "council_check_failed": _check_failed,
    "council_aggregate_complete": _ranked,
    "synthesis_start": lambda payload: stage_line("synthesis", "the chairman writes the final answer"),
    "synthesis_complete": _synthesised,
}


# --- the report ---------------------------------------------------------------------------


def render_council(console: Console, result: factcheck_pb2.FactCheckResult) -> None:
    """A council run's report: the ranking table, agreement and self-preference, the inaccurate
    claims by error type, the chairman's synthesis, the excluded fact-checkers."""
    council = result.council
    aggregate = council.aggregate
    models = council_view.label_models(council)
    console.print(_header(result))
    print_status(console, result)
    if aggregate.ranking:
        section(console, "Ranking", ranking_table(aggregate))
        console.print(Text.assemble(("Agreement (Kendall's W)  ", "bold"), council_view.agreement_text(aggregate)))
        console.print(Text.assemble(("Self-preference  ", "bold"), council_view.self_preference_text(aggregate)))
    else:
        console.print(Text("No ranking: no fact-checker's ratings were counted.", style="yellow"))
    found = council_view.findings(council)
    if found:
        section(console, "Inaccurate claims by error type", _findings(found, models), style="bold red")
    if council.HasField("synthesis"):
        section(console, "Chairman's synthesis", _synthesis(council.synthesis, models))
    if aggregate.excluded_fact_checkers:
        section(console, "Excluded fact-checkers", _excluded(aggregate), style="bold yellow")
    failed = council_view.failed_responses(council)
    if failed:
        lines = [Text.assemble(plain(f"{r.label} ({r.model}): ", "bold"), plain(r.error)) for r in failed]
        section(console, "Responses that failed", Group(*lines), style="bold yellow")


def _header(result: factcheck_pb2.FactCheckResult) -> Panel:
    config = result.council.config
    rows = [
        ("id", result.message_id),
        ("status", f"{view.status_name(result.status)}, created {view.local_time(result.created_at)}"),
        ("question", result.question),
        ("responses", council_view.council_models_text(config)),
        ("fact-checkers", ", ".join(config.fact_checker_models) or NONE),
    ]
    if config.HasField("chairman_model"):
        rows.append(("chairman", config.chairman_model))
    body = Table.grid(padding=(0, 2))
    body.add_column(style="bold")
    body.add_column()
    for name, value in rows:
        body.add_row(name, plain(value))
    title = plain(result.title if result.HasField("title") else "Council", "bold")
    return Panel(body, title=title, title_align="left", box=box.ROUNDED, expand=False)


def ranking_table(aggregate: council_pb2.CouncilAggregate) -> Table:
    """One row per response, most reliable first: its average, each fact-checker's rating (a
    self-rating marked "(self)"), most-reliable votes and inaccurate claims."""
    columns = council_view.checker_columns(aggregate)
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("Rank", justify="right", no_wrap=True)
    table.add_column("Response", no_wrap=True)
    table.add_column("Model", overflow="fold")
    table.add_column("Average", justify="right", no_wrap=True)
    for column in columns:
        table.add_column(plain(column.header))
    table.add_column("Most reliable", justify="right", no_wrap=True)
    table.add_column("Inaccurate claims", justify="right", no_wrap=True)
    for ranked in aggregate.ranking:
        average = council_view.average_of(ranked)
        cells = []
        for column in columns:
            rating = council_view.rating_by(ranked, column)
            cell = rating_text(rating.rating) if rating is not None else Text(NONE, style="dim")
            if rating is not None and rating.self_rating:
                cell.append(" (self)", style="dim")
            cells.append(cell)
        table.add_row(
            str(ranked.rank),
            plain(ranked.label),
            plain(ranked.model or NONE),
            Text(council_view.score_text(average), style=score_style(average)),
            *cells,
            str(ranked.most_reliable_votes),
            str(ranked.inaccurate_claim_count),
        )
    return table


def _findings(found: list[council_view.Finding], models: dict[str, str]) -> Group:
    parts = []
    for error_type, group in council_view.by_error_type(found):
        parts.append(Text(f"{error_type} ({len(group)})", style="bold"))
        for finding in group:
            parts.append(Text.assemble("  ", plain(council_view.response_name(finding.label, models), "bold"), ": "))
            parts[-1].append(plain(finding.claim))
            if finding.correction:
                parts.append(Text.assemble(("    correction: ", "green"), plain(finding.correction)))
            parts.append(Text.assemble(("    found by ", "dim"), plain(", ".join(finding.found_by), "dim")))
    return Group(*parts)


def _synthesis(synthesis: council_pb2.SynthesisCompletePayload, models: dict[str, str]) -> Group:
    based_on = council_view.response_name(synthesis.based_on_label, models)
    return Group(
        Text.assemble(("by ", "dim"), plain(synthesis.model, "dim"), (", from ", "dim"), plain(based_on, "dim")),
        plain(synthesis.text),
    )


def _excluded(aggregate: council_pb2.CouncilAggregate) -> Group:
    return Group(
        *(
            Text.assemble(plain(checker.model, "bold"), ": ", plain(checker.message))
            for checker in aggregate.excluded_fact_checkers
        )
    )
