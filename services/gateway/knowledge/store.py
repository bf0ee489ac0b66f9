"""The knowledge store: documents split into passages, searched with the database's full-text index.

SQLite (the embedded default) uses an FTS5 table; PostgreSQL a tsvector column with a
GIN index; both are created by migration 0002. The store lives in the gateway's
database, so it grows with the database rather than with a file on one pod.

Every document belongs to a tenant (migration 0003), and every method works within the one
tenant it is given: ids and content hashes are unique per tenant, and search only finds the
tenant's own passages.
"""

from __future__ import annotations

import hashlib
from dataclasses import astuple, dataclass
from datetime import datetime

from sqlalchemy import Engine, delete, exists, select, text
from sqlalchemy.orm import sessionmaker

from services.gateway.knowledge.chunking import chunk_text
from services.gateway.knowledge.tokens import search_terms
from services.gateway.store.models import KnowledgeDocument, KnowledgePassage
from services.gateway.store.store import newest_first_page, storable

# Full-text queries are ORs of a claim's terms; very long queries only slow the index down.
MAX_QUERY_TERMS = 32


@dataclass(frozen=True)
class SourceDocument:
    """A document as callers supply it (request sources and AddDocuments share this shape)."""

    id: str
    title: str
    url: str
    text: str
    published_at: str | None = None
    authority: float | None = None

    @property
    def content_sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class AddedDocument:
    document_id: str
    created: bool
    passage_count: int


@dataclass(frozen=True)
class DocumentSummary:
    id: str
    title: str
    url: str
    published_at: str | None
    authority: float | None
    passage_count: int
    char_count: int
    content_sha256: str
    created_at: datetime


@dataclass(frozen=True)
class PassageHit:
    """A passage found by search, with its document's metadata and the index's score (higher is better)."""

    document: SourceDocument
    text: str
    start: int
    end: int
    score: float


class KnowledgeStore:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    def add_documents(self, documents: list[SourceDocument], *, tenant_id: str) -> list[AddedDocument]:
        """Store the tenant's documents and their passages; a text the tenant already stored is not stored again.

        A new text under an existing id replaces that document (an edited file re-ingested).
        """
        return [self._add(document, tenant_id) for document in documents]

    def _add(self, document: SourceDocument, tenant_id: str) -> AddedDocument:
        document = SourceDocument(*(storable(value) for value in astuple(document)))
        digest = document.content_sha256
        with self._sessions.begin() as session:
            existing = session.scalar(
                select(KnowledgeDocument).where(
                    KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.content_sha256 == digest
                )
            )
            if existing is not None:
                return AddedDocument(existing.id, False, existing.passage_count)
            document_id = document.id or f"doc-{digest[:16]}"
            _delete_passages(session, tenant_id, document_id)
            session.execute(
                delete(KnowledgeDocument).where(
                    KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.id == document_id
                )
            )
            chunks = chunk_text(document.text)
            session.add(
                KnowledgeDocument(
                    tenant_id=tenant_id,
                    id=document_id,
                    title=document.title or document_id,
                    url=document.url,
                    published_at=document.published_at,
                    authority=document.authority,
                    text=document.text,
                    content_sha256=digest,
                    char_count=len(document.text),
                    passage_count=len(chunks),
                )
            )
            session.flush()  # the document row first: passages reference it
            session.add_all(
                KnowledgePassage(
                    tenant_id=tenant_id,
                    document_id=document_id,
                    chunk_index=i,
                    text=chunk.text,
                    start_offset=chunk.start,
                    end_offset=chunk.end,
                )
                for i, chunk in enumerate(chunks)
            )
            return AddedDocument(document_id, True, len(chunks))

    def delete_document(self, document_id: str, *, tenant_id: str) -> int:
        """Remove the tenant's document and its passages; returns the passage count.

        LookupError if the tenant has no such document (another tenant's is not seen).
        """
        with self._sessions.begin() as session:
            document = session.scalar(
                select(KnowledgeDocument).where(
                    KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.id == document_id
                )
            )
            if document is None:
                raise LookupError(f"no document with id {document_id!r}")
            count = document.passage_count
            _delete_passages(session, tenant_id, document_id)
            session.delete(document)
            return count

    def list_documents(
        self, page_size: int, page_token: str | None, *, tenant_id: str
    ) -> tuple[list[DocumentSummary], str | None]:
        """The tenant's documents, newest first."""
        with self._sessions() as session:
            rows, next_token = newest_first_page(
                session, KnowledgeDocument, page_size, page_token, KnowledgeDocument.tenant_id == tenant_id
            )
            return [_summary(row) for row in rows], next_token

    def has_documents(self, *, tenant_id: str) -> bool:
        with self._sessions() as session:
            return bool(session.scalar(select(exists().where(KnowledgeDocument.tenant_id == tenant_id))))

    def search(self, query: str, top_k: int, *, tenant_id: str) -> list[PassageHit]:
        """The top_k of the tenant's passages for the query's terms (any term matches), most relevant first."""
        terms = search_terms(query)[:MAX_QUERY_TERMS]
        if not terms or top_k < 1:
            return []
        if self._engine.dialect.name == "sqlite":
            sql, match = _SQLITE_SEARCH, " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
        else:
            sql, match = _POSTGRES_SEARCH, " OR ".join(terms)
        parameters = {"match": match, "top_k": top_k, "tenant_id": tenant_id}
        with self._engine.connect() as connection:
            rows = connection.execute(text(sql), parameters).mappings().all()
        return [_hit(row) for row in rows]


def _delete_passages(session, tenant_id: str, document_id: str) -> None:
    """Explicitly, so the FTS5 triggers see each passage go even where cascades are off."""
    session.execute(
        delete(KnowledgePassage).where(
            KnowledgePassage.tenant_id == tenant_id, KnowledgePassage.document_id == document_id
        )
    )


_SELECTED = """d.id AS document_id, d.title, d.url, d.published_at, d.authority,
    p.text, p.start_offset, p.end_offset"""
_SQLITE_SEARCH = f"""
SELECT {_SELECTED}, -bm25(kb_passages_fts) AS score
FROM kb_passages_fts
JOIN kb_passages p ON p.id = kb_passages_fts.rowid
JOIN kb_documents d ON d.tenant_id = p.tenant_id AND d.id = p.document_id
WHERE kb_passages_fts MATCH :match AND d.tenant_id = :tenant_id
ORDER BY bm25(kb_passages_fts)
LIMIT :top_k"""
_POSTGRES_SEARCH = f"""
SELECT {_SELECTED}, ts_rank_cd(p.search_vector, q) AS score
FROM kb_passages p
JOIN kb_documents d ON d.tenant_id = p.tenant_id AND d.id = p.document_id,
     websearch_to_tsquery('english', :match) AS q
WHERE p.search_vector @@ q AND d.tenant_id = :tenant_id
ORDER BY score DESC, p.id
LIMIT :top_k"""


def _hit(row) -> PassageHit:
    document = SourceDocument(
        id=row["document_id"],
        title=row["title"],
        url=row["url"],
        text="",  # not needed for evidence; the passage carries its own text
        published_at=row["published_at"],
        authority=row["authority"],
    )
    return PassageHit(document, row["text"], row["start_offset"], row["end_offset"], float(row["score"]))


def _summary(row: KnowledgeDocument) -> DocumentSummary:
    return DocumentSummary(
        id=row.id,
        title=row.title,
        url=row.url,
        published_at=row.published_at,
        authority=row.authority,
        passage_count=row.passage_count,
        char_count=row.char_count,
        content_sha256=row.content_sha256,
        created_at=row.created_at,
    )
