"""The gateway's audit of every checker's answer (factcheck/core/audit.py), on a VerifyResponse as it arrives.

A checker's answer is audited once, against what that checker was sent (the request's passages, per claim its
evidence, the content): fresh answers, answers reused from the verification cache and a pipelined run's batches
alike, before they are stored, streamed or counted. Each verification gets its status (AUDITED, NO_PASSAGES for a
claim sent without passages, DISABLED when FACTCHECK_AUDIT is off) and its flags. An answer an earlier attempt of
the run stored keeps the flags it was stored with.
"""

from __future__ import annotations

from factcheck.core.audit import AUDITED, DISABLED, NO_PASSAGES, AuditPassage, audit
from factcheck.core.domain import ClaimVerification, audit_status_to_proto
from factcheck.v1 import checker_pb2, common_pb2


def audit_response(request: checker_pb2.VerifyRequest, response: checker_pb2.VerifyResponse, enabled: bool) -> None:
    """Every verification of `response` (the answer to `request`) audited in place."""
    claims = {claim.id: claim for claim in request.claims}
    given = {passage.id: _passage(passage) for passage in request.passages}
    claim_passages = {item.claim_id: [given[p] for p in item.passage_ids if p in given] for item in request.evidence}
    for verification in response.verifications:
        del verification.audit_flags[:]
        passages = claim_passages.get(verification.claim_id)
        claim = claims.get(verification.claim_id)
        if not enabled:
            verification.audit_status = audit_status_to_proto(DISABLED)
        elif not passages or claim is None:
            verification.audit_status = audit_status_to_proto(NO_PASSAGES)
        else:
            verification.audit_status = audit_status_to_proto(AUDITED)
            flags = audit(
                ClaimVerification.from_proto(verification),
                claim.claim,
                passages,
                given,
                quotable=(claim.claim, claim.context, request.content),
            )
            verification.audit_flags.extend(flag.to_proto() for flag in flags)


def _passage(passage: common_pb2.Passage) -> AuditPassage:
    return AuditPassage(passage.id, passage.text, tuple(t for t in (passage.source_title, passage.section_title) if t))
