"""Terminal output: a run's progress as its events arrive, and the final report of a FactCheckResult
(a council run's report is council_render's).

Untrusted text is shown only through `terminal.plain` (see cli/factcheck_cli/terminal.py).
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any, Callable, Mapping

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

import factcheck_cli.citations_render as citations_render
import factcheck_cli.council_render as council_render
import factcheck_cli.investigation as investigation
import factcheck_cli.view as view
from factcheck.core.weighting_text import describe_weighting
from factcheck.v1 import factcheck_pb2
from factcheck_cli.terminal import (
    clean,
    counted,
    make_console,
    plain,
    print_status,
    proto_json,
    section,
    stage_line,
    with_lines,
)
from factcheck_cli.view import ClaimView

__all__ = ["Progress", "clean", "describe_event", "make_console", "plain", "proto_json", "render_result"]

SCORE_BAR_CELLS = 20

VERDICT_STYLES = {
    "VERIFIED": "green",
    "DISPUTED": "red",
    "UNVERIFIABLE": "bright_black",
    view.UNCHECKED: "dim",
}
MARKER_STYLES = {
    "VERIFIED": "bold white on green",
    "DISPUTED": "bold white on red",
    "UNVERIFIABLE": "bold white on bright_black",
    view.UNCHECKED: "dim reverse",
}
STATUS_STYLES = {
    factcheck_pb2.MESSAGE_STATUS_RUNNING: "cyan",
    factcheck_pb2.MESSAGE_STATUS_COMPLETE: "green",
    factcheck_pb2.MESSAGE_STATUS_PARTIAL: "yellow",
    factcheck_pb2.MESSAGE_STATUS_FAILED: "red",
    factcheck_pb2.MESSAGE_STATUS_CANCELLED: "magenta",
}
BAND_STYLES = {"good": "bold green", "mixed": "bold yellow", "poor": "bold red", "none": "dim"}
# What the spinner says while the gateway works on the stage an event opened.
ACTIVITY = {
    "factcheck_start": "Starting",
    "generate_start": "Generating content",
    "extract_start": "Extracting claims",
    "verify_start": "Verifying claims",
    "investigation_start": "Investigating dubious claims",
    "report_start": "Writing the report",
    "report_complete": "Writing the title",
    **council_render.ACTIVITY,
}
RECONNECTING = "Reconnecting to the gateway"


# --- progress -----------------------------------------------------------------------------


class Progress:
    """Shows a run's events as they arrive.

    On a terminal: coloured lines above a spinner that names the stage in progress.
    Otherwise: the same lines as plain text on stderr, so stdout keeps only the report.
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._activity = ACTIVITY["factcheck_start"]
        self._status = console.status(self._activity) if console.is_terminal else None

    def __enter__(self) -> Progress:
        if self._status is not None:
            self._status.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._status is not None:
            self._status.stop()

    def show(self, event: factcheck_pb2.FactCheckEvent) -> None:
        line = describe_event(event)
        if line is None:
            return
        if self._status is None:
            print(line.plain, file=sys.stderr, flush=True)
            return
        self._console.print(line)
        self._activity = ACTIVITY.get(event.WhichOneof("event"), self._activity)
        self._status.update(self._activity)

    def note(self, text: str) -> None:
        """A line about the connection rather than the run (e.g. it broke and is being resumed)."""
        if self._status is None:
            print(f"factcheck: {text}", file=sys.stderr, flush=True)
            return
        self._console.print(plain(f"factcheck: {text}", "yellow"))
        self._status.update(RECONNECTING)


def describe_event(event: factcheck_pb2.FactCheckEvent) -> Text | None:
    """One progress line per event (None for fields this client cannot read).

    Event kinds added to the protocol after this renderer get a generic line rather than an error.
    """
    kind = event.WhichOneof("event")
    if kind is None:
        return None
    describe = _DESCRIBERS.get(kind)
    if describe is None:
        return stage_line(kind.split("_")[0], kind.replace("_", " "))
    return describe(getattr(event, kind))


def _counts(counts: Mapping[str, int]) -> Text:
    """ "3 verified, 1 disputed, 0 unverifiable" in verdict colours (unchecked only when there are some)."""
    shown = [*view.VERDICTS, view.UNCHECKED] if counts.get(view.UNCHECKED) else view.VERDICTS
    line = Text()
    for index, verdict in enumerate(shown):
        if index:
            line.append(", ")
        line.append(f"{counts.get(verdict, 0)} {verdict.lower()}", style=VERDICT_STYLES[verdict])
    return line


