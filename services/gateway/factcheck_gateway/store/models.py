"""The gateway database's declarative base and column types, and the tables of the run: its messages row, its
events and its stage rows (and the server keys that sign page tokens: paging.py).

Every feature declares its own tables in its package (claims/, evaluations/, knowledge/, ledger/, reviews/,
verification_cache/: each `tables.py`) on this Base; factcheck_gateway/schema.py gathers them all for
whatever needs the whole schema. The store imports no feature. Each mode names its own stage rows (e.g.
modes/fact_check/stages.py). The schema itself is created by the Alembic migrations in
`services/gateway/factcheck_gateway/migrations`; the models must stay in step with them (tests/test_store.py
compares the two).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from factcheck.kit.security.tenants import DEFAULT_TENANT

# --- message statuses ---------------------------------------------------------------------------------

STATUS_RUNNING = "RUNNING"
STATUS_COMPLETE = "COMPLETE"
STATUS_PARTIAL = "PARTIAL"
STATUS_FAILED = "FAILED"
STATUS_CANCELLED = "CANCELLED"
STATUSES = (STATUS_RUNNING, STATUS_COMPLETE, STATUS_PARTIAL, STATUS_FAILED, STATUS_CANCELLED)
FINAL_STATUSES = (STATUS_COMPLETE, STATUS_PARTIAL, STATUS_FAILED, STATUS_CANCELLED)

# --- column types -------------------------------------------------------------------------------------

# JSONB on PostgreSQL (indexable, compact), plain JSON text elsewhere.
JSON_DOCUMENT = JSON().with_variant(JSONB(), "postgresql")


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in and out on every backend.

    SQLite has no time zone type and would silently drop the offset, so values are
    normalised to UTC before binding and marked UTC again when read back.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are ambiguous; pass an aware UTC datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utc_now() -> datetime:
    return datetime.now(UTC)


def one_of(column: str, values: tuple[str, ...]) -> str:
    """A check constraint's text: `column` holds one of `values`."""
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


# --- tables -------------------------------------------------------------------------------------------

# Every run and every knowledge-store document belongs to a tenant (factcheck/kit/security/tenants.py).
# Rows stored before tenants existed (migration 0003) belong to the default tenant.
TENANT_ID_LENGTH = 64


def tenant_column() -> Mapped[str]:
    return mapped_column(String(TENANT_ID_LENGTH), nullable=False, server_default=DEFAULT_TENANT)


# Deterministic constraint names, so migrations can refer to them on every backend.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)

    if TYPE_CHECKING:
        # Every model maps a Table (DeclarativeBase allows any FromClause): insert() and update() take it.
        __table__: ClassVar[Table]


class Message(Base):
    """One fact-check run: the request, its status and title. Stage rows hang off it."""

    __tablename__ = "messages"

    id: Mapped[str] = mapped_column(String(255), primary_key=True)
    tenant_id: Mapped[str] = tenant_column()
    conversation_id: Mapped[str] = mapped_column(String(255), nullable=False)
    question: Mapped[str] = mapped_column(Text, nullable=False)
    # The run's config with every default resolved (mode_dispatch.stored_config): results and listings read
    # it, and a resumed run's request is rebuilt from it (migration 0017: the only stored copy).
    request_config: Mapped[dict[str, Any]] = mapped_column(JSON_DOCUMENT, nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    title: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)
    # Durable runs (migration 0004): the idempotency key and a hash of the request it came with.
    request_id: Mapped[str | None] = mapped_column(String(64), nullable=True)
    request_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # The gateway executing the run and until when; an expired lease means the run is abandoned.
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime, nullable=True)
    resume_count: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    # seq of the newest stored event; the next event is last_seq + 1.
    last_seq: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    cancel_requested: Mapped[bool] = mapped_column(Boolean, nullable=False, default=False, server_default=false())
    # Why a run FAILED or was CANCELLED, and every failed stage's cause (also for degraded runs).
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    failures: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON_DOCUMENT, nullable=True)

    __table_args__ = (
        # ListResults: one tenant's runs, newest first.
        Index("idx_messages_tenant_created_id", "tenant_id", "created_at", "id"),
        # Recovery: running runs whose lease lapsed.
        Index("idx_messages_status_lease", "status", "lease_expires_at"),
        # Idempotent Run: a request_id names one run per tenant.
        Index("uq_messages_tenant_id_request_id", "tenant_id", "request_id", unique=True),
    )


class RunEvent(Base):
    """Every FactCheckEvent of a run, stored as emitted (serialized protobuf), so Watch can replay it."""

    __tablename__ = "run_events"

    message_id: Mapped[str] = mapped_column(String(255), ForeignKey("messages.id", ondelete="CASCADE"), nullable=False)
    seq: Mapped[int] = mapped_column(Integer, nullable=False)
    event_type: Mapped[str] = mapped_column(String(32), nullable=False)
    payload: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)

    __table_args__ = (PrimaryKeyConstraint("message_id", "seq"),)


class DeliberationStage(Base):
    """One row per completed stage of a run (deliberation_stages)."""

    __tablename__ = "deliberation_stages"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    message_id: Mapped[str] = mapped_column(String(255), ForeignKey("messages.id", ondelete="CASCADE"), nullable=False)
    stage_type: Mapped[str] = mapped_column(String(32), nullable=False)
    stage_order: Mapped[int] = mapped_column(Integer, nullable=False)
    model: Mapped[str | None] = mapped_column(String(255), nullable=True)
    role: Mapped[str] = mapped_column(String(32), nullable=False)
    content: Mapped[str | None] = mapped_column(Text, nullable=True)
    parsed_data: Mapped[dict[str, Any] | None] = mapped_column(JSON_DOCUMENT, nullable=True)
    response_time_ms: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)

    __table_args__ = (
        Index("idx_deliberation_stages_message", "message_id", "stage_order"),
        # A retried write of the same stage must never produce a second row.
        UniqueConstraint("message_id", "stage_type"),
    )


# --- secrets the gateway replicas share (migration 0013) ------------------------------------------------


class ServerKey(Base):
    """A random secret created once in the database, so that every gateway replica on it uses the same
    one: "page_tokens" signs page tokens unless FACTCHECK_PAGE_TOKEN_KEYS is set (store/paging.py)."""

    __tablename__ = "server_keys"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    secret: Mapped[str] = mapped_column(String(128), nullable=False)  # hex
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)
