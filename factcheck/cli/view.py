"""What the terminal and HTML reports show, computed once from a FactCheckResult.

Both renderers walk the same claim list, spans and numbers, so a claim is numbered,
located and judged the same way whichever report a person reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timezone

from google.protobuf import timestamp_pb2

from factcheck.core.audit import NOT_AUDITED_REASONS, counted_as
from factcheck.core.domain import (
    AuditFlag,
    ClaimVerification,
    audit_status_from_proto,
    claim_type_from_proto,
    confidence_from_proto,
    is_known_enum,
    verdict_from_proto,
)
from factcheck.text.evidence_text import passage_title
from factcheck.text.spans import locate
from factcheck.text.wording import counted
from factcheck.v1 import common_pb2, evaluation_pb2, factcheck_pb2

VERDICTS = ("VERIFIED", "DISPUTED", "UNVERIFIABLE")
# A claim the run never judged (it failed or stopped before verification).
UNCHECKED = "UNCHECKED"

# The score's colours: green 70-100, amber 40-69, red 0-39.
GOOD_SCORE, MIXED_SCORE = 70, 40
# The report prompt's scoring guide, highest band first.
SCORE_LABELS = (
    (90, "highly reliable"),
    (70, "mostly reliable with minor issues"),
    (50, "mixed accuracy"),
    (30, "significant inaccuracies"),
    (0, "unreliable"),
)


@dataclass(frozen=True)
class ClaimView:
    """One extracted claim with its consensus and where it sits in the content."""

    number: int
    claim: common_pb2.Claim
    consensus: common_pb2.ClaimConsensus | None
    # [start, end) in the content, or None when the claim could not be located.
    span: tuple[int, int] | None

    @property
    def verdict(self) -> str:
        if self.consensus is None or not is_known_enum(common_pb2.Verdict, self.consensus.consensus_verdict):
            return UNCHECKED
        return verdict_from_proto(self.consensus.consensus_verdict)

    @property
    def type(self) -> str:
        return enum_name(common_pb2.ClaimType, self.claim.type, claim_type_from_proto)

    @property
    def agreement(self) -> float | None:
        return self.consensus.agreement_rate if self.consensus is not None else None

    @property
    def checkers(self) -> int:
        return len(self.consensus.verdicts) if self.consensus is not None else 0

    @property
    def agreeing(self) -> int:
        """How many checkers' verdicts counted as the consensus verdict (factcheck/core/audit.py: counted_as)."""
        if self.consensus is None:
            return 0
        return sum(1 for v in self.consensus.verdicts if counted_verdict(v) == self.verdict)

    @property
    def agreement_text(self) -> str:
        """ "2 of 3 checkers agree", "1 of 1 checker": how many checkers the verdict rests on, never a percentage
        that reads as certainty; "—" for a claim no checker judged."""
        if not self.checkers:
            return "—"
        text = f"{self.agreeing} of {counted(self.checkers, 'checker')}"
        return f"{text} agree" if self.checkers > 1 else text

    @property
    def correction(self) -> str | None:
        if self.consensus is not None and self.consensus.HasField("correction"):
            return self.consensus.correction
        return None


def counted_verdict(verification: common_pb2.ClaimVerification) -> str:
    """The verdict a checker's verification counted as in the consensus (a VERIFIED the audit flagged counts as
    UNVERIFIABLE); "—" for an unknown verdict."""
    if not is_known_enum(common_pb2.Verdict, verification.verdict):
        return "—"
    verdict = verdict_from_proto(verification.verdict)
    flags = tuple(AuditFlag.from_proto(flag) for flag in verification.audit_flags)
    # Only what the rule reads: a newer server's unknown confidence must not stop the report.
    said = ClaimVerification(
        verification.claim_id, verdict, "", None, "LOW", verification.checker_model, audit_flags=flags
    )
    return counted_as(said).verdict


@dataclass(frozen=True)
class AuditFinding:
    """One checker's flagged answer on one claim, as the reports list them."""

    number: int  # the claim's
    claim: str
    model: str
    verdict: str  # as the checker gave it
    counted: str  # as it counted in the consensus
    details: tuple[str, ...]

    @property
    def text(self) -> str:
        """ "fake/x said VERIFIED, counted as UNVERIFIABLE: unsupported detail: 1972" """
        said = f"{self.model} said {self.verdict}"
        if self.counted != self.verdict:
            said += f", counted as {self.counted}"
        return f"{said}: {'; '.join(self.details)}"


def audit_findings(views: list[ClaimView]) -> list[AuditFinding]:
    """Every flagged answer, in claim then checker order."""
    found = []
    for claim in views:
        for verification in claim.consensus.verdicts if claim.consensus is not None else ():
            if verification.audit_flags:
                found.append(
                    AuditFinding(
                        claim.number,
                        claim.claim.claim,
                        verification.checker_model,
                        verdict_name(verification.verdict),
                        counted_verdict(verification),
                        tuple(flag.detail for flag in verification.audit_flags),
                    )
                )
    return found


