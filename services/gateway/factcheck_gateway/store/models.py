"""Tables of the gateway's database, and the fixed stage names and orders of the stored stage rows.

The schema itself is created by the Alembic migrations in `services/gateway/factcheck_gateway/migrations`;
these models must stay in step with them (a test compares the two).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
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
    true,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from factcheck.kit.security.tenants import DEFAULT_TENANT

# --- stage names, orders and roles: the only place they are spelled out --------------------------------

STAGE_GENERATE = ("generate", 0)
STAGE_EXTRACT = ("extract", 1)
# Not one of fact-check mode's original stages: evidence retrieval sits between extraction and verification.
STAGE_RETRIEVE = ("retrieve", 5)
STAGE_REPORT = ("report", 99)
# The verification loop: after the checkers, before the report; a person's decision on a
# pending review is one more row per claim ("review:<claim id>", written after the run ended).
STAGE_INVESTIGATE = ("investigate", 95)
REVIEW_PREFIX = "review:"
REVIEW_ORDER = 96
VERIFY_PREFIX = "verify_"
VERIFY_BASE_ORDER = 10

ROLE_GENERATOR = "generator"
ROLE_EXTRACTOR = "extractor"
ROLE_RETRIEVER = "retriever"
ROLE_CHECKER = "checker"
ROLE_REPORTER = "reporter"
ROLE_INVESTIGATOR = "investigator"
ROLE_REVIEWER = "reviewer"


def verify_stage(checker_index: int) -> tuple[str, int]:
    """Stage type and order of checker `checker_index`: ("verify_0", 10), ("verify_1", 11), ..."""
    if not 0 <= checker_index < STAGE_REPORT[1] - VERIFY_BASE_ORDER:
        raise ValueError(f"checker index out of range: {checker_index}")
    return f"{VERIFY_PREFIX}{checker_index}", VERIFY_BASE_ORDER + checker_index


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


# --- knowledge store ----------------------------------------------------------------------------------

# The full-text index is backend-specific and lives only in the migrations: an FTS5 table
# (with its shadow tables) on SQLite, a generated tsvector column with a GIN index on
# PostgreSQL. Schema comparisons skip these names.
SEARCH_INDEX_NAMES = frozenset({"kb_passages_fts", "search_vector", "idx_kb_passages_search"})


def include_in_schema_comparison(name: str | None, type_: str, parent_names: Mapping[Any, Any]) -> bool:
    """Alembic `include_name` hook: the hand-written full-text index is not part of the models."""
    return not (name is not None and (name in SEARCH_INDEX_NAMES or name.startswith("kb_passages_fts")))


class KnowledgeDocument(Base):
    """A document of the knowledge store; its text is split into kb_passages.

    Ids are per tenant: two tenants may each have a document "paris".
    """

    __tablename__ = "kb_documents"

    tenant_id: Mapped[str] = tenant_column()
    id: Mapped[str] = mapped_column(String(255), nullable=False)
    title: Mapped[str] = mapped_column(Text, nullable=False)
    url: Mapped[str] = mapped_column(Text, nullable=False)
    published_at: Mapped[str | None] = mapped_column(String(64), nullable=True)
    authority: Mapped[float | None] = mapped_column(Float, nullable=True)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    # Re-ingesting the same text is recognised by its hash, so it never duplicates (within a tenant).
    content_sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    char_count: Mapped[int] = mapped_column(Integer, nullable=False)
    passage_count: Mapped[int] = mapped_column(Integer, nullable=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)

    __table_args__ = (
        PrimaryKeyConstraint("tenant_id", "id"),
        UniqueConstraint("tenant_id", "content_sha256"),
        # ListDocuments: one tenant's documents, newest first.
        Index("idx_kb_documents_tenant_created_id", "tenant_id", "created_at", "id"),
    )


class KnowledgePassage(Base):
    """A passage of a document, with its character offsets in the document's text.

    It belongs to its document's tenant: (tenant_id, document_id) is the document's key.
    """

    __tablename__ = "kb_passages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant_id: Mapped[str] = tenant_column()
    document_id: Mapped[str] = mapped_column(String(255), nullable=False)
    chunk_index: Mapped[int] = mapped_column(Integer, nullable=False)
    text: Mapped[str] = mapped_column(Text, nullable=False)
    start_offset: Mapped[int] = mapped_column(Integer, nullable=False)
    end_offset: Mapped[int] = mapped_column(Integer, nullable=False)
    # The heading of the document section the passage is in ("" when none, and for passages stored before 0010).
    section: Mapped[str] = mapped_column(Text, nullable=False, default="", server_default="")
    # Its salient terms, space-separated, indexed apart from its text (term_statistics.passage_fields; "" for none).
    salient: Mapped[str] = mapped_column(Text, nullable=False, default="", server_default="")
    # Its length in terms (search bounds a passage's score with it before tokenizing it; 0: not known).
    length: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    # Its distinct terms, space-separated, which PostgreSQL indexes (term_statistics.passage_fields; "" on SQLite,
    # whose index tokenizes the text).
    terms: Mapped[str] = mapped_column(Text, nullable=False, default="", server_default="")

    __table_args__ = (
        ForeignKeyConstraint(
            ["tenant_id", "document_id"], ["kb_documents.tenant_id", "kb_documents.id"], ondelete="CASCADE"
        ),
        UniqueConstraint("tenant_id", "document_id", "chunk_index"),
    )


class KnowledgeTerm(Base):
    """One term of a tenant's passages: in how many passages it is, exactly (search's BM25 weights).

    Kept in the transaction that adds or deletes the passages (knowledge/term_statistics.py), so search
    never depends on statistics a database refreshes on its own. `most` (the most times one passage holds
    the term) and `shortest` (the shortest passage holding it, in terms) bound what the term can add to a
    passage's score; a deletion leaves them as they were, which keeps them bounds. `salient`: the passages in
    which it is salient (held more than once, or in a short passage).
    """

    __tablename__ = "kb_terms"

    tenant_id: Mapped[str] = tenant_column()
    term: Mapped[str] = mapped_column(Text, nullable=False)
    passages: Mapped[int] = mapped_column(Integer, nullable=False)
    most: Mapped[int] = mapped_column(Integer, nullable=False)
    shortest: Mapped[int] = mapped_column(Integer, nullable=False)
    salient: Mapped[int] = mapped_column(Integer, nullable=False)  # passages in which the term is salient

    __table_args__ = (PrimaryKeyConstraint("tenant_id", "term"),)


class KnowledgeTermTotals(Base):
    """A tenant's passage count and their length in terms, summed (BM25's N and average length)."""

    __tablename__ = "kb_term_totals"

    tenant_id: Mapped[str] = mapped_column(String(TENANT_ID_LENGTH), primary_key=True)
    passages: Mapped[int] = mapped_column(BigInteger, nullable=False)
    terms: Mapped[int] = mapped_column(BigInteger, nullable=False)


# --- the model-call ledger and the verification cache ------------------------------------------------


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


class CacheEntry(Base):
    """A verification (one claim, one model) or an extraction a tenant already paid for.

    `cache_key` is a SHA-256 of everything the answer depends on (see
    services/gateway/factcheck_gateway/modes/fact_check/cache.py); `payload` the serialized protobuf answer.
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


