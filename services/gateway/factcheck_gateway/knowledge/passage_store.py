"""The knowledge store: documents split into passages, searched with the database's full-text index.

SQLite (the embedded default) uses an FTS5 table (sqlite_index.py); PostgreSQL a tsvector column
with a GIN index (postgresql_index.py; migrations 0002, 0005 and 0016), both behind the interface of
passage_index.py. The store lives in the gateway's database, so it grows with the database rather
than with a file on one pod. Search returns the exact BM25 top k
over the tenant's passages, using the index only to list the passages that hold words and the
tenant's own term statistics to know which lists it need not read (top_k.py, term_statistics.py);
a large import goes through `factcheck_gateway.knowledge.bulk.bulk_load`.

Every document belongs to a tenant (migration 0003), and every method works within the one
tenant it is given: ids and content hashes are unique per tenant, and search only finds the
tenant's own passages (and weighs words by them alone).
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import astuple, dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, delete, exists, select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from factcheck_gateway.knowledge import term_statistics
from factcheck_gateway.knowledge.chunking import chunk_text
from factcheck_gateway.knowledge.passage_index import PassageIndex
from factcheck_gateway.knowledge.postgresql_index import PostgresIndex
from factcheck_gateway.knowledge.ranking import idf, passage_score_bounds, passage_scores
from factcheck_gateway.knowledge.sqlite_index import SqliteIndex
from factcheck_gateway.knowledge.tables import KnowledgeDocument, KnowledgePassage
from factcheck_gateway.knowledge.tokens import search_terms
from factcheck_gateway.knowledge.top_k import term_weights
from factcheck_gateway.knowledge.top_k import top_k as best_passages
from factcheck_gateway.knowledge.upkeep import refresh_after_load
from factcheck_gateway.store.paging import Listing, newest_first_page
from factcheck_gateway.store.records import storable

log = logging.getLogger("factcheck.gateway.knowledge")

# A query's first terms, at most: very long queries only slow search down.
MAX_QUERY_TERMS = 32
# A tenant with less than this share of all passages is matched through its term in the index;
# a larger one by checking tenant_id on each match (cheaper: the tenant's own posting list is long).
TENANT_TERM_BELOW_SHARE = 0.2


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
    created: bool  # False: the tenant had the text already (document_id is the document holding it)
    passage_count: int
    replaced: bool = False  # it replaced the tenant's document of that id, which held other text


class DocumentsExist(Exception):
    """Documents whose ids the tenant already has, holding other text: (index in the request, id) of
    each. Nothing was stored; `replace` would have replaced them."""

    def __init__(self, conflicts: list[tuple[int, str]]) -> None:
        super().__init__(f"{len(conflicts)} document ids are stored with other text")
        self.conflicts = conflicts


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
    section: str = ""  # the heading of the document section it is in ("" when none)


@dataclass(frozen=True)
class StoreSearch:
    """Search's hits, and the store-wide statistics it ranked them with: each query term's BM25 IDF
    (None without statistics) and the average passage length."""

    hits: list[PassageHit]
    corpus_idf: dict[str, float] | None = None
    average_length: float | None = None  # of the store's passages, in terms (BM25's length normalisation)


def _index(connection: Connection, tenant_id: str, small_tenant: bool) -> PassageIndex:
    """The database's full-text index over the tenant's passages (the same interface on either backend)."""
    if connection.dialect.name == "sqlite":
        return SqliteIndex(connection, tenant_id, small_tenant)
    return PostgresIndex(connection, tenant_id, small_tenant)


class KnowledgeStore:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    def add_documents(
        self, documents: list[SourceDocument], *, tenant_id: str, replace: bool = False
    ) -> list[AddedDocument]:
        """Store the tenant's documents and their passages, all of them or none (one transaction).

        A text the tenant already stored is not stored again: the document holding it is returned. A
        document whose id the tenant has, holding other text, replaces that document only with `replace`
        (an edited file added again); without it, DocumentsExist names every such document and nothing
        is stored: nothing a caller added is overwritten unless the caller asked for it.
        """
        documents = [SourceDocument(*(storable(value) for value in astuple(d))) for d in documents]
        with self._sessions.begin() as session:
            conflicts = [] if replace else _conflicts(session, documents, tenant_id)
            if conflicts:
                raise DocumentsExist(conflicts)
            added = [_add(session, document, tenant_id) for document in documents]
        if any(a.created for a in added):
            self._refresh_after_load()
        return added

    def _refresh_after_load(self) -> None:
        """A store must be fast right after the load that filled it, whatever the server's autovacuum does."""
        try:
            with self._engine.begin() as connection:
                refresh_after_load(connection)
        except SQLAlchemyError as error:  # the documents are stored; a later load tries again
            log.warning("knowledge store upkeep after a load failed: %s", error)

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
                session,
                KnowledgeDocument,
                page_size,
                page_token,
                KnowledgeDocument.tenant_id == tenant_id,
                listing=Listing("ListDocuments", tenant_id),
            )
            return [_summary(row) for row in rows], next_token

    def has_documents(self, *, tenant_id: str) -> bool:
        with self._sessions() as session:
            return bool(session.scalar(select(exists().where(KnowledgeDocument.tenant_id == tenant_id))))

    def search(self, query: str, top_k: int, *, tenant_id: str) -> StoreSearch:
        """The top_k of the tenant's passages for the query's terms, most relevant first: the exact BM25 top k
        over all the tenant's passages (top_k.py), with the tenant's own term statistics.

        The statistics come back with the hits (each query term's IDF, the average passage length), so that
        whoever ranks them again weighs words as the store does.
        """
        terms = search_terms(query)[:MAX_QUERY_TERMS]
        if not terms or top_k < 1:
            return StoreSearch([])
        with self._engine.connect() as connection:
            statistics, totals = term_statistics.read(connection, tenant_id, terms)
            if not totals.passages:
                return StoreSearch([])
            weights = term_weights(statistics, totals)
            corpus_idf = {term: weights[term].idf if term in weights else idf(0, totals.passages) for term in terms}
            if not weights:
                return StoreSearch([], corpus_idf, totals.average_length)
            # A small tenant's own term in the index makes its matches cheap to find; a large one is checked
            # row by row (ANDing the term of a tenant that owns most passages walks its whole posting list).
            small_tenant = totals.passages < TENANT_TERM_BELOW_SHARE * term_statistics.all_passages(connection)
            index = _index(connection, tenant_id, small_tenant)
            held = {term: corpus_idf[term] for term in terms if term in weights}  # in the query's order

            def scoring(ids: list[int], threshold: float) -> dict[int, float]:
                # Passages whose bound is under the threshold cannot enter the top k: not tokenized.
                bounds = passage_score_bounds(index.texts(ids), index.lengths(ids), held, totals.average_length)
                ids = [i for i, bound in zip(ids, bounds) if bound >= threshold]
                return dict(zip(ids, passage_scores(index.texts(ids), held, totals.average_length)))

            ranked = [
                (i, score)
                for i, score in best_passages(weights, top_k, totals.passages, index.matching, scoring)
                if score > 0
            ]
            rows = {row["id"]: row for row in index.passages([i for i, _ in ranked])} if ranked else {}
        hits = [_hit(rows[i], score) for i, score in ranked if i in rows]
        return StoreSearch(hits, corpus_idf, totals.average_length)


