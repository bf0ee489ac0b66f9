"""Claims read back across runs (ClaimsService): filtered, keyset-paged, always within one tenant.

Synchronous SQLAlchemy, called through `call_store` like the stage store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, exists, select
from sqlalchemy.orm import Session

from factcheck.core.domain import AuditFlag, claim_type_to_proto, verdict_to_proto
from factcheck.v1 import citations_pb2, common_pb2
from factcheck_gateway.claims.tables import (
    CitationCorrectionRow,
    CitationRow,
    ClaimRow,
    EvidenceSpanRow,
    NumericClaimRow,
    VerificationSummaryRow,
)
from factcheck_gateway.store.paging import Listing, newest_first_page
from factcheck_gateway.stored_results import timestamp

TIER_PROTOS = {
    "supported": citations_pb2.SUPPORT_TIER_SUPPORTED,
    "partial": citations_pb2.SUPPORT_TIER_PARTIAL,
    "unsupported": citations_pb2.SUPPORT_TIER_UNSUPPORTED,
    "contradicted": citations_pb2.SUPPORT_TIER_CONTRADICTED,
}
LEVEL_PROTOS = {
    "high": citations_pb2.CONFIDENCE_LEVEL_HIGH,
    "medium": citations_pb2.CONFIDENCE_LEVEL_MEDIUM,
    "low": citations_pb2.CONFIDENCE_LEVEL_LOW,
}
CORRECTION_PROTOS = {
    "keep": citations_pb2.CORRECTION_TYPE_KEEP,
    "replace": citations_pb2.CORRECTION_TYPE_REPLACE,
    "remove": citations_pb2.CORRECTION_TYPE_REMOVE,
    "add_alternate": citations_pb2.CORRECTION_TYPE_ADD_ALTERNATE,
}


@dataclass(frozen=True)
class ClaimFilter:
    """ListClaims' filters, already validated (names as stored)."""

    message_id: str | None = None
    support: str | None = None
    spec_verdict: str | None = None
    claim_type: str | None = None
    confidence_level: str | None = None
    numeric: bool | None = None
    warning: bool | None = None
    source_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None

    def values(self) -> dict[str, Any]:
        """The filters by name, what a page token is bound to (AIP-158: other filters, other listing)."""
        return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in self.__dict__.items()}

    def conditions(self) -> list[Any]:
        c = ClaimRow
        found: list[Any] = []
        if self.message_id is not None:
            found.append(c.message_id == self.message_id)
        if self.support is not None:
            found.append(c.verification_verdict == self.support)
        if self.spec_verdict is not None:
            found.append(c.spec_verdict == self.spec_verdict)
        if self.claim_type is not None:
            found.append(c.claim_type == self.claim_type)
        if self.confidence_level is not None:
            found.append(c.confidence_level == self.confidence_level)
        if self.numeric is not None:
            has_numeric = exists().where(NumericClaimRow.claim_id == c.id)
            found.append(has_numeric if self.numeric else ~has_numeric)
        if self.warning is not None:
            found.append(
                exists().where(
                    VerificationSummaryRow.message_id == c.message_id, VerificationSummaryRow.warning == self.warning
                )
            )
        if self.source_id is not None:
            found.append(
                exists().where(
                    CitationRow.claim_id == c.id,
                    CitationRow.evidence_span_id == EvidenceSpanRow.id,
                    EvidenceSpanRow.source_id == self.source_id,
                )
            )
        if self.created_after is not None:
            found.append(c.created_at >= self.created_after)
        if self.created_before is not None:
            found.append(c.created_at < self.created_before)
        return found


class ClaimsStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def list_claims(
        self, tenant_id: str, claim_filter: ClaimFilter, page_size: int, page_token: str | None
    ) -> tuple[list[citations_pb2.ClaimRecord], str | None]:
        """One page of the tenant's claims, newest first; InvalidPageToken for a token of other filters."""
        listing = Listing("ListClaims", tenant_id, claim_filter.values())
        with Session(self.engine) as session:
            rows, next_token = newest_first_page(
                session,
                ClaimRow,
                page_size,
                page_token,
                ClaimRow.tenant_id == tenant_id,
                *claim_filter.conditions(),
                listing=listing,
            )
            numeric = _numeric_by_claim(session, [r.id for r in rows])
            records = [_record(row, numeric.get(row.id)) for row in rows]
        return records, next_token

    def get_claim(self, tenant_id: str, claim_id: str) -> citations_pb2.ClaimRecord | None:
        """The claim with its citations, corrections and numeric detail; None if unknown or another tenant's."""
        with Session(self.engine) as session:
            row = session.get(ClaimRow, claim_id)
            if row is None or row.tenant_id != tenant_id:
                return None
            record = _record(row, session.get(NumericClaimRow, claim_id))
            links = session.execute(
                select(CitationRow, EvidenceSpanRow)
                .join(EvidenceSpanRow, EvidenceSpanRow.id == CitationRow.evidence_span_id)
                .where(CitationRow.claim_id == claim_id)
                .order_by(CitationRow.is_primary.desc(), CitationRow.created_at, CitationRow.id)
            ).all()
            record.citations.extend(
                citations_pb2.CitationLink(
                    evidence_span=_span(span), confidence_score=link.confidence_score or 0.0, is_primary=link.is_primary
                )
                for link, span in links
            )
            corrections = session.scalars(
                select(CitationCorrectionRow)
                .where(CitationCorrectionRow.claim_id == claim_id)
                .order_by(CitationCorrectionRow.created_at, CitationCorrectionRow.id)
            ).all()
            for correction in corrections:
                item = citations_pb2.CitationCorrection(
                    id=correction.id,
                    claim_id=claim_id,
                    correction_type=CORRECTION_PROTOS[correction.correction_type],
                    reasoning=correction.reasoning or "",
                )
                for span_id, target in (
                    (correction.original_evidence_span_id, item.original_evidence),
                    (correction.corrected_evidence_span_id, item.corrected_evidence),
                ):
                    if span_id is not None and (span := session.get(EvidenceSpanRow, span_id)) is not None:
                        target.CopyFrom(_span(span))
                record.corrections.append(item)
        return record


def _numeric_by_claim(session: Session, claim_ids: list[str]) -> dict[str, NumericClaimRow]:
    if not claim_ids:
        return {}
    rows = session.scalars(select(NumericClaimRow).where(NumericClaimRow.claim_id.in_(claim_ids))).all()
    return {row.claim_id: row for row in rows}


def _record(row: ClaimRow, numeric: NumericClaimRow | None) -> citations_pb2.ClaimRecord:
    record = citations_pb2.ClaimRecord(
        id=row.id,
        message_id=row.message_id,
        claim_key=row.claim_key,
        claim_text=row.claim_text,
        claim_type=(
            citations_pb2.CITATION_CLAIM_TYPE_NUMERIC
            if row.claim_type == "numeric"
            else citations_pb2.CITATION_CLAIM_TYPE_GENERAL
        ),
        confidence_level=LEVEL_PROTOS.get(row.confidence_level or "", citations_pb2.CONFIDENCE_LEVEL_UNSPECIFIED),
        support=TIER_PROTOS.get(row.verification_verdict or "", citations_pb2.SUPPORT_TIER_UNSPECIFIED),
        spec_verdict=verdict_to_proto(row.spec_verdict) if row.spec_verdict else common_pb2.VERDICT_UNSPECIFIED,
        verification_reasoning=row.verification_reasoning or "",
        abstained=row.abstained,
        created_at=timestamp(row.created_at),
        spec_type=claim_type_to_proto(row.spec_type),
        audit_flags=[AuditFlag.from_json(flag).to_proto() for flag in row.audit_flags or ()],
    )
    if row.position_start is not None and row.position_end is not None:
        record.position_start, record.position_end = row.position_start, row.position_end
    if numeric is not None:
        detail = record.numeric_detail
        detail.number.raw_value = numeric.raw_value
        if numeric.normalized_value is not None:
            detail.number.value = numeric.normalized_value
        detail.number.unit = numeric.unit or ""
        detail.number.assumptions.update({k: str(v) for k, v in (numeric.assumptions or {}).items()})
        detail.entity_reference = numeric.entity_reference or ""
        detail.derivation_type = (
            citations_pb2.DERIVATION_TYPE_COMPUTED
            if numeric.derivation_type == "computed"
            else citations_pb2.DERIVATION_TYPE_DIRECT
        )
        detail.computation_details.update({k: str(v) for k, v in (numeric.computation_details or {}).items()})
        for qa in numeric.qa_verification or []:
            comparison = qa.get("normalized_comparison") or {}
            detail.qa_verification.append(
                citations_pb2.QAVerification(
                    question=qa.get("question", ""),
                    claim_answer=qa.get("claim_answer", ""),
                    evidence_answer=qa.get("evidence_answer", ""),
                    match=bool(qa.get("match")),
                    tolerance=float(comparison.get("tolerance") or 0.0),
                    explanation=comparison.get("explanation", ""),
                )
            )
    return record


def _span(row: EvidenceSpanRow) -> citations_pb2.EvidenceSpan:
    return citations_pb2.EvidenceSpan(
        id=row.id,
        source_id=row.source_id,
        source_title=row.source_title,
        source_url=row.source_url,
        quote_text=row.quote_text,
        start_offset=row.start_offset or 0,
        end_offset=row.end_offset or 0,
        section_heading=row.section_heading or "",
        relevance_score=row.relevance_score or 0.0,
        has_numeric_content=row.has_numeric_content,
    )