def _summary_counts(summary) -> dict[str, int]:
    return {verdict: getattr(summary, verdict.lower()) for verdict in view.VERDICTS}


def _started(payload: factcheck_pb2.FactCheckStartPayload) -> Text:
    if payload.mode == factcheck_pb2.MODE_COUNCIL:
        return council_render.started(payload)
    config = payload.config
    source = "generated content" if config.content_source == factcheck_pb2.CONTENT_SOURCE_GENERATED else "your content"
    checkers = list(config.checker_models)
    line = stage_line(
        "start",
        f"run {payload.message_id}: checking {source} with {counted(len(checkers), 'checker')}: {', '.join(checkers)}",
    )
    if config.HasField("bias_warning"):
        with_lines(line, [f"warning: {config.bias_warning}"])
    return line


def _generated(payload: factcheck_pb2.GenerateCompletePayload) -> Text:
    if payload.fallback_to_question:
        return stage_line("generate", f"{payload.model} failed; the question is checked as the content")
    took = view.seconds(payload.response_time_ms)
    return stage_line("generate", f"{payload.model} wrote {counted(len(payload.content), 'character')} in {took}")


def _extracted(payload: factcheck_pb2.ExtractCompletePayload) -> Text:
    took = view.seconds(payload.response_time_ms)
    if not payload.total_claims:
        line = stage_line("extract", f"found no verifiable claims ({payload.model}, {took})")
    else:
        types = ", ".join(f"{name} {count}" for name, count in sorted(payload.type_breakdown.items()))
        found = counted(payload.total_claims, "claim")
        line = stage_line("extract", f"found {found} ({types}) with {payload.model} in {took}")
    if payload.content_truncated:
        line.append("; the content was truncated to the maximum length", style="yellow")
    return line


def _evidence(payload: factcheck_pb2.EvidenceRetrievedPayload) -> Text:
    took = view.seconds(payload.response_time_ms)
    found = f"found {counted(len(payload.passages), 'passage')} for {counted(len(payload.claims), 'claim')}"
    return stage_line("evidence", f"{found} ({payload.method or 'retrieval'}) in {took}")


def _verify_started(payload: factcheck_pb2.VerifyStartPayload) -> Text:
    claims, checkers = counted(payload.claim_count, "claim"), counted(payload.checker_count, "checker")
    return stage_line("verify", f"checking {claims} with {checkers}")


def _checker_done(payload: factcheck_pb2.CheckerCompletePayload) -> Text:
    took = view.seconds(payload.response_time_ms)
    line = stage_line("verify", f"{payload.model} done in {took}: ", _counts(_summary_counts(payload.summary)))
    cached = sum(1 for verification in payload.verifications if verification.cached)
    if cached:
        line.append(f" ({cached} from the verification cache)", style="dim")
    flagged = sum(1 for verification in payload.verifications if verification.audit_flags)
    if flagged:
        line.append(f"; the audit flagged {counted(flagged, 'answer')}", style="yellow")
    return line


def _consensus(payload: factcheck_pb2.AllCheckersCompletePayload) -> Text:
    counts = Counter(view.verdict_name(item.consensus_verdict) for item in payload.consensus)
    line = stage_line("verify", f"consensus of {counted(payload.checker_count, 'checker')}: ", _counts(counts))
    if payload.HasField("consensus_weighting"):
        line.append(f" ({describe_weighting(payload.consensus_weighting)})")
    return with_lines(line, (f"{failure.model} failed: {failure.message}" for failure in payload.failed_checkers))


def _reported(payload: factcheck_pb2.ReportCompletePayload) -> Text:
    took = view.seconds(payload.response_time_ms)
    if payload.HasField("reliability_score"):
        score = payload.reliability_score
        line = stage_line(
            "report", "reliability score ", Text(f"{score}/100", style=BAND_STYLES[view.score_band(score)])
        )
        line.append(f" ({view.score_label(score)}) by {clean(payload.model)} in {took}")
    else:
        note = payload.summary.note if payload.summary.HasField("note") else "no score"
        line = stage_line("report", f"{note} ({payload.model}, {took})")
    if payload.fallback:
        line.append(f"; {view.fallback_text(payload.fallback_reason)}", style="yellow")
    return line


