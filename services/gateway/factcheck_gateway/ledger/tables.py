"""The model-call ledger's table (migration 0008): one row per model call of a run or an evaluation.

Created by the Alembic migrations; the model must stay in step with them (tests/test_store.py compares
every feature's tables, gathered in factcheck_gateway/schema.py, with the migrations).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, CheckConstraint, Float, ForeignKey, Index, Integer, String, false
from sqlalchemy.orm import Mapped, mapped_column

from factcheck_gateway.store.models import Base, UTCDateTime, tenant_column, utc_now


class ModelCallRecord(Base):
    """One model call of a run (or one reuse of a cached answer, outcome "cache_hit"): the ledger.

    Stored with the run's next commit. The prices used are stored on the row, so a later price
    change never rewrites what a past run cost; NULL prices mean the model had no price.
    """

    __tablename__ = "model_calls"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # The run that paid for the call, or (evaluation_id) the evaluation: exactly one is set (migration 0011).
    message_id: Mapped[str | None] = mapped_column(
        String(255), ForeignKey("messages.id", ondelete="CASCADE"), nullable=True
    )
    evaluation_id: Mapped[str | None] = mapped_column(
        String(36), ForeignKey("evaluations.id", ondelete="CASCADE"), nullable=True
    )
    tenant_id: Mapped[str] = tenant_column()
    mode: Mapped[str] = mapped_column(String(32), nullable=False)
    # The kind of call, from the RPC: generate, extract, verify, report, title, council_check, synthesize, ...
    stage: Mapped[str] = mapped_column(String(64), nullable=False)
    method: Mapped[str] = mapped_column(String(64), nullable=False)
    model: Mapped[str] = mapped_column(String(255), nullable=False)
    provider: Mapped[str] = mapped_column(String(64), nullable=False)
    prompt_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    cached_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    total_tokens: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    latency_ms: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    # "ok", the model error's type, a gRPC status name when the service reported nothing, or "cache_hit".
    outcome: Mapped[str] = mapped_column(String(64), nullable=False)
    prompt_version: Mapped[str] = mapped_column(String(64), nullable=False, default="")
    # The token counts are the service's estimate (no usage reported, a local engine, a call cut short).
    usage_estimated: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())
    input_price_per_million: Mapped[float | None] = mapped_column(Float, nullable=True)
    output_price_per_million: Mapped[float | None] = mapped_column(Float, nullable=True)
    cached_input_price_per_million: Mapped[float | None] = mapped_column(Float, nullable=True)
    cost_usd: Mapped[float] = mapped_column(Float, nullable=False, default=0.0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)

    __table_args__ = (
        # GetUsage: one tenant's calls over a time range.
        Index("idx_model_calls_tenant_created", "tenant_id", "created_at"),
        # Per-run totals (complete, GetResult, ListResults, budgets of resumed runs).
        Index("idx_model_calls_message_id", "message_id"),
        # Per-evaluation totals.
        Index("idx_model_calls_evaluation_id", "evaluation_id"),
        CheckConstraint("(message_id IS NULL) <> (evaluation_id IS NULL)", name="ck_model_calls_payer"),
    )
