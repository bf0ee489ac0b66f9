"""The person's view of the verification loop (issue 18, part 9): progress lines for its events, the
Investigation section of the terminal report and of the HTML page."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

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


def describers(line, clean) -> dict:
    """Progress lines for render.Progress; `line(stage, *parts)` and `clean(text)` are the renderer's."""

    def started(payload: investigation_pb2.InvestigationStartPayload) -> Text:
        return line(
            STAGE,
            f"{len(payload.queue)} dubious claims queued, batches of {payload.batch_size}, "
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
        parts.append(f" — {clean(payload.reasoning)}")
        return line(STAGE, *parts)

    def completed(payload: investigation_pb2.InvestigationCompletePayload) -> Text:
        s = payload.summary
        return line(
            STAGE,
            f"{s.investigated} investigated: {s.confirmed} confirmed, {s.refuted} refuted, {s.superseded} superseded, "
            f"{s.unverifiable} unverifiable; {s.pending_review} pending review "
            f"({s.searches} searches, {s.model_calls} model calls, {payload.response_time_ms / 1000:.1f} s)",
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


def html_section(result: factcheck_pb2.FactCheckResult, esc) -> str:
    if not result.HasField("investigation") or not result.investigation.claims:
        return ""
    entries = []
    for claim in result.investigation.claims:
        proposed = status_name(claim.proposed_status)
        status = status_name(claim.status) if claim.status else f"{proposed} (proposed)"
        review = state_name(claim.review_state)
        breakdown = "".join(
            f"<li>{esc(b.source)} (authority {b.authority:.2f}): +{b.boost:.1f}</li>"
            for b in claim.confidence_breakdown
        )
        queries = "".join(
            f"<li><code>{esc(q.variant)}</code> {esc(q.query)} → {len(q.result_ids)} results</li>"
            for q in claim.queries
        )
        evidence = "".join(_evidence_row(e, esc) for e in claim.evidence)
        entries.append(
            f'<details class="claim-detail"><summary><strong>{esc(claim.claim_id)}</strong> '
            f'<span class="badge {HTML_STATUS_CLASS.get(proposed, "v-unverifiable")}">{esc(status)}</span> '
            f'{esc(claim.claim)} <span class="muted small">confidence {claim.confidence:.2f} · origin '
            f"{esc(flag_names(claim.origin_flags))} · review {esc(review)}</span></summary>\n"
            f"<p>{esc(claim.reasoning)}</p>"
            + (f'<p class="small">Review: {esc(claim.review_reason)}</p>' if claim.HasField("review_reason") else "")
            + f'<p class="small">Confidence: base {claim.base_confidence:.2f}</p><ul class="small">{breakdown}</ul>'
            f'<p class="small">Queries (variant that sufficed: {esc(claim.succeeded_variant or "none")})</p>'
            f'<ul class="small">{queries}</ul>'
            f'<table class="small"><thead><tr><th>source</th><th>stance</th><th>authority</th><th>counted</th>'
            f"<th>reason</th></tr></thead><tbody>{evidence}</tbody></table></details>"
        )
    s = result.investigation.summary
    summary = (
        f'<p class="muted small">{s.investigated} investigated · {s.confirmed} confirmed · {s.refuted} refuted · '
        f"{s.superseded} superseded · {s.unverifiable} unverifiable · {s.pending_review} pending review · "
        f"{s.searches} searches · {s.model_calls} model calls</p>"
    )
    return (
        '<section class="card" id="investigation">\n<h2>Investigation</h2>\n'
        + summary
        + "\n".join(entries)
        + "\n</section>"
    )


def _evidence_row(evidence: investigation_pb2.AssessedEvidence, esc) -> str:
    result = evidence.result
    title = esc(result.source_title or result.source_url or result.source_id)
    url = result.source_url
    if url.startswith(("https://", "http://")):
        title = f'<a href="{esc(url)}" rel="noopener noreferrer nofollow">{title}</a>'
    stance = investigation_pb2.EvidenceStance.Name(evidence.stance).removeprefix("EVIDENCE_STANCE_")
    if evidence.temporal:
        stance += " (temporal)"
    dated = f' <span class="muted">{esc(result.published_at)}</span>' if result.published_at else ""
    return (
        f"<tr><td>{title}{dated}</td><td>{esc(stance)}</td><td>{result.authority:.2f}</td>"
        f"<td>{'yes' if evidence.independent else 'copy'}</td><td>{esc(evidence.reason)}</td></tr>"
    )