def not_audited_note(views: list[ClaimView]) -> str | None:
    """What the reports say of answers the audit did not read: "Answers not audited for 3 of 5 claims: no passages:
    checked from the checkers' own knowledge"; None when every answer was audited."""
    for status, reason in NOT_AUDITED_REASONS.items():
        claims = [
            claim
            for claim in views
            if claim.consensus is not None
            and any(audit_status_from_proto(v.audit_status) == status for v in claim.consensus.verdicts)
        ]
        if claims:
            judged = sum(1 for claim in views if claim.consensus is not None)
            return f"Answers not audited for {len(claims)} of {counted(judged, 'claim')}: {reason}."
    return None


def enum_name(enum_type, value: int, name_of) -> str:
    """The short name of a known enum value; "—" for unset or unknown numbers (newer servers may send them)."""
    return name_of(value) if is_known_enum(enum_type, value) else "—"


def confidence_name(value: int) -> str:
    return enum_name(common_pb2.Confidence, value, confidence_from_proto)


def verdict_name(value: int) -> str:
    return enum_name(common_pb2.Verdict, value, verdict_from_proto)


def claim_views(result: factcheck_pb2.FactCheckResult) -> list[ClaimView]:
    """The extracted claims in order, numbered from 1, each with its consensus and span."""
    claims = list(result.extraction.claims)
    # A consensus of no checker (every checker failed) is no verdict: those claims are unchecked.
    consensus = {item.claim_id: item for item in result.verification.consensus} if result.verification.checkers else {}
    spans = claim_spans(result.content.text, claims)
    return [
        ClaimView(number, claim, consensus.get(claim.id), spans.get(claim.id))
        for number, claim in enumerate(claims, start=1)
    ]


def claim_spans(content: str, claims: list[common_pb2.Claim]) -> dict[str, tuple[int, int]]:
    """Non-overlapping spans of the claims in the content: their offsets, else where `locate` finds
    their text (exactly, or ignoring case and whitespace runs, as the extractor does).

    A claim that would overlap an already placed claim gets no span, so highlights never nest.
    """
    spans: dict[str, tuple[int, int]] = {}
    for claim in claims:
        span = _offset_span(claim, len(content))
        if span is not None and not _overlaps(span, spans.values()):
            spans[claim.id] = span
    for claim in claims:
        if claim.id not in spans:
            span = locate(content, claim.claim)
            if span is not None and not _overlaps(span, spans.values()):
                spans[claim.id] = span
    return spans


def _offset_span(claim: common_pb2.Claim, length: int) -> tuple[int, int] | None:
    if not (claim.HasField("start_offset") and claim.HasField("end_offset")):
        return None
    start, end = claim.start_offset, claim.end_offset
    return (start, end) if 0 <= start < end <= length else None


def _overlaps(span: tuple[int, int], taken) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def segments(content: str, views: list[ClaimView]) -> list[tuple[str, ClaimView | None]]:
    """The content cut into plain pieces (None) and claim pieces, in reading order."""
    located = sorted(((view.span, view) for view in views if view.span is not None), key=lambda item: item[0][0])
    pieces: list[tuple[str, ClaimView | None]] = []
    position = 0
    for (start, end), view in located:
        if start > position:
            pieces.append((content[position:start], None))
        pieces.append((content[start:end], view))
        position = end
    if position < len(content):
        pieces.append((content[position:], None))
    return pieces


def thresholds_line(result: factcheck_pb2.FactCheckResult) -> str | None:
    """ "Thresholds: onnx/m 0.62 (fitted on wice:dev, evaluation ID); vllm/x 0.5 (its own)", for the binary
    checkers of a run (None when it had none)."""
    used = [checker for checker in result.verification.checkers if checker.HasField("threshold")]
    if not used:
        return None
    return "Thresholds: " + "; ".join(
        f"{checker.model} {checker_threshold_text(checker.threshold)}" for checker in used
    )


def checker_threshold_text(threshold: evaluation_pb2.CheckerThreshold) -> str:
    """ "0.62 (fitted on wice:dev, evaluation ID)" or "0.5 (its own)"."""
    if threshold.evaluation_id:
        return f"{threshold.threshold:.6g} (fitted on {threshold.fitted_on}, evaluation {threshold.evaluation_id})"
    return f"{threshold.threshold:.6g} (its own)"


def passage_titles(result: factcheck_pb2.FactCheckResult) -> dict[str, str]:
    """Each retrieved passage's title (with its section's heading), by passage id."""
    return {passage.id: passage_title(passage) for passage in result.evidence.passages}


def citation_text(citation: common_pb2.Citation, titles: Mapping[str, str] | None = None) -> str:
    """'P1 (Source title › Section): "the quoted words"', or without the quote when the checker gave none;
    the title from `titles` (see passage_titles) when the cited passage is there, since a citation names no section."""
    source = (titles or {}).get(citation.passage_id) or citation.source_title or citation.source_id
    cited = f"{citation.passage_id} ({source})" if source else citation.passage_id
    return f'{cited}: "{citation.quote}"' if citation.quote else cited


def score_of(result: factcheck_pb2.FactCheckResult) -> int | None:
    return result.report.reliability_score if result.report.HasField("reliability_score") else None


