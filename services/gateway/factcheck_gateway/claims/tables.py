"""Claim-level citations (migration 0006, audit flags 0014): a run's claims, the evidence spans they cite,
the links between them, numeric details, citation corrections and the run's verification summary.

The citation tiers a claim's verdict and confidence take are spelled here, with the check constraints that
hold them. Created by the Alembic migrations; the models must stay in step with them (tests/test_store.py
compares every feature's tables, gathered in factcheck_gateway/schema.py, with the migrations).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from factcheck_gateway.store.models import JSON_DOCUMENT, Base, UTCDateTime, one_of, tenant_column, utc_now

# The claim-level citation data model, with its "message" being a run (messages.id). Sources are not rows of their own
# here (request sources live in the run's request, stored documents in kb_documents, which must never be referenced in
# a way that forces a rebuild): each evidence span names its source by id, title and url, and belongs to its run. Ids
# are UUIDs derived from the run and the claim or span (uuid5), so a resumed run writes the same ids. Rows are written
# with the events that report them, in the same fenced commit.

SUPPORT_TIERS = ("supported", "partial", "unsupported", "contradicted")
CONFIDENCE_LEVELS = ("high", "medium", "low")
CORRECTION_TYPES = ("keep", "replace", "remove", "add_alternate")


class ClaimRow(Base):
    """One claim of a run with citations."""

    __tablename__ = "claims"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    message_id: Mapped[str] = mapped_column(String(255), ForeignKey("messages.id", ondelete="CASCADE"), nullable=False)
    # Denormalised from messages so ListClaims filters and pages one tenant's claims on one index.
    tenant_id: Mapped[str] = tenant_column()
    claim_key: Mapped[str] = mapped_column(String(64), nullable=False)  # "claim_3" within the run
    claim_text: Mapped[str] = mapped_column(Text, nullable=False)
    claim_type: Mapped[str] = mapped_column(String(20), nullable=False)  # general / numeric
    spec_type: Mapped[str] = mapped_column(String(20), nullable=False)  # STATISTIC, DATE, ...
    confidence_level: Mapped[str | None] = mapped_column(String(20), nullable=True)
    # Offsets in the run's analysed content; NULL when the claim could not be located in it.
    position_start: Mapped[int | None] = mapped_column(Integer, nullable=True)
    position_end: Mapped[int | None] = mapped_column(Integer, nullable=True)
    verification_verdict: Mapped[str | None] = mapped_column(String(20), nullable=True)
    spec_verdict: Mapped[str | None] = mapped_column(String(20), nullable=True)  # VERIFIED / DISPUTED / UNVERIFIABLE
    verification_reasoning: Mapped[str | None] = mapped_column(Text, nullable=True)
    abstained: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)
    # What the gateway's audit found in the checkers' answers on the claim (AuditFlag as JSON); NULL when nothing.
    audit_flags: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON_DOCUMENT, nullable=True)

    __table_args__ = (
        Index("idx_claims_message_id", "message_id"),
        Index("idx_claims_tenant_created_id", "tenant_id", "created_at", "id"),
        Index("idx_claims_verdict", "verification_verdict"),
        Index("idx_claims_confidence", "confidence_level"),
        CheckConstraint("claim_type IN ('general', 'numeric')", name="ck_claims_type"),
        CheckConstraint(one_of("verification_verdict", SUPPORT_TIERS), name="ck_claims_verdict"),
        CheckConstraint(one_of("confidence_level", CONFIDENCE_LEVELS), name="ck_claims_confidence"),
    )


class EvidenceSpanRow(Base):
    """A minimal passage of a source that a claim cites, with offsets the server computed in the source."""

    __tablename__ = "evidence_spans"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    message_id: Mapped[str] = mapped_column(String(255), ForeignKey("messages.id", ondelete="CASCADE"), nullable=False)
    source_id: Mapped[str] = mapped_column(String(255), nullable=False)
    source_title: Mapped[str] = mapped_column(Text, nullable=False, default="")
    source_url: Mapped[str] = mapped_column(Text, nullable=False, default="")
    quote_text: Mapped[str] = mapped_column(Text, nullable=False)
    start_offset: Mapped[int | None] = mapped_column(Integer, nullable=True)
    end_offset: Mapped[int | None] = mapped_column(Integer, nullable=True)
    section_heading: Mapped[str | None] = mapped_column(String(500), nullable=True)
    relevance_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    has_numeric_content: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)

    __table_args__ = (
        Index("idx_evidence_spans_message_id", "message_id"),
        Index("idx_evidence_spans_source_id", "source_id"),
        Index("idx_evidence_spans_relevance", "relevance_score"),
    )


class CitationRow(Base):
    """A claim ↔ span link: primary or alternate, with the confidence in the attribution."""

    __tablename__ = "citations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    claim_id: Mapped[str] = mapped_column(String(36), ForeignKey("claims.id", ondelete="CASCADE"), nullable=False)
    evidence_span_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("evidence_spans.id", ondelete="CASCADE"), nullable=False
    )
    confidence_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    is_primary: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True, server_default=true())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)

    __table_args__ = (
        UniqueConstraint("claim_id", "evidence_span_id", name="uq_claim_evidence"),
        Index("idx_citations_claim_id", "claim_id"),
        Index("idx_citations_evidence_span_id", "evidence_span_id"),
        CheckConstraint("confidence_score >= 0.0 AND confidence_score <= 1.0", name="ck_citations_confidence"),
    )


class NumericClaimRow(Base):
    """The numeric detail of a numeric claim (1:1), with its QA verification."""

    __tablename__ = "numeric_claims"

    claim_id: Mapped[str] = mapped_column(String(36), ForeignKey("claims.id", ondelete="CASCADE"), primary_key=True)
    raw_value: Mapped[str] = mapped_column(Text, nullable=False)
    normalized_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    unit: Mapped[str | None] = mapped_column(String(50), nullable=True)
    entity_reference: Mapped[str | None] = mapped_column(Text, nullable=True)
    derivation_type: Mapped[str] = mapped_column(String(20), nullable=False)
    computation_details: Mapped[dict[str, Any] | None] = mapped_column(JSON_DOCUMENT, nullable=True)
    assumptions: Mapped[dict[str, Any] | None] = mapped_column(JSON_DOCUMENT, nullable=True)
    qa_verification: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON_DOCUMENT, nullable=True)

    __table_args__ = (
        CheckConstraint("derivation_type IN ('direct', 'computed')", name="ck_numeric_claims_derivation"),
    )


class CitationCorrectionRow(Base):
    """A change the correction pass made to a claim's citations (a keep is not stored: only real
    corrections are rows)."""

    __tablename__ = "citation_corrections"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    claim_id: Mapped[str] = mapped_column(String(36), ForeignKey("claims.id", ondelete="CASCADE"), nullable=False)
    original_evidence_span_id: Mapped[str | None] = mapped_column(
        String(36),
        ForeignKey("evidence_spans.id", ondelete="SET NULL", name="fk_corrections_original_span"),
        nullable=True,
    )
    corrected_evidence_span_id: Mapped[str | None] = mapped_column(
        String(36),
        ForeignKey("evidence_spans.id", ondelete="SET NULL", name="fk_corrections_corrected_span"),
        nullable=True,
    )
    correction_type: Mapped[str] = mapped_column(String(20), nullable=False)
    reasoning: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)

    __table_args__ = (
        Index("idx_citation_corrections_claim_id", "claim_id"),
        Index("idx_citation_corrections_type", "correction_type"),
        CheckConstraint(one_of("correction_type", CORRECTION_TYPES), name="ck_citation_corrections_type"),
    )


class VerificationSummaryRow(Base):
    """A run's verification summary (VerificationSummary), for the warning filter of ListClaims."""

    __tablename__ = "verification_summaries"

    message_id: Mapped[str] = mapped_column(
        String(255), ForeignKey("messages.id", ondelete="CASCADE"), primary_key=True
    )
    total_claims: Mapped[int] = mapped_column(Integer, nullable=False)
    supported: Mapped[int] = mapped_column(Integer, nullable=False)
    partial: Mapped[int] = mapped_column(Integer, nullable=False)
    unsupported: Mapped[int] = mapped_column(Integer, nullable=False)
    contradicted: Mapped[int] = mapped_column(Integer, nullable=False)
    abstained_count: Mapped[int] = mapped_column(Integer, nullable=False)
    citation_corrections: Mapped[int] = mapped_column(Integer, nullable=False)
    unsupported_rate: Mapped[float] = mapped_column(Float, nullable=False)
    contradicted_rate: Mapped[float] = mapped_column(Float, nullable=False)
    warning: Mapped[bool] = mapped_column(Boolean, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)
