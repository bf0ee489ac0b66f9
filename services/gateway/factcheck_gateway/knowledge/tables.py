"""The knowledge store's tables: documents, their passages, and the term statistics search weighs by.

Created by the Alembic migrations (migrations/versions/, 0002, 0010 and 0016); the models must stay in step
with them (tests/test_store.py compares the two, over every feature's tables: factcheck_gateway/schema.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from factcheck_gateway.store.models import TENANT_ID_LENGTH, Base, UTCDateTime, tenant_column, utc_now

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