def _conflicts(session: Session, documents: list[SourceDocument], tenant_id: str) -> list[tuple[int, str]]:
    """(index, id) of each document that would replace one of the tenant's with other text: its id is
    stored, its text is not (neither stored nor earlier in the request, where it would be kept as is)."""
    ids = [document.id for document in documents if document.id]
    rows = session.execute(
        select(KnowledgeDocument.id, KnowledgeDocument.content_sha256).where(
            KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.id.in_(ids)
        )
    )
    stored = {document_id: digest for document_id, digest in rows}
    digests = {document.content_sha256 for document in documents}
    known = set(
        session.scalars(
            select(KnowledgeDocument.content_sha256).where(
                KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.content_sha256.in_(digests)
            )
        )
    )
    conflicts = []
    for index, document in enumerate(documents):
        digest = document.content_sha256
        if document.id in stored and stored[document.id] != digest and digest not in known:
            conflicts.append((index, document.id))
        known.add(digest)
    return conflicts


def _add(session: Session, document: SourceDocument, tenant_id: str) -> AddedDocument:
    """Store one document in the session's transaction (see `KnowledgeStore.add_documents`)."""
    digest = document.content_sha256
    existing = session.scalar(
        select(KnowledgeDocument).where(
            KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.content_sha256 == digest
        )
    )
    if existing is not None:
        return AddedDocument(existing.id, False, existing.passage_count)
    document_id = document.id or f"doc-{digest[:16]}"
    same_id = (KnowledgeDocument.tenant_id == tenant_id, KnowledgeDocument.id == document_id)
    replaced = bool(session.scalar(select(exists().where(*same_id))))
    _delete_passages(session, tenant_id, document_id)
    session.execute(delete(KnowledgeDocument).where(*same_id))
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
    session.flush()  # the document row first: passages reference it (and the next document sees it)
    postgresql = session.get_bind().dialect.name == "postgresql"
    session.add_all(
        KnowledgePassage(
            tenant_id=tenant_id,
            document_id=document_id,
            chunk_index=i,
            text=chunk.text,
            start_offset=chunk.start,
            end_offset=chunk.end,
            section=chunk.heading,
            salient=salient,
            length=length,
            terms=terms if postgresql else "",
        )
        for i, chunk in enumerate(chunks)
        for salient, length, terms in [term_statistics.passage_fields(chunk.text)]
    )
    session.flush()
    term_statistics.count(session.connection(), tenant_id, (chunk.text for chunk in chunks))
    return AddedDocument(document_id, True, len(chunks), replaced=replaced)


def _delete_passages(session: Session, tenant_id: str, document_id: str) -> None:
    """Explicitly, so the FTS5 triggers see each passage go even where cascades are off, and the term
    statistics lose them in the same transaction."""
    of_document = (KnowledgePassage.tenant_id == tenant_id, KnowledgePassage.document_id == document_id)
    passages = session.scalars(select(KnowledgePassage.text).where(*of_document)).all()
    term_statistics.uncount(session.connection(), tenant_id, passages)
    session.execute(delete(KnowledgePassage).where(*of_document))


def _hit(row, score: float) -> PassageHit:
    document = SourceDocument(
        id=row["document_id"],
        title=row["title"],
        url=row["url"],
        text="",  # not needed for evidence; the passage carries its own text
        published_at=row["published_at"],
        authority=row["authority"],
    )
    return PassageHit(document, row["text"], row["start_offset"], row["end_offset"], score, row["section"] or "")


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
