"""The knowledge store: documents split into passages, searched with the database's full-text index.

SQLite (the embedded default) uses an FTS5 table; PostgreSQL a tsvector column with a
GIN index (migrations 0002, 0005 and 0016). The store lives in the gateway's database, so it
grows with the database rather than with a file on one pod. Search returns the exact BM25 top k
over the tenant's passages, using the index only to list the passages that hold words and the
tenant's own term statistics to know which lists it need not read (top_k.py, term_statistics.py);
a large import goes through `factcheck_gateway.knowledge.bulk.bulk_load`.

Every document belongs to a tenant (migration 0003), and every method works within the one
tenant it is given: ids and content hashes are unique per tenant, and search only finds the
tenant's own passages (and weighs words by them alone).
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, RowMapping, TextClause, bindparam, delete, exists, select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from factcheck_gateway.knowledge import term_statistics
from factcheck_gateway.knowledge.chunking import chunk_text
from factcheck_gateway.knowledge.ranking import idf, passage_score_bounds, passage_scores
from factcheck_gateway.knowledge.tables import KnowledgeDocument, KnowledgePassage
from factcheck_gateway.knowledge.tokens import search_terms
from factcheck_gateway.knowledge.top_k import PostingList, term_weights
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
            index: _Index
            if connection.dialect.name == "sqlite":
                index = _SqliteIndex(connection, tenant_id, small_tenant)
            else:
                index = _PostgresIndex(connection, tenant_id, small_tenant)
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


class _Index:
    """A backend's full-text index over one tenant's passages, as search uses it: which passages hold words."""

    def __init__(self) -> None:
        # The passages `matching` found, read with their ids: (text, length in terms).
        self._found: dict[int, tuple[str, int]] = {}

    # A group is read either as the index's AND of its lists or through its shortest list (its lead), whose
    # passages are filtered here by the words their texts hold: an AND walks the entries of each of its lists
    # (FTS5: 10 ms for a short list ANDed with a term in 40% of a million passages), while a lead's passages are
    # read once for all the groups it leads, each row costing about as much as walking ROW_COST entries
    # (its best value measured at a million passages, on the benchmark's common-word questions: PostgreSQL's
    # below). Only speed depends on the choice: both read every passage of the group.
    ROW_COST = 300

    def matching(self, groups: list[tuple[PostingList, ...]]) -> list[int]:
        """Ids of the tenant's passages in every posting list of at least one group, all of them: never cut at a
        limit. More are fine (a list that is not salient is read as every passage holding the term, a term the
        index makes several tokens of as their phrase): each is scored exactly."""
        by_lead: dict[PostingList, list[tuple[PostingList, ...]]] = {}
        for group in groups:
            by_lead.setdefault(min(group, key=lambda posting: posting.passages), []).append(group)
        by_index = [
            group
            for lead, led in by_lead.items()
            if lead.passages * self.ROW_COST >= sum(p.passages for group in led for p in group)
            for group in led
        ]
        found = self._matching(by_index) if by_index else {}
        read = {lead: led for lead, led in by_lead.items() if led[0] not in by_index}
        if read:
            led_groups = [group for led in read.values() for group in led]
            bits = {term: 1 << b for b, term in enumerate(dict.fromkeys(p.term for g in led_groups for p in g))}
            masks = {sum(bits[term] for term in {posting.term for posting in group}) for group in led_groups}
            # A number written with thousands separators is not a substring of its term ("1,000": "1000"): always held.
            always = sum(bit for term, bit in bits.items() if term.isdigit())
            for identifier, row in self._matching([(lead,) for lead in read]).items():
                lowered = row[0].lower()
                held = always | sum(bit for term, bit in bits.items() if term in lowered)
                if any(held & mask == mask for mask in masks):
                    found[identifier] = row
        self._found.update(found)
        return list(found)

    def _matching(self, groups: list[tuple[PostingList, ...]]) -> dict[int, tuple[str, int]]:
        """`matching`'s passages, id -> (text, length)."""
        raise NotImplementedError

    @staticmethod
    def _by_lead(groups: list[tuple[PostingList, ...]]) -> list[tuple[PostingList, list[tuple[PostingList, ...]]]]:
        """The groups as one AND per lead (the group's shortest list): the lead, and the OR of what else each group
        it leads needs (nothing: the lead alone). An index evaluates an OR of many ANDs on every entry of every
        list in it (PostgreSQL: 150-250 ms for 50 groups of a question's common words at a million passages);
        led by their shortest list, the same passages cost a walk along a few short lists."""
        led: dict[PostingList, list[tuple[PostingList, ...]]] = {}
        for group in groups:
            lead = min(group, key=lambda posting: posting.passages)
            rest = tuple(posting for posting in group if posting != lead)
            if rest not in led.setdefault(lead, []):
                led[lead].append(rest)
        return [(lead, [] if () in rests else rests) for lead, rests in led.items()]

    def texts(self, ids: list[int]) -> list[str]:
        """The texts of passages `matching` found."""
        return [self._found[i][0] for i in ids]

    def lengths(self, ids: list[int]) -> list[int]:
        """The stored lengths of passages `matching` found (0: not known)."""
        return [self._found[i][1] for i in ids]

    def passages(self, ids: list[int]) -> Sequence[Mapping]:
        """The tenant's passages among `ids`, with their documents' metadata."""
        raise NotImplementedError


