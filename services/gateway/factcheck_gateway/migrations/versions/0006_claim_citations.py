"""Claim-level citations: claims, evidence spans, citations, numeric claims,
citation corrections and per-run verification summaries.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23

New tables only: messages and kb_documents are never touched (a batch rebuild of either on
SQLite would cascade-delete their children). Every new table hangs off messages (or off
claims) with ON DELETE CASCADE, so deleting a run deletes its claims.
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0006"
down_revision: Union[str, Sequence[str], None] = "0005"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
TIERS = "'supported', 'partial', 'unsupported', 'contradicted'"


def _message_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["message_id"], ["messages.id"], name=f"fk_{table}_message_id_messages", ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "claims",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("tenant_id", sa.String(64), nullable=False, server_default="default"),
        sa.Column("claim_key", sa.String(64), nullable=False),
        sa.Column("claim_text", sa.Text(), nullable=False),
        sa.Column("claim_type", sa.String(20), nullable=False),
        sa.Column("spec_type", sa.String(20), nullable=False),
        sa.Column("confidence_level", sa.String(20), nullable=True),
        sa.Column("position_start", sa.Integer(), nullable=True),
        sa.Column("position_end", sa.Integer(), nullable=True),
        sa.Column("verification_verdict", sa.String(20), nullable=True),
        sa.Column("spec_verdict", sa.String(20), nullable=True),
        sa.Column("verification_reasoning", sa.Text(), nullable=True),
        sa.Column("abstained", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_claims"),
        _message_fk("claims"),
        sa.CheckConstraint("claim_type IN ('general', 'numeric')", name="ck_claims_type"),
        sa.CheckConstraint(f"verification_verdict IN ({TIERS})", name="ck_claims_verdict"),
        sa.CheckConstraint("confidence_level IN ('high', 'medium', 'low')", name="ck_claims_confidence"),
    )
    op.create_index("idx_claims_message_id", "claims", ["message_id"])
    op.create_index("idx_claims_tenant_created_id", "claims", ["tenant_id", "created_at", "id"])
    op.create_index("idx_claims_verdict", "claims", ["verification_verdict"])
    op.create_index("idx_claims_confidence", "claims", ["confidence_level"])

    op.create_table(
        "evidence_spans",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("source_id", sa.String(255), nullable=False),
        sa.Column("source_title", sa.Text(), nullable=False),
        sa.Column("source_url", sa.Text(), nullable=False),
        sa.Column("quote_text", sa.Text(), nullable=False),
        sa.Column("start_offset", sa.Integer(), nullable=True),
        sa.Column("end_offset", sa.Integer(), nullable=True),
        sa.Column("section_heading", sa.String(500), nullable=True),
        sa.Column("relevance_score", sa.Float(), nullable=True),
        sa.Column("has_numeric_content", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_evidence_spans"),
        _message_fk("evidence_spans"),
    )
    op.create_index("idx_evidence_spans_message_id", "evidence_spans", ["message_id"])
    op.create_index("idx_evidence_spans_source_id", "evidence_spans", ["source_id"])
    op.create_index("idx_evidence_spans_relevance", "evidence_spans", ["relevance_score"])

    op.create_table(
        "citations",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("claim_id", sa.String(36), nullable=False),
        sa.Column("evidence_span_id", sa.String(36), nullable=False),
        sa.Column("confidence_score", sa.Float(), nullable=True),
        sa.Column("is_primary", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_citations"),
        sa.ForeignKeyConstraint(["claim_id"], ["claims.id"], name="fk_citations_claim_id_claims", ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["evidence_span_id"],
            ["evidence_spans.id"],
            name="fk_citations_evidence_span_id_evidence_spans",
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint("claim_id", "evidence_span_id", name="uq_claim_evidence"),
        sa.CheckConstraint("confidence_score >= 0.0 AND confidence_score <= 1.0", name="ck_citations_confidence"),
    )
    op.create_index("idx_citations_claim_id", "citations", ["claim_id"])
    op.create_index("idx_citations_evidence_span_id", "citations", ["evidence_span_id"])

    op.create_table(
        "numeric_claims",
        sa.Column("claim_id", sa.String(36), nullable=False),
        sa.Column("raw_value", sa.Text(), nullable=False),
        sa.Column("normalized_value", sa.Float(), nullable=True),
        sa.Column("unit", sa.String(50), nullable=True),
        sa.Column("entity_reference", sa.Text(), nullable=True),
        sa.Column("derivation_type", sa.String(20), nullable=False),
        sa.Column("computation_details", JSON_DOCUMENT, nullable=True),
        sa.Column("assumptions", JSON_DOCUMENT, nullable=True),
        sa.Column("qa_verification", JSON_DOCUMENT, nullable=True),
        sa.PrimaryKeyConstraint("claim_id", name="pk_numeric_claims"),
        sa.ForeignKeyConstraint(
            ["claim_id"], ["claims.id"], name="fk_numeric_claims_claim_id_claims", ondelete="CASCADE"
        ),
        sa.CheckConstraint("derivation_type IN ('direct', 'computed')", name="ck_numeric_claims_derivation"),
    )

    op.create_table(
        "citation_corrections",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("claim_id", sa.String(36), nullable=False),
        sa.Column("original_evidence_span_id", sa.String(36), nullable=True),
        sa.Column("corrected_evidence_span_id", sa.String(36), nullable=True),
        sa.Column("correction_type", sa.String(20), nullable=False),
        sa.Column("reasoning", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_citation_corrections"),
        sa.ForeignKeyConstraint(
            ["claim_id"], ["claims.id"], name="fk_citation_corrections_claim_id_claims", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["original_evidence_span_id"],
            ["evidence_spans.id"],
            name="fk_corrections_original_span",
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["corrected_evidence_span_id"],
            ["evidence_spans.id"],
            name="fk_corrections_corrected_span",
            ondelete="SET NULL",
        ),
        sa.CheckConstraint(
            "correction_type IN ('keep', 'replace', 'remove', 'add_alternate')", name="ck_citation_corrections_type"
        ),
    )
    op.create_index("idx_citation_corrections_claim_id", "citation_corrections", ["claim_id"])
    op.create_index("idx_citation_corrections_type", "citation_corrections", ["correction_type"])

    op.create_table(
        "verification_summaries",
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("total_claims", sa.Integer(), nullable=False),
        sa.Column("supported", sa.Integer(), nullable=False),
        sa.Column("partial", sa.Integer(), nullable=False),
        sa.Column("unsupported", sa.Integer(), nullable=False),
        sa.Column("contradicted", sa.Integer(), nullable=False),
        sa.Column("abstained_count", sa.Integer(), nullable=False),
        sa.Column("citation_corrections", sa.Integer(), nullable=False),
        sa.Column("unsupported_rate", sa.Float(), nullable=False),
        sa.Column("contradicted_rate", sa.Float(), nullable=False),
        sa.Column("warning", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("message_id", name="pk_verification_summaries"),
        _message_fk("verification_summaries"),
    )


def downgrade() -> None:
    for table in (
        "verification_summaries",
        "citation_corrections",
        "numeric_claims",
        "citations",
        "evidence_spans",
        "claims",
    ):
        op.drop_table(table)