def score_band(score: int | None) -> str:
    """ "good" (green), "mixed" (amber), "poor" (red), or "none" when there is no score."""
    if score is None:
        return "none"
    if score >= GOOD_SCORE:
        return "good"
    return "mixed" if score >= MIXED_SCORE else "poor"


def score_label(score: int | None) -> str:
    if score is None:
        return "no score"
    return next(label for floor, label in SCORE_LABELS if score >= floor)


def consensus_rate(views: list[ClaimView]) -> float | None:
    """The checkers' mean agreement over the judged claims (the consensus rate the HTML report shows)."""
    rates = [view.agreement for view in views if view.agreement is not None]
    return sum(rates) / len(rates) if rates else None


def agreement_summary(views: list[ClaimView]) -> str:
    """How far the checkers agree, in claims: "all 3 checkers agree on 4 of 5 claims", "1 checker per claim"
    (one checker agrees with itself: no agreement to speak of); "n/a" with no judged claim."""
    judged = [view for view in views if view.checkers]
    if not judged:
        return "n/a"
    most = max(view.checkers for view in judged)
    if most == 1:
        return "1 checker per claim"
    unanimous = sum(1 for view in judged if view.agreeing == view.checkers)
    return f"all {most} checkers agree on {unanimous} of {counted(len(judged), 'claim')}"


def verdict_counts(views: list[ClaimView]) -> dict[str, int]:
    """Claims per consensus verdict, every verdict present (UNCHECKED only when some claim is)."""
    counts = {verdict: 0 for verdict in VERDICTS}
    for view in views:
        counts[view.verdict] = counts.get(view.verdict, 0) + 1
    return counts


def status_name(status: int) -> str:
    return enum_name(factcheck_pb2.MessageStatus, status, _status_from_proto)


def _status_from_proto(value: int) -> str:
    return factcheck_pb2.MessageStatus.Name(value).removeprefix("MESSAGE_STATUS_")


STATUS_NOTES = {
    factcheck_pb2.MESSAGE_STATUS_RUNNING: "The run is still in progress: this is what is stored so far.",
    factcheck_pb2.MESSAGE_STATUS_PARTIAL: "The time budget ran out: the stages after the last one shown were skipped.",
    factcheck_pb2.MESSAGE_STATUS_FAILED: "The run failed: only what was done before the failure is shown.",
    factcheck_pb2.MESSAGE_STATUS_CANCELLED: "The run was cancelled: only what was done before it stopped is shown.",
}
# A run that finished although some of its stages failed (a checker, the reporter, the title).
DEGRADED_NOTE = "Some stages failed; the run went on without them."


def status_note(result: factcheck_pb2.FactCheckResult) -> str | None:
    """Why a report is incomplete: any status but COMPLETE, or a complete run with failed stages."""
    note = STATUS_NOTES.get(result.status)
    if note is None and result.failures:
        return DEGRADED_NOTE
    return note


# ExtractionResult.model of a run whose extraction was never stored.
_NOT_EXTRACTED = ("", "unknown")


def no_claims_text(result: factcheck_pb2.FactCheckResult) -> str:
    """What a result without claims says: none were found, or the extraction never finished (a failed
    extraction is not "no verifiable claims")."""
    if result.extraction.model in _NOT_EXTRACTED:
        return "No claims: the extraction did not finish."
    return "No verifiable claims were identified in this content."


def fallback_text(reason: str) -> str:
    """What a fallback report says of itself: the consensus table, and why the reporter's answer was not used."""
    return f"the report is the consensus table: {reason or 'the reporter failed'}"


def failure_text(failure: factcheck_pb2.StageFailure) -> str:
    """ "verify_0 openai/gpt-4o: FAILED_PRECONDITION no endpoint configured for provider 'openai'" """
    where = f"{failure.stage} {failure.model}" if failure.model else failure.stage
    return f"{where}: {failure.code} {failure.message}".rstrip()


def explanation(result: factcheck_pb2.FactCheckResult) -> tuple[str | None, list[str]]:
    """Why the run failed, was cancelled or was degraded: its final message (None when it has none)
    and one line per failed stage or checker."""
    message = result.error_message if result.HasField("error_message") and result.error_message else None
    return message, [failure_text(failure) for failure in result.failures]


def content_source(result: factcheck_pb2.FactCheckResult) -> str:
    """ "User content", or which model generated it and how long it took (the generate phase)."""
    content = result.content
    if content.source != factcheck_pb2.CONTENT_SOURCE_GENERATED:
        return "User content"
    label = f"Generated by {content.model or 'the generator'}"
    if content.HasField("response_time_ms"):
        label += f" in {seconds(content.response_time_ms)}"
    return label


def seconds(milliseconds: int) -> str:
    return f"{milliseconds / 1000:.1f} s"


def local_time(timestamp: timestamp_pb2.Timestamp) -> str:
    """ "YYYY-MM-DD HH:MM" in local time; "—" when unset."""
    if not timestamp.seconds and not timestamp.nanos:
        return "—"
    return timestamp.ToDatetime(tzinfo=timezone.utc).astimezone().strftime("%Y-%m-%d %H:%M")
