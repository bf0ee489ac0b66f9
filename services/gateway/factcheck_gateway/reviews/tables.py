"""The verification loop's human reviews (migration 0007): one row per CRITICAL claim held for a decision.

Its states are in states.py. Created by the Alembic migrations; the model must stay in step with them
(tests/test_store.py compares every feature's tables, gathered in factcheck_gateway/schema.py).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from factcheck_gateway.store.models import JSON_DOCUMENT, Base, UTCDateTime, tenant_column, utc_now


class InvestigationReview(Base):
    """A CRITICAL claim's investigation outcome, held for a person's decision (ReviewService).

    Written when the run's investigate stage is stored; decided once. The decision is also a
    deliberation_stages row ("review:<claim id>") so that GetResult rebuilds it from the stage rows.
    """

    __tablename__ = "investigation_reviews"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    message_id: Mapped[str] = mapped_column(String(255), ForeignKey("messages.id", ondelete="CASCADE"), nullable=False)
    claim_id: Mapped[str] = mapped_column(String(64), nullable=False)
    tenant_id: Mapped[str] = tenant_column()
    claim: Mapped[str] = mapped_column(Text, nullable=False)
    origin_flags: Mapped[list[str]] = mapped_column(JSON_DOCUMENT, nullable=False)
    proposed_status: Mapped[str] = mapped_column(String(16), nullable=False)
    confidence: Mapped[float] = mapped_column(Float, nullable=False)
    reasoning: Mapped[str] = mapped_column(Text, nullable=False)
    state: Mapped[str] = mapped_column(String(16), nullable=False)
    status: Mapped[str | None] = mapped_column(String(16), nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)
    decided_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)

    __table_args__ = (
        UniqueConstraint("message_id", "claim_id"),
        # ListReviews: one tenant's pending reviews, newest first.
        Index("idx_investigation_reviews_tenant_state_created", "tenant_id", "state", "created_at"),
    )
