"""The verification cache's table (model_cache): answers a tenant already paid for, by key.

Created by the Alembic migrations; the model must stay in step with them (tests/test_store.py compares
every feature's tables, gathered in factcheck_gateway/schema.py, with the migrations).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Index, LargeBinary, PrimaryKeyConstraint, String
from sqlalchemy.orm import Mapped, mapped_column

from factcheck_gateway.store.models import Base, UTCDateTime, tenant_column, utc_now


class CacheEntry(Base):
    """A verification (one claim, one model) or an extraction a tenant already paid for.

    `cache_key` is a SHA-256 of everything the answer depends on (see
    services/gateway/factcheck_gateway/verification_cache/cached.py); `payload` the serialized protobuf answer.
    """

    __tablename__ = "model_cache"

    tenant_id: Mapped[str] = tenant_column()
    kind: Mapped[str] = mapped_column(String(16), nullable=False)  # "verify" or "extract"
    cache_key: Mapped[str] = mapped_column(String(64), nullable=False)
    model: Mapped[str] = mapped_column(String(255), nullable=False)
    prompt_version: Mapped[str] = mapped_column(String(64), nullable=False)
    payload: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    message_id: Mapped[str | None] = mapped_column(String(255), nullable=True)  # the run that paid for it
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)

    __table_args__ = (
        PrimaryKeyConstraint("tenant_id", "kind", "cache_key"),
        # Purging expired entries.
        Index("idx_model_cache_created", "created_at"),
    )