def _titled(payload: factcheck_pb2.TitleCompletePayload) -> Text:
    return stage_line("title", payload.title)


def _completed(payload: factcheck_pb2.CompletePayload) -> Text:
    if payload.status == factcheck_pb2.MESSAGE_STATUS_PARTIAL:
        reason = clean(payload.stop_reason) if payload.HasField("stop_reason") else None
        line = stage_line(
            "done",
            Text(f"partial: {reason or 'the time budget ran out and later stages were skipped'}", style="yellow"),
        )
    else:
        line = stage_line("done", "complete")
    usage = payload.usage
    if usage.calls or usage.cache_hits:
        spent = f" ({counted(usage.calls, 'model call')}, {counted(usage.total_tokens, 'token')}, ${usage.cost_usd:.4f}"
        line.append(spent + (f", {usage.cache_hits} from cache)" if usage.cache_hits else ")"), style="dim")
    return line


def _failed(payload: factcheck_pb2.ErrorPayload) -> Text:
    line = stage_line("failed", Text(clean(payload.message), style="bold red"))
    # One line per failed stage: "verify_0 model: CODE message".
    return with_lines(line, (view.failure_text(failure) for failure in payload.failures))


def _cancelled(payload: factcheck_pb2.CancelledPayload) -> Text:
    return stage_line("cancelled", Text(clean(payload.reason or "the run was cancelled"), style="bold yellow"))


def _stage_opened(stage: str, activity: str) -> Callable[[object], Text]:
    return lambda payload: stage_line(stage, activity)


# Each describer takes its own event's payload (Any: the table holds them all).
_DESCRIBERS: dict[str, Callable[[Any], Text]] = {
    "factcheck_start": _started,
    "generate_start": _stage_opened("generate", "generating content"),
    "generate_complete": _generated,
    "extract_start": _stage_opened("extract", "extracting claims"),
    "extract_complete": _extracted,
    "evidence_retrieved": _evidence,
    "verify_start": _verify_started,
    "checker_complete": _checker_done,
    "all_checkers_complete": _consensus,
    "report_start": _stage_opened("report", "writing the report"),
    "report_complete": _reported,
    "title_complete": _titled,
    "complete": _completed,
    "error": _failed,
    "cancelled": _cancelled,
    **council_render.DESCRIBERS,
    **citations_render.DESCRIBERS,
}
_DESCRIBERS.update(investigation.describers(stage_line, clean))


# --- the report ---------------------------------------------------------------------------


def render_result(console: Console, result: factcheck_pb2.FactCheckResult) -> None:
    """The report a person reads: score, evidence table, disputed claims, annotated content
    (a council run: its ranking)."""
    if result.mode == factcheck_pb2.MODE_COUNCIL:
        council_render.render_council(console, result)
        return
    views = view.claim_views(result)
    console.print(_header(result))
    print_status(console, result)
    console.print(_score(result))
    console.print(_metrics(views))
    if result.verification.HasField("consensus_weighting"):  # the run chose its consensus (FactCheckConfig.consensus)
        console.print(plain(f"Consensus: {describe_weighting(result.verification.consensus_weighting)}"))
    if thresholds := view.thresholds_line(result):  # binary checkers: the threshold each read P(supported) against
        console.print(plain(thresholds))
    if (citations := citations_render.summary_line(result)) is not None:
        console.print(citations)
    if not views:
        console.print(Text(view.no_claims_text(result), style="yellow"))
    else:
        section(console, "Evidence", _evidence_table(views))
    findings, not_audited = view.audit_findings(views), view.not_audited_note(views)
    if findings or not_audited:
        section(console, "Audit", _audit(findings, not_audited), style="bold yellow")
    disputed = [claim for claim in views if claim.verdict == "DISPUTED"]
    if disputed:
        section(console, "Disputed claims", _disputed(disputed, view.passage_titles(result)), style="bold red")
    investigated = investigation.table(result, clean)
    if investigated is not None:
        section(console, "Investigation", investigated)
    section(console, "Annotated content", annotated_content(result.content.text, views))


