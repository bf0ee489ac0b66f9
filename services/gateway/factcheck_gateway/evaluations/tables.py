"""Checker evaluations' tables (migrations 0011, 0012 and 0015): the evaluation, each checker's answer on
each item, its events, and the thresholds fitted on it.

Created by the Alembic migrations; the models must stay in step with them (tests/test_store.py compares
every feature's tables, gathered in factcheck_gateway/schema.py, with the migrations).
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
    LargeBinary,
    PrimaryKeyConstraint,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from factcheck_gateway.store.models import JSON_DOCUMENT, STATUSES, Base, UTCDateTime, one_of, tenant_column, utc_now


class EvaluationRow(Base):
    """One evaluation of checker models on labelled sets (EvaluationService).

    `config` holds what it judges (checker models, the sets with the ids drawn from each, limit, seed,
    budget, cache, concurrency); `custom_items` the caller's own sets' items, so that a resume on any
    gateway judges the same items. While RUNNING, `owner` is the gateway working on it and
    `updated_at` its heartbeat: a resume may take over once that is older than the lease.
    """

    __tablename__ = "evaluations"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    tenant_id: Mapped[str] = tenant_column()
    status: Mapped[str] = mapped_column(String(20), nullable=False)
    config: Mapped[dict[str, Any]] = mapped_column(JSON_DOCUMENT, nullable=False)
    custom_items: Mapped[dict[str, Any]] = mapped_column(JSON_DOCUMENT, nullable=False)
    total: Mapped[int] = mapped_column(Integer, nullable=False)
    owner: Mapped[str | None] = mapped_column(String(255), nullable=True)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)
    # seq of the newest stored event (evaluation_events); the next one is last_seq + 1 (migration 0012).
    last_seq: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")

    __table_args__ = (
        # ListEvaluations (newest first per tenant) and the weighted consensus's newest complete one.
        Index("idx_evaluations_tenant_created", "tenant_id", "created_at", "id"),
        CheckConstraint(one_of("status", STATUSES), name="ck_evaluations_status"),
    )


class EvaluationItemRow(Base):
    """One checker's answer on one labelled item, stored the moment it exists.

    A failed call is a row too (`failed`, with its error): it is not scored, and a resume asks again.
    Tokens and cost are the sums of the item's ledger rows (model_calls with this evaluation_id).
    `answer` is the checker's evidence text (for an unreadable answer, the start of its raw answer) and
    `id` the row's own id, which ListEvaluationItems pages by (migration 0012).
    """

    __tablename__ = "evaluation_items"

    id: Mapped[str] = mapped_column(String(36), nullable=False)
    evaluation_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("evaluations.id", ondelete="CASCADE"), nullable=False
    )
    checker_model: Mapped[str] = mapped_column(String(255), nullable=False)
    set_name: Mapped[str] = mapped_column(String(64), nullable=False)
    item_id: Mapped[str] = mapped_column(String(200), nullable=False)
    label: Mapped[str] = mapped_column(String(16), nullable=False)
    verdict: Mapped[str | None] = mapped_column(String(16), nullable=True)  # None when the call failed
    confidence: Mapped[str | None] = mapped_column(String(8), nullable=True)
    unreadable: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    cached: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    failed: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    latency_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    prompt_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    cached_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    cost_usd: Mapped[float] = mapped_column(Float, nullable=False, default=0.0)
    answer: Mapped[str | None] = mapped_column(Text, nullable=True)
    correction: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)
    # A binary checker's P(supported) of the claim when the threshold decided the verdict, and the threshold
    # it was read against; NULL for other checkers (migration 0015).
    support_probability: Mapped[float | None] = mapped_column(Float, nullable=True)
    support_threshold: Mapped[float | None] = mapped_column(Float, nullable=True)

    __table_args__ = (
        PrimaryKeyConstraint("evaluation_id", "checker_model", "set_name", "item_id"),
        # ListEvaluationItems: one evaluation's answers, newest first.
        Index("idx_evaluation_items_page", "evaluation_id", "created_at", "id"),
    )


class EvaluationThresholdRow(Base):
    """A binary checker's decision threshold fitted on an evaluation's one set once it was COMPLETE
    (EvaluationConfig.fit_thresholds), or why none could be (`threshold` NULL, `error`); migration 0015."""

    __tablename__ = "evaluation_thresholds"

    evaluation_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("evaluations.id", ondelete="CASCADE"), nullable=False
    )
    checker_model: Mapped[str] = mapped_column(String(255), nullable=False)
    set_name: Mapped[str] = mapped_column(String(64), nullable=False)
    threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    criterion: Mapped[str] = mapped_column(String(32), nullable=False)
    balanced_accuracy: Mapped[float] = mapped_column(Float, nullable=False)
    evaluated_threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    evaluated_balanced_accuracy: Mapped[float] = mapped_column(Float, nullable=False)
    items: Mapped[int] = mapped_column(Integer, nullable=False)
    verified_items: Mapped[int] = mapped_column(Integer, nullable=False)
    fixed_items: Mapped[int] = mapped_column(Integer, nullable=False)
    candidates: Mapped[int] = mapped_column(Integer, nullable=False)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)

    __table_args__ = (PrimaryKeyConstraint("evaluation_id", "checker_model"),)


class EvaluationEventRow(Base):
    """One stored event of an evaluation (an EvaluationEvent, serialized), in seq order: what
    WatchEvaluation replays from any gateway (migration 0012)."""

    __tablename__ = "evaluation_events"

    evaluation_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("evaluations.id", ondelete="CASCADE"), nullable=False
    )
    seq: Mapped[int] = mapped_column(Integer, nullable=False)
    event_type: Mapped[str] = mapped_column(String(16), nullable=False)
    payload: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)

    __table_args__ = (PrimaryKeyConstraint("evaluation_id", "seq"),)
