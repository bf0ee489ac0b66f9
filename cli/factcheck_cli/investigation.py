"""The person's view of the verification loop: progress lines for its events, the
Investigation section of the terminal report and of the HTML page."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from factcheck.text.wording import counted
from factcheck.v1 import factcheck_pb2, investigation_pb2

STAGE = "investigate"
STATUS_STYLE = {"CONFIRMED": "green", "REFUTED": "red", "SUPERSEDED": "magenta", "UNVERIFIABLE": "yellow"}
HTML_STATUS_CLASS = {"CONFIRMED": "v-verified", "REFUTED": "v-disputed", "SUPERSEDED": "v-disputed"}


def status_name(value: int) -> str:
    name = investigation_pb2.InvestigationStatus.Name(value)
    return name.removeprefix("INVESTIGATION_STATUS_") if value else "—"


def flag_names(values) -> str:
    return ", ".join(investigation_pb2.DubiousFlag.Name(v).removeprefix("DUBIOUS_FLAG_") for v in values) or "vote"


def state_name(value: int) -> str:
    return investigation_pb2.ReviewState.Name(value).removeprefix("REVIEW_STATE_").replace("_", " ").lower()


# --- progress lines -----------------------------------------------------------------------------


def tier_name(tier: int) -> str:
    return investigation_pb2.ImpactTier.Name(tier).removeprefix("IMPACT_TIER_")


def describers(line, clean) -> dict:
    """Progress lines for render.Progress; `line(stage, *parts)` and `clean(text)` are the renderer's."""

    def started(payload: investigation_pb2.InvestigationStartPayload) -> Text:
        return line(
            STAGE,
            f"{counted(len(payload.queue), 'dubious claim')} queued, batches of {payload.batch_size}, "
            f"searching {', '.join(payload.providers) or 'nothing'}",
        )

    def claim_done(payload: investigation_pb2.ClaimInvestigatedPayload) -> Text:
        status = status_name(payload.status)
        parts = [
            Text(f"{payload.claim_id} ", style="bold"),
            Text(status, style=STATUS_STYLE.get(status, "")),
            f" {payload.confidence:.2f} [{flag_names(payload.origin_flags)}]",
        ]
        if payload.pending_review:
            parts.append(Text(" pending review", style="bold yellow"))
        if payload.reassessed_impact_tier and payload.reassessed_impact_tier != payload.impact_tier:
            parts.append(f" impact {tier_name(payload.impact_tier)} → {tier_name(payload.reassessed_impact_tier)}")
        if payload.dropped_results:
            parts.append(Text(f" {counted(payload.dropped_results, 'malformed result')} dropped", style="yellow"))
        parts.append(f" — {clean(payload.reasoning)}")
        return line(STAGE, *parts)

    def completed(payload: investigation_pb2.InvestigationCompletePayload) -> Text:
        s = payload.summary
        return line(
            STAGE,
            f"{s.investigated} investigated: {s.confirmed} confirmed, {s.refuted} refuted, {s.superseded} superseded, "
            f"{s.unverifiable} unverifiable; {s.pending_review} pending review "
            f"({counted(s.searches, 'search', 'searches')}, {counted(s.model_calls, 'model call')}, "
            f"{payload.response_time_ms / 1000:.1f} s)"
            + (f"; {counted(s.dropped_results, 'malformed search result')} dropped" if s.dropped_results else ""),
        )

    def decided(payload: investigation_pb2.ReviewDecidedPayload) -> Text:
        return line("review", f"{payload.claim_id} {state_name(payload.state)}: {clean(payload.reason)}")

    return {
        "investigation_start": started,
        "claim_investigated": claim_done,
        "investigation_complete": completed,
        "review_decided": decided,
    }


# --- terminal report ------------------------------------------------------------------------------


def table(result: factcheck_pb2.FactCheckResult, clean) -> Table | None:
    if not result.HasField("investigation") or not result.investigation.claims:
        return None
    grid = Table(show_lines=False, expand=True)
    for column in ("claim", "origin", "status", "confidence", "review", "evidence"):
        grid.add_column(column)
    for claim in result.investigation.claims:
        proposed = status_name(claim.proposed_status)
        status = status_name(claim.status) if claim.status else f"{proposed} (proposed)"
        boosts = " ".join(f"+{b.boost:.1f}" for b in claim.confidence_breakdown)
        confidence = f"{claim.confidence:.2f}" + (f" = {claim.base_confidence:.1f} {boosts}" if boosts else "")
        counted = [
            e for e in claim.evidence if e.independent and e.stance != investigation_pb2.EVIDENCE_STANCE_IRRELEVANT
        ]
        evidence = "; ".join(clean(e.result.source_title or e.result.source_url)[:60] for e in counted[:3]) or "none"
        grid.add_row(
            Text(f"{claim.claim_id}: {clean(claim.claim)[:80]}"),
            flag_names(claim.origin_flags),
            Text(status, style=STATUS_STYLE.get(proposed, "")),
            confidence,
            state_name(claim.review_state),
            Text(evidence),
        )
    return grid


# --- HTML -------------------------------------------------------------------------------------------


def html_context(result: factcheck_pb2.FactCheckResult) -> dict | None:
    """What templates/investigation.html.j2 shows (it escapes every text); None when the run did not investigate."""
    if not result.HasField("investigation") or not result.investigation.claims:
        return None
    claims = []
    for claim in result.investigation.claims:
        proposed = status_name(claim.proposed_status)
        claims.append(
            {
                "id": claim.claim_id,
                "text": claim.claim,
                "status": status_name(claim.status) if claim.status else f"{proposed} (proposed)",
                "status_class": HTML_STATUS_CLASS.get(proposed, "v-unverifiable"),
                "confidence": f"{claim.confidence:.2f}",
                "base_confidence": f"{claim.base_confidence:.2f}",
                "origin": flag_names(claim.origin_flags),
                "review": state_name(claim.review_state),
                "review_reason": claim.review_reason if claim.HasField("review_reason") else "",
                "reasoning": claim.reasoning,
                "variant": claim.succeeded_variant or "none",
                "breakdown": [
                    {"source": b.source, "authority": f"{b.authority:.2f}", "boost": f"+{b.boost:.1f}"}
                    for b in claim.confidence_breakdown
                ],
                "queries": [
                    {"variant": q.variant, "query": q.query, "results": len(q.result_ids)} for q in claim.queries
                ],
                "evidence": [_evidence(e) for e in claim.evidence],
            }
        )
    return {"claims": claims, "summary": result.investigation.summary}


def _evidence(evidence: investigation_pb2.AssessedEvidence) -> dict:
    result = evidence.result
    stance = investigation_pb2.EvidenceStance.Name(evidence.stance).removeprefix("EVIDENCE_STANCE_")
    url = result.source_url
    return {
        "title": result.source_title or result.source_url or result.source_id,
        # Only web addresses become links (never javascript: or data:).
        "url": url if url.startswith(("https://", "http://")) else "",
        "published": result.published_at,
        "stance": stance + (" (temporal)" if evidence.temporal else ""),
        "authority": f"{result.authority:.2f}",
        "counted": "yes" if evidence.independent else "copy",
        "reason": evidence.reason,
    }
