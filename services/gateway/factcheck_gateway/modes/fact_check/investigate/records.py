"""The investigate row's parsed_data (the evidence chain of every claim), and the protos built from it:
the claim_investigated event, the summary, and FactCheckResult.investigation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from google.protobuf.json_format import ParseDict

from factcheck.core.domain import verdict_to_proto
from factcheck.v1 import common_pb2, investigation_pb2
from factcheck_gateway.modes.fact_check.investigate.flags import CRITICAL, Candidate
from factcheck_gateway.modes.fact_check.investigate.impact import ImpactReassessment
from factcheck_gateway.modes.fact_check.investigate.loop import FAILED, ClaimInvestigation
from factcheck_gateway.reviews.states import (
    CONFIRMED,
    REFUTED,
    REVIEW_STATES,
    SUPERSEDED,
    UNVERIFIABLE,
    flag_value,
    status_value,
)


def tier_value(name: str) -> investigation_pb2.ImpactTier:
    # The cast: protoc's .pyi make an enum's Value() return a plain int, where fields take the enum's type.
    return cast(investigation_pb2.ImpactTier, investigation_pb2.ImpactTier.Value(f"IMPACT_TIER_{name}"))


def queue_json(candidate: Candidate) -> dict[str, Any]:
    return {
        "claimId": candidate.claim.id,
        "flags": list(candidate.flags),
        "impactTier": candidate.impact_tier,
        "fixability": candidate.fixability,
        "priority": candidate.priority,
    }


def queued_proto(item: Mapping[str, Any]) -> investigation_pb2.QueuedClaim:
    return investigation_pb2.QueuedClaim(
        claim_id=item["claimId"],
        flags=[flag_value(f) for f in item["flags"]],
        impact_tier=tier_value(item["impactTier"]),
        fixability=item["fixability"],
        priority=item["priority"],
    )


def claim_json(
    work: ClaimInvestigation, human_review: bool, impact: ImpactReassessment | None = None
) -> dict[str, Any]:
    """The claim's stored record. A person reviews a claim that was CRITICAL when queued or once
    re-assessed (`impact`, for a confirmed claim)."""
    candidate, decision = work.candidate, work.decision
    counted = set(decision.counted) if decision else set()
    assert decision is not None  # a resolved claim's last query always decides
    critical = candidate.impact_tier == CRITICAL or (impact is not None and impact.tier == CRITICAL)
    return {
        **queue_json(candidate),
        "claim": candidate.claim.claim,
        "firstPass": {
            "verdict": candidate.first_pass_verdict,
            "confidence": candidate.first_pass_confidence,
            "agreementRate": candidate.agreement_rate,
        },
        "contradicts": list(candidate.contradicts),
        "queries": work.queries,
        "results": [f.to_json(counted) for f in work.found],
        "decision": {
            "status": decision.status,
            "rule": decision.rule,
            "reasoning": decision.reasoning,
            "baseConfidence": decision.base_confidence,
            "confidence": decision.confidence,
            "breakdown": [{"source": b.source, "authority": b.authority, "boost": b.boost} for b in decision.breakdown],
            "supporting": list(decision.supporting),
            "refuting": list(decision.refuting),
        },
        "succeededVariant": work.succeeded_variant,
        "reviewRequired": human_review and critical,
        "reassessedImpact": {"tier": impact.tier, "reasoning": impact.reasoning} if impact else None,
        "contradictionLinks": [],
        "searches": work.searches,
        "modelCalls": work.model_calls,
        "elapsedMs": work.elapsed_ms,
        "batch": work.batch,
        "attempts": work.attempts,
        "failure": work.failure,
        "droppedResults": work.dropped_results,
    }


def event_proto(claim: Mapping[str, Any]) -> investigation_pb2.ClaimInvestigatedPayload:
    decision = claim["decision"]
    return investigation_pb2.ClaimInvestigatedPayload(
        claim_id=claim["claimId"],
        claim=claim["claim"],
        origin_flags=[flag_value(f) for f in claim["flags"]],
        status=status_value(decision["status"]),
        reasoning=decision["reasoning"],
        confidence=decision["confidence"],
        impact_tier=tier_value(claim["impactTier"]),
        pending_review=bool(claim["reviewRequired"]),
        succeeded_variant=claim["succeededVariant"],
        searches=claim["searches"],
        model_calls=claim["modelCalls"],
        batch=claim["batch"],
        dropped_results=claim.get("droppedResults", 0),
        reassessed_impact_tier=_reassessed_tier(claim),
        contradictions=contradiction_protos(claim),
    )


def _reassessed_tier(claim: Mapping[str, Any]) -> investigation_pb2.ImpactTier:
    reassessed = claim.get("reassessedImpact")
    return tier_value(reassessed["tier"]) if reassessed else investigation_pb2.IMPACT_TIER_UNSPECIFIED


def contradiction_protos(claim: Mapping[str, Any]) -> list[investigation_pb2.ContradictionLink]:
    return [
        investigation_pb2.ContradictionLink(
            claim_id=link["claimId"],
            role=cast(
                investigation_pb2.ContradictionRole,
                investigation_pb2.ContradictionRole.Value(f"CONTRADICTION_ROLE_{link['role']}"),
            ),
            kind=cast(
                investigation_pb2.ContradictionKind,
                investigation_pb2.ContradictionKind.Value(f"CONTRADICTION_KIND_{link['kind']}"),
            ),
            reasoning=link["reasoning"],
        )
        for link in claim.get("contradictionLinks", [])
    ]


def summary_json(claims: Sequence[Mapping[str, Any]], batches: int, search_calls: int) -> dict[str, Any]:
    statuses = [c["decision"]["status"] for c in claims]
    return {
        "investigated": len(claims),
        "confirmed": statuses.count(CONFIRMED),
        "refuted": statuses.count(REFUTED),
        "superseded": statuses.count(SUPERSEDED),
        "unverifiable": statuses.count(UNVERIFIABLE),
        "pendingReview": sum(1 for c in claims if c["reviewRequired"]),
        "searches": search_calls,
        "modelCalls": sum(c["modelCalls"] for c in claims),
        "batches": batches,
        "failed": sum(1 for c in claims if c["decision"]["rule"] == FAILED),
        "droppedResults": sum(c.get("droppedResults", 0) for c in claims),
    }


def summary_proto(summary: Mapping[str, Any]) -> investigation_pb2.InvestigationSummary:
    return investigation_pb2.InvestigationSummary(
        investigated=summary.get("investigated", 0),
        confirmed=summary.get("confirmed", 0),
        refuted=summary.get("refuted", 0),
        superseded=summary.get("superseded", 0),
        unverifiable=summary.get("unverifiable", 0),
        pending_review=summary.get("pendingReview", 0),
        searches=summary.get("searches", 0),
        model_calls=summary.get("modelCalls", 0),
        batches=summary.get("batches", 0),
        failed=summary.get("failed", 0),
        dropped_results=summary.get("droppedResults", 0),
    )


def review_state(claim: Mapping[str, Any], decided: Mapping[str, Any] | None) -> str:
    if not claim["reviewRequired"]:
        return "NOT_REQUIRED"
    return decided["state"] if decided else "PENDING"


def status_in_force(claim: Mapping[str, Any], decided: Mapping[str, Any] | None) -> str | None:
    """The status the result and report use: None while pending or after a rejection (the first pass stands)."""
    state = review_state(claim, decided)
    if state in ("NOT_REQUIRED", "APPROVED"):
        return claim["decision"]["status"]
    if state == "MODIFIED":
        assert decided is not None  # review_state says MODIFIED only of a decision
        return decided["status"]
    return None


def result_proto(
    data: Mapping[str, Any], decisions: Mapping[str, Mapping[str, Any]], response_time_ms: int
) -> investigation_pb2.InvestigationResult:
    claims = []
    for claim in data.get("claims", []):
        decided = decisions.get(claim["claimId"])
        decision = claim["decision"]
        item = investigation_pb2.InvestigatedClaim(
            claim_id=claim["claimId"],
            claim=claim["claim"],
            origin_flags=[flag_value(f) for f in claim["flags"]],
            impact_tier=tier_value(claim["impactTier"]),
            fixability=claim["fixability"],
            priority=claim["priority"],
            first_pass_verdict=verdict_to_proto(claim["firstPass"]["verdict"]),
            proposed_status=status_value(decision["status"]),
            status=status_value(status_in_force(claim, decided)),
            reasoning=decision["reasoning"],
            base_confidence=decision["baseConfidence"],
            confidence=decision["confidence"],
            confidence_breakdown=[investigation_pb2.ConfidenceBoost(**b) for b in decision["breakdown"]],
            succeeded_variant=claim["succeededVariant"],
            queries=[
                investigation_pb2.InvestigationQuery(
                    variant=q["variant"],
                    query=q["query"],
                    result_ids=q["resultIds"],
                    dropped_results=q.get("droppedResults", 0),
                )
                for q in claim["queries"]
            ],
            evidence=[_evidence(r) for r in claim["results"]],
            review_state=REVIEW_STATES[review_state(claim, decided)],
            reassessed_impact_tier=_reassessed_tier(claim),
            impact_reasoning=(claim.get("reassessedImpact") or {}).get("reasoning", ""),
            contradictions=contradiction_protos(claim),
        )
        if decided and decided.get("reason"):
            item.review_reason = decided["reason"]
        claims.append(item)
    return investigation_pb2.InvestigationResult(
        claims=claims,
        summary=summary_proto(data.get("summary", {})),
        response_time_ms=response_time_ms,
        investigator_model=data.get("investigatorModel", ""),
    )


def _evidence(result: Mapping[str, Any]) -> investigation_pb2.AssessedEvidence:
    passage = {
        "id": result["id"],
        "sourceId": result.get("sourceId") or "",
        "sourceTitle": result.get("title") or "",
        "sourceUrl": result.get("url") or "",
        "text": result.get("text") or "",
        "authority": result["authority"],
    }
    if result.get("publishedAt"):
        passage["publishedAt"] = result["publishedAt"]
    return investigation_pb2.AssessedEvidence(
        result=ParseDict(passage, common_pb2.Passage()),
        stance=cast(
            investigation_pb2.EvidenceStance,
            investigation_pb2.EvidenceStance.Value(f"EVIDENCE_STANCE_{result['stance']}"),
        ),
        temporal=result["temporal"],
        reason=result["reason"],
        domain=result["domain"],
        owner=result["owner"],
        independent=result["independent"],
        provider=result["provider"],
    )


def report_section(data: Mapping[str, Any], decisions: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The report's Investigation section: every investigated claim's status and where it stands with
    review. Written with the report (every review pending) and written again, from the stored decisions,
    whenever the result is read: a decided review never reads "pending"."""
    claims = data.get("claims", [])
    if not claims:
        return ""
    decisions = decisions or {}
    lines = ["", "", "## Investigation", ""]
    for c in claims:
        decision, decided = c["decision"], decisions.get(c["claimId"])
        flags = ", ".join(c["flags"]) or "split or unverifiable vote"
        state = review_state(c, decided)
        status, note = decision["status"], ""
        if state == "PENDING":
            note = " (pending human review)"
        elif decided is not None and state == "APPROVED":
            note = f" (approved by human review: {decided.get('reason', '')})"
        elif decided is not None and state == "REJECTED":
            note = f" (rejected by human review, the first pass's verdict stands: {decided.get('reason', '')})"
        elif decided is not None and state == "MODIFIED":
            status = decided["status"]
            note = f" (set by human review, proposed {decision['status']}: {decided.get('reason', '')})"
        lines.append(
            f"- {c['claimId']}: {status}{note}, confidence {decision['confidence']:.2f} "
            f"(origin: {flags}). {decision['reasoning']}"
        )
    if decisions:
        lines += ["", "Review decisions made after the report was written are shown in this section only."]
    return "\n".join(lines)


def report_text_with_decisions(text: str, data: Mapping[str, Any], decisions: Mapping[str, Mapping[str, Any]]) -> str:
    """The stored report text with its Investigation section written again from the review decisions."""
    written = report_section(data)
    if not decisions or not written or not text.endswith(written):
        return text
    return text[: len(text) - len(written)] + report_section(data, decisions)
