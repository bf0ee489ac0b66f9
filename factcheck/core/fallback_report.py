"""Report texts the gateway must be able to write without the reporter service.

The reporter uses them too; they live here so that when the reporter (model or
service) is down, the gateway still produces the fallback table: the consensus as a markdown table (claim, verdict,
agreement rate, correction), with fallback = true.
"""

from __future__ import annotations

import math
from typing import Sequence

from factcheck.core.domain import ClaimConsensus

# The edge case "No verifiable claims found": the report text, and the report_complete note.
NO_CLAIMS_REPORT = "No verifiable factual claims were identified in this content."
NO_CLAIMS_NOTE = "No verifiable claims identified"


def build_fallback_report(consensus: Sequence[ClaimConsensus], reason: str | None = None) -> str:
    """The edge case "Reporter model fails": the raw consensus as a markdown table, so the run still has a report.

    `reason`: why the reporter's answer was not used, when the model did answer (the answer could not be
    read as a report); without one, the report model was unavailable.
    """
    if reason:
        heading = "## Consensus Results (reporter's answer not used)"
        why = f"The report model's answer could not be used as the report ({markdown_cell(reason)})"
    else:
        heading, why = "## Consensus Results (reporter unavailable)", "The report model was unavailable"
    lines = [
        "# Fact-Check Report",
        "",
        heading,
        "",
        f"{why}, so this is the checkers' consensus for each claim, without commentary.",
        "",
    ]
    if not consensus:
        lines.append(NO_CLAIMS_REPORT)
        return "\n".join(lines)
    with_sources = any(item.citations for item in consensus)
    header, rule = (
        "| # | Claim | Verdict | Agreement | Correction |",
        "|---|-------|---------|:---------:|------------|",
    )
    if with_sources:
        header, rule = header + " Sources |", rule + "---------|"
    lines += [header, rule]
    for item in consensus:
        cells = [
            item.claim_id,
            item.claim,
            item.consensus_verdict,
            f"{agreement_percent(item.agreement_rate)}%",
            item.correction or "\u2014",
        ]
        if with_sources:
            cells.append(cited_sources(item) or "\u2014")
        lines.append("| " + " | ".join(markdown_cell(cell) for cell in cells) + " |")
    return "\n".join(lines)


def average_agreement_rate(consensus: Sequence[ClaimConsensus]) -> float:
    """Mean agreement rate (0-100) over claims: the metrics bar's "checker consensus rate"; 0 with no claims."""
    if not consensus:
        return 0.0
    return sum(item.agreement_rate for item in consensus) / len(consensus)


def agreement_percent(agreement_rate: float) -> int:
    """An agreement rate (0-100) as the whole percent reports show: 66.67 → 67."""
    return math.floor(agreement_rate + 0.5) if agreement_rate > 0 else 0


def markdown_cell(text: str) -> str:
    """Text that cannot break a markdown table row: pipes escaped, line breaks (any whitespace run) as one space."""
    return " ".join(text.split()).replace("|", "\\|")


def cited_sources(item: ClaimConsensus) -> str:
    """The titles of the sources the consensus cites, each once, for an evidence table cell."""
    titles = dict.fromkeys(c.source_title or c.source_id for c in item.citations)
    return "; ".join(titles)