class _SqliteIndex(_Index):
    def __init__(self, connection: Connection, tenant_id: str, small_tenant: bool) -> None:
        super().__init__()
        self._connection = connection
        self._tenant_id = tenant_id
        self._small_tenant = small_tenant
        # The tenant column of the index holds the hex of tenant_id: one token (migration 0005).
        self._tenant = '"' + tenant_id.encode("utf-8").hex().upper() + '"'

    def _matching(self, groups: list[tuple[PostingList, ...]]) -> dict[int, tuple[str, int]]:
        # A term as a quoted FTS5 string: the index tokenizes it as it tokenized the passages (a phrase when it
        # makes several tokens, "3.5" -> 3 5), so every passage holding it matches. A salient list is the term
        # in the salient column; the rest is the term in any column (the text, or the salient column where the
        # text writes it otherwise: "1,000").
        def operand(posting: PostingList) -> str:
            # (A term too long for the salient column is asked of every column.)
            column = "salient : " if posting.salient and term_statistics.indexable(posting.term) else ""
            return column + '"' + posting.term.replace('"', '""') + '"'

        def all_of(postings: tuple[PostingList, ...]) -> str:
            return "(" + " AND ".join(operand(posting) for posting in postings) + ")"

        any_group = " OR ".join(
            f"({operand(lead)} AND ({' OR '.join(all_of(rest) for rest in rests)}))" if rests else operand(lead)
            for lead, rests in self._by_lead(groups)
        )
        if self._small_tenant:
            match, statement = f"tenant : {self._tenant} AND ({any_group})", _SQLITE_MATCH
        else:
            match, statement = any_group, _SQLITE_MATCH_CHECKING_TENANT
        rows = self._connection.execute(statement, {"match": match, "tenant_id": self._tenant_id})
        return {identifier: (passage, length) for identifier, passage, length in rows}

    def passages(self, ids: list[int]) -> Sequence[RowMapping]:
        # `+p.tenant_id`: look passages up by id; an index on tenant_id would scan the whole tenant.
        return self._connection.execute(_SQLITE_PASSAGES, {"ids": ids, "tenant_id": self._tenant_id}).mappings().all()