# --- the verification loop's human reviews (migration 0007) ---------------------------------------------

REVIEW_PENDING = "PENDING"
REVIEW_DECIDED_STATES = ("APPROVED", "REJECTED", "MODIFIED")


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


# --- claim-level citations (migration 0006) ------------------------------------------------------------
#
# The claim-level citation data model, with its "message" being a run (messages.id). Sources are not rows of their own
# here (request sources live in the run's request, stored documents in kb_documents, which must never be referenced in
# a way that forces a rebuild): each evidence span names its source by id, title and url, and belongs to its run. Ids
# are UUIDs derived from the run and the claim or span (uuid5), so a resumed run writes the same ids. Rows are written
# with the events that report them, in the same fenced commit.

SUPPORT_TIERS = ("supported", "partial", "unsupported", "contradicted")
CONFIDENCE_LEVELS = ("high", "medium", "low")
CORRECTION_TYPES = ("keep", "replace", "remove", "add_alternate")


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


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
        CheckConstraint(_in("verification_verdict", SUPPORT_TIERS), name="ck_claims_verdict"),
        CheckConstraint(_in("confidence_level", CONFIDENCE_LEVELS), name="ck_claims_confidence"),
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
        CheckConstraint(_in("correction_type", CORRECTION_TYPES), name="ck_citation_corrections_type"),
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


# --- checker evaluations (migration 0011) ----------------------------------------------------------------


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
        CheckConstraint(_in("status", STATUSES), name="ck_evaluations_status"),
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


# --- secrets the gateway replicas share (migration 0013) ------------------------------------------------


class ServerKey(Base):
    """A random secret created once in the database, so that every gateway replica on it uses the same
    one: "page_tokens" signs page tokens unless FACTCHECK_PAGE_TOKEN_KEYS is set (store/paging.py)."""

    __tablename__ = "server_keys"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    secret: Mapped[str] = mapped_column(String(128), nullable=False)  # hex
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, nullable=False, default=utc_now)