def _header(result: factcheck_pb2.FactCheckResult) -> Panel:
    checkers = ", ".join(checker.model for checker in result.verification.checkers) or "—"
    rows = [
        ("id", result.message_id),
        ("status", f"{view.status_name(result.status)}, created {view.local_time(result.created_at)}"),
        ("question", result.question),
        ("content", view.content_source(result)),
        (
            "models",
            f"extractor {result.extraction.model or '—'}; checkers {checkers}; reporter {result.report.model or '—'}",
        ),
    ]
    body = Table.grid(padding=(0, 2))
    body.add_column(style="bold")
    body.add_column()
    for name, value in rows:
        body.add_row(name, plain(value))
    title = plain(result.title if result.HasField("title") else "Fact-check", "bold")
    return Panel(body, title=title, title_align="left", box=box.ROUNDED, expand=False)


def _score(result: factcheck_pb2.FactCheckResult) -> Text:
    score = view.score_of(result)
    style = BAND_STYLES[view.score_band(score)]
    line = Text("Reliability score  ", style="bold")
    if score is None:
        line.append("n/a", style=style)
    else:
        filled = round(score / 100 * SCORE_BAR_CELLS)
        line.append(f"{score}/100  ", style=style)
        line.append("█" * filled, style=style)
        line.append("░" * (SCORE_BAR_CELLS - filled), style="dim")
        line.append(f"  {view.score_label(score)}")
    if result.report.fallback:
        line.append(f"  ({view.fallback_text(result.report.fallback_reason)})", style="yellow")
    return line


def _metrics(views: list[ClaimView]) -> Text:
    line = Text(f"Claims {len(views)}  ·  {view.agreement_summary(views)}  ·  ")
    return line.append_text(_counts(view.verdict_counts(views)))


def verdict_text(verdict: str) -> Text:
    return Text(verdict, style=f"bold {VERDICT_STYLES[verdict]}")


def _evidence_table(views: list[ClaimView]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("Claim", ratio=3)
    table.add_column("Type", no_wrap=True)
    table.add_column("Verdict", no_wrap=True)
    table.add_column("Agreement", justify="right", no_wrap=True)
    table.add_column("Correction", ratio=2)
    for claim in views:
        table.add_row(
            str(claim.number),
            plain(claim.claim.claim),
            claim.type,
            verdict_text(claim.verdict),
            claim.agreement_text,
            plain(claim.correction or "—"),
        )
    return table


def _disputed(views: list[ClaimView], titles: Mapping[str, str]) -> Group:
    """Each disputed claim with its correction and what the disputing checkers said."""
    parts = []
    for claim in views:
        parts.append(Text.assemble((f"{claim.number}. ", "bold"), plain(claim.claim.claim, "bold")))
        if claim.correction:
            parts.append(Text.assemble(("   correction: ", "green"), plain(claim.correction)))
        assert claim.consensus is not None  # (a disputed claim has its consensus)
        for verification in claim.consensus.verdicts:
            if view.verdict_name(verification.verdict) == "DISPUTED":
                parts.extend(_dissent(verification, titles))
    return Group(*parts)


def _dissent(verification, titles: Mapping[str, str]) -> list[Text]:
    """What one disputing checker said, and the passages it cited."""
    cached = ", cached" if verification.cached else ""
    said = f"{verification.checker_model} (stated confidence {view.confidence_name(verification.confidence)}{cached}): "
    lines = [Text.assemble("   ", plain(said, "dim"), plain(verification.evidence))]
    for citation in verification.citations:
        lines.append(Text.assemble(("     cites ", "dim"), plain(view.citation_text(citation, titles))))
    return lines


def _audit(findings: list[view.AuditFinding], not_audited: str | None) -> Group:
    """Each flagged answer ("#2 fake/x said VERIFIED, counted as UNVERIFIABLE: unsupported detail: 1972"), and
    what the audit did not read."""
    parts = [Text.assemble((f"#{f.number} ", "bold"), plain(f.text)) for f in findings]
    if not_audited:
        parts.append(plain(not_audited, "dim"))
    return Group(*parts)


def annotated_content(content: str, views: list[ClaimView]) -> Text:
    """The content with each located claim underlined and followed by its marker, e.g. "[#2 DISPUTED]"."""
    annotated = Text()
    for piece, claim in view.segments(content, views):
        if claim is None:
            annotated.append(plain(piece))
            continue
        annotated.append(plain(piece, f"underline {VERDICT_STYLES[claim.verdict]}"))
        annotated.append(" ")
        annotated.append(f"[#{claim.number} {claim.verdict}]", style=MARKER_STYLES[claim.verdict])
    return annotated