class _PostgresIndex(_Index):
    ROW_COST = 1000  # (a GIN index skips along the other lists of an AND; FTS5 walks them)

    def __init__(self, connection: Connection, tenant_id: str, small_tenant: bool) -> None:
        super().__init__()
        self._connection = connection
        self._tenant_id = tenant_id
        self._small_tenant = small_tenant
        # Each passage's tsvector holds the lexeme 'tenant <tenant_id>' (migration 0005).
        self._tenant_lexeme = _tsquery_lexeme("tenant " + tenant_id)
        # No sequential scans (the planner may take one for a tsquery it expects to match much), no JIT
        # compilation (it costs more than these queries), and the generic plan of a statement the driver has
        # prepared instead of planning it again for its values: whatever the tsquery, the plan is the GIN
        # index's bitmap. (Only speed depends on these: every statement returns all its matches.)
        connection.exec_driver_sql(
            "SET LOCAL enable_seqscan = off; SET LOCAL jit = off; SET LOCAL plan_cache_mode = force_generic_plan"
        )

    def _operand(self, posting: PostingList) -> str | None:
        """The tsquery of one posting list: the term's own lexeme (kb_passages.terms), marked "*" for a salient list
        (migration 0016); None for a term too long to be a lexeme."""
        if not term_statistics.indexable(posting.term):
            return None
        return _tsquery_lexeme(("*" if posting.salient else "") + posting.term)

    def _matching(self, groups: list[tuple[PostingList, ...]]) -> dict[int, tuple[str, int]]:
        indexed: list[str] = []
        unindexed: list[list[str]] = []
        for lead, rests in self._by_lead(groups):
            head = self._operand(lead)
            if head is None:  # a term with no lexeme leads only groups of such terms (it is read by the text)
                unindexed.extend([lead.term, *(p.term for p in rest)] for rest in rests or [()])
                continue
            # A group's terms that have no lexeme are left out of its AND: it then matches more passages, never fewer.
            alternatives = [" & ".join(o for p in rest if (o := self._operand(p)) is not None) for rest in rests]
            if not rests or not all(alternatives):
                indexed.append(head)
            else:
                indexed.append(f"{head} & ({' | '.join(f'({a})' for a in alternatives)})")
        found: dict[int, tuple[str, int]] = {}
        if indexed:
            if self._small_tenant:
                indexed = [f"{self._tenant_lexeme} & {query}" for query in indexed]
            rows = self._connection.execute(
                _postgres_matching(len(indexed)),
                {"tenant_id": self._tenant_id, **{f"q{i}": query for i, query in enumerate(indexed)}},
            )
            found.update((identifier, (passage, length)) for identifier, passage, length in rows)
        for words in unindexed:  # no lexeme at all: the passages whose text holds the words
            # (A number may be written with separators, "1,000": not asked of the text.)
            patterns = {f"p{i}": "%" + _like_escaped(word) + "%" for i, word in enumerate(words) if not word.isdigit()}
            holding = "".join(f" AND lower(text) LIKE :{name} ESCAPE '\\'" for name in patterns)
            rows = self._connection.execute(
                text(f"SELECT id, text, length FROM kb_passages WHERE tenant_id = :tenant_id{holding}"),
                {"tenant_id": self._tenant_id, **patterns},
            )
            found.update((identifier, (passage, length)) for identifier, passage, length in rows)
        return found

    def passages(self, ids: list[int]) -> Sequence[Mapping]:
        # The passages, then their documents: not one join, which a planner that takes kb_documents for
        # empty (never analyzed: autovacuum off, or a store loaded before loads analyzed it) runs as a walk
        # over every document, each against the ids (13 ms at 1,911 documents).
        parameters = {"ids": ids, "tenant_id": self._tenant_id}
        passages = self._connection.execute(_POSTGRES_PASSAGE_ROWS, parameters).mappings().all()
        parameters["documents"] = list({row["document_id"] for row in passages})
        documents = {
            row["document_id"]: row for row in self._connection.execute(_POSTGRES_DOCUMENTS, parameters).mappings()
        }
        return [{**row, **documents[row["document_id"]]} for row in passages if row["document_id"] in documents]


def _tsquery_lexeme(lexeme: str) -> str:
    """A lexeme as a tsquery operand, quoted so that no character in it is an operator."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _like_escaped(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


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


_SELECTED = """p.id, p.text, p.start_offset, p.end_offset, p.section,
    d.id AS document_id, d.title, d.url, d.published_at, d.authority"""
_FROM = "FROM kb_passages p JOIN kb_documents d ON d.tenant_id = p.tenant_id AND d.id = p.document_id"
_SQLITE_PASSAGES = text(f"SELECT {_SELECTED} {_FROM} WHERE p.id IN :ids AND +p.tenant_id = :tenant_id").bindparams(
    bindparam("ids", expanding=True)
)
_SQLITE_MATCH = text(
    "SELECT p.id, p.text, p.length FROM kb_passages_fts f JOIN kb_passages p ON p.id = f.rowid "
    "WHERE kb_passages_fts MATCH :match"
)
_SQLITE_MATCH_CHECKING_TENANT = text(
    "SELECT p.id, p.text, p.length FROM kb_passages_fts f JOIN kb_passages p ON p.id = f.rowid "
    "WHERE kb_passages_fts MATCH :match AND +p.tenant_id = :tenant_id"
)


@functools.lru_cache(maxsize=64)
def _postgres_matching(queries: int) -> TextClause:
    """The passages matching any of `queries` tsqueries (:q0, :q1, ...): one bitmap index scan each, ORed."""
    matching = " OR ".join(f"search_vector @@ CAST(:q{i} AS tsquery)" for i in range(queries))
    return text(f"SELECT id, text, length FROM kb_passages WHERE ({matching}) AND tenant_id = :tenant_id")


_POSTGRES_PASSAGE_ROWS = text(
    "SELECT id, text, start_offset, end_offset, section, document_id FROM kb_passages "
    "WHERE id = ANY(:ids) AND tenant_id = :tenant_id"
)
_POSTGRES_DOCUMENTS = text(
    "SELECT id AS document_id, title, url, published_at, authority FROM kb_documents "
    "WHERE tenant_id = :tenant_id AND id = ANY(:documents)"
)


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
