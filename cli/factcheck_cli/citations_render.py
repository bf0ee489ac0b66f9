"""Terminal output of claim-level citations: progress lines for its events, and the summary line of the report."""

from __future__ import annotations

from typing import Any, Callable

from rich.text import Text

from factcheck.text.text_safety import excerpt
from factcheck.v1 import citations_pb2, factcheck_pb2
from factcheck_cli.terminal import counted, plain, stage_line


def tier_word(tier: int, abstained: bool) -> str:
    return "abstained" if abstained else citations_pb2.SupportTier.Name(tier).removeprefix("SUPPORT_TIER_").lower()


def _verified(payload: citations_pb2.ClaimVerifiedPayload) -> Text:
    return stage_line(
        "cite",
        f"{payload.claim_key} {tier_word(payload.verdict, payload.abstained)}: ",
        excerpt(payload.claim_text, 80),
    )


def _numeric(payload: citations_pb2.NumericClaimDetectedPayload) -> Text:
    check = "matches the evidence" if payload.qa_verified else "not confirmed by the evidence"
    return stage_line(
        "cite", f"figure {excerpt(payload.raw_value, 40)} ({excerpt(payload.entity_reference, 60)}): {check}"
    )


def _corrected(payload: citations_pb2.CitationCorrectedPayload) -> Text:
    kind = citations_pb2.CorrectionType.Name(payload.correction_type).removeprefix("CORRECTION_TYPE_").lower()
    return stage_line("cite", f"citation {kind}: ", excerpt(payload.reasoning, 100))


def _summarised(payload: citations_pb2.VerificationSummaryPayload) -> Text:
    return stage_line("cite", summary_text(payload.summary))


DESCRIBERS: dict[str, Callable[[Any], Text]] = {  # each takes its own event's payload
    "claim_verified": _verified,
    "numeric_claim_detected": _numeric,
    "citation_corrected": _corrected,
    "verification_summary": _summarised,
}


def summary_text(summary: citations_pb2.VerificationSummary) -> Text:
    line = plain(
        f"{summary.supported} supported · {summary.partial} partial · {summary.unsupported} unsupported · "
        f"{summary.contradicted} contradicted · {summary.abstained_count} abstained · "
        f"{counted(summary.citation_corrections, 'citation')} corrected"
    )
    if summary.warning:
        line.append(
            f"  WARNING: {summary.unsupported_rate:.0%} without support, {summary.contradicted_rate:.0%} contradicted",
            style="bold red",
        )
    return line


def summary_line(result: factcheck_pb2.FactCheckResult) -> Text | None:
    """The report's citations line, for runs checked with citations."""
    if not result.HasField("citations") or not result.citations.claims:
        return None
    return Text("Citations  ", style="bold").append_text(summary_text(result.citations.summary))
