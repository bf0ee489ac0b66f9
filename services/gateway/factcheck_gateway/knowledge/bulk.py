"""Loading many documents into the knowledge store at once: a million passages in minutes.

`KnowledgeStore.add_documents` (AddDocuments, `factcheck kb add`) stores a call's documents in one
transaction and indexes each passage as it goes: right for a few documents at a time.
`bulk_load` is for an operator's initial load or a large import (and the benchmark):

- one transaction for the whole load, so a failed load leaves the store as it was;
- documents in batches of multi-row INSERTs; passages by executemany (SQLite) or COPY (PostgreSQL);
- the same rules as add_documents within the tenant, except that nothing is replaced: a document
  whose text (content hash) or id the tenant already has is skipped, as are repeats within the load;
- each batch's terms are counted into the tenant's term statistics (term_statistics.py) as it goes;
- the full-text index is built once, after the rows: on SQLite the per-row FTS5 trigger is set
  aside and the new passages are indexed in one statement, then the index's segments are merged
  ('optimize'; 300,000 passages: 22 s, against 37 s with the trigger left on and no merge); on
  PostgreSQL, when the table was empty, the GIN index is dropped and built again at the end (one
  sort instead of a million insertions); then, as after every load, the GIN index's pending list is
  merged and the planner's statistics are refreshed if the load made them stale (upkeep.py).

Measured (2 cores, 2026-11-23): 1M passages in about 1.5 minutes on SQLite and 3-4 on PostgreSQL,
where computing each passage's tsvector during COPY is most of the time. With the term statistics and
each passage's salient terms and length (2026-12-05): bench.retrieval's hard corpus, 1M passages of 10-25
words, in 57 s on SQLite and 107 s on PostgreSQL.

While it runs, other writers wait (SQLite's write lock; on PostgreSQL an initial load holds the
table's lock for its index rebuild) and searches see the store as it was before the load.

    from factcheck_gateway.knowledge.bulk import bulk_load
    result = bulk_load(engine, documents, tenant_id="default")
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import astuple, dataclass
from itertools import islice

from sqlalchemy import Connection, Engine, insert, text
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from factcheck_gateway.knowledge import term_statistics
from factcheck_gateway.knowledge.chunking import chunk_text
from factcheck_gateway.knowledge.passage_store import SourceDocument
from factcheck_gateway.knowledge.tables import KnowledgeDocument, KnowledgePassage
from factcheck_gateway.knowledge.term_statistics import passage_fields
from factcheck_gateway.knowledge.upkeep import GIN_INDEX, refresh_after_load
from factcheck_gateway.store.models import utc_now
from factcheck_gateway.store.records import storable

BATCH_DOCUMENTS = 2_000
_FTS_INSERT_TRIGGER = "kb_passages_fts_insert"
# What the insert trigger of migration 0016 does for one row, for every new row at once.
_SQLITE_INDEX_NEW = text(
    "INSERT INTO kb_passages_fts(rowid, text, tenant, salient) "
    "SELECT id, text, hex(tenant_id), salient FROM kb_passages WHERE id >= :first"
)
_PASSAGE_COLUMNS = (
    "tenant_id",
    "document_id",
    "chunk_index",
    "text",
    "start_offset",
    "end_offset",
    "section",
    "salient",
    "length",
    "terms",
)


@dataclass(frozen=True)
class BulkLoadResult:
    documents: int  # stored
    skipped: int  # the tenant already had the text or the id (or the load repeated it)
    passages: int
    seconds: float


def bulk_load(
    engine: Engine, documents: Iterable[SourceDocument], *, tenant_id: str, batch_size: int = BATCH_DOCUMENTS
) -> BulkLoadResult:
    """Store the tenant's documents and their passages in one transaction, indexing them once at the end."""
    started = time.perf_counter()
    stored = skipped = passages = 0
    with engine.connect() as connection:
        postgresql = connection.dialect.name == "postgresql"
        if postgresql:
            rebuild_gin = connection.scalar(text("SELECT NOT EXISTS (SELECT 1 FROM kb_passages)"))
            gin_definition = _drop_gin_index(connection) if rebuild_gin else None
        else:
            connection.exec_driver_sql("BEGIN IMMEDIATE")  # the DDL below belongs to this transaction too
            first_new_id = connection.scalar(text("SELECT COALESCE(MAX(id), 0) + 1 FROM kb_passages"))
            trigger = connection.scalar(
                text("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = :name"),
                {"name": _FTS_INSERT_TRIGGER},
            )
            connection.exec_driver_sql(f"DROP TRIGGER {_FTS_INSERT_TRIGGER}")
        for batch in _batches(documents, batch_size):
            new, rows = _insert_documents(connection, batch, tenant_id)
            stored += new
            skipped += len(batch) - new
            passages += len(rows)
            if rows:
                _insert_passages(connection, rows)
                term_statistics.count(connection, tenant_id, (row[_PASSAGE_COLUMNS.index("text")] for row in rows))
        if postgresql:
            if gin_definition is not None:
                connection.exec_driver_sql("SET LOCAL maintenance_work_mem = '256MB'")
                connection.exec_driver_sql(gin_definition)
        else:
            connection.execute(_SQLITE_INDEX_NEW, {"first": first_new_id})
            connection.exec_driver_sql(trigger)
            connection.exec_driver_sql("INSERT INTO kb_passages_fts(kb_passages_fts) VALUES ('optimize')")
        refresh_after_load(connection, analyze=postgresql and gin_definition is not None)
        connection.commit()
    return BulkLoadResult(stored, skipped, passages, time.perf_counter() - started)


def _batches(documents: Iterable[SourceDocument], size: int) -> Iterator[list[SourceDocument]]:
    iterator = iter(documents)
    while batch := list(islice(iterator, size)):
        yield batch


def _insert_documents(connection: Connection, batch: list[SourceDocument], tenant_id: str) -> tuple[int, list]:
    """Insert the batch's new documents; their passages' rows, in the order of _PASSAGE_COLUMNS."""
    now = utc_now()
    rows, chunks = [], {}
    for document in batch:
        document = SourceDocument(*(storable(value) for value in astuple(document)))
        digest = document.content_sha256
        document_id = document.id or f"doc-{digest[:16]}"
        if document_id in chunks:
            continue
        chunks[document_id] = chunk_text(document.text)
        rows.append(
            {
                "tenant_id": tenant_id,
                "id": document_id,
                "title": document.title or document_id,
                "url": document.url,
                "published_at": document.published_at,
                "authority": document.authority,
                "text": document.text,
                "content_sha256": digest,
                "char_count": len(document.text),
                "passage_count": len(chunks[document_id]),
                "created_at": now,
            }
        )
    dialect_insert = postgresql_insert if connection.dialect.name == "postgresql" else sqlite_insert
    statement = dialect_insert(KnowledgeDocument).on_conflict_do_nothing().returning(KnowledgeDocument.id)
    new_ids = connection.execute(statement, rows).scalars().all() if rows else []
    postgresql = connection.dialect.name == "postgresql"  # (only PostgreSQL indexes kb_passages.terms)
    passages = [
        (
            tenant_id,
            document_id,
            i,
            chunk.text,
            chunk.start,
            chunk.end,
            chunk.heading,
            salient,
            length,
            terms if postgresql else "",
        )
        for document_id in new_ids
        for i, chunk in enumerate(chunks[document_id])
        for salient, length, terms in [passage_fields(chunk.text)]
    ]
    return len(new_ids), passages


def _insert_passages(connection: Connection, rows: list[tuple]) -> None:
    if connection.dialect.name == "postgresql":
        dbapi_connection = connection.connection.dbapi_connection
        assert dbapi_connection is not None  # (an open connection's)
        cursor = dbapi_connection.cursor()
        with cursor.copy(f"COPY kb_passages ({', '.join(_PASSAGE_COLUMNS)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.close()
    else:
        connection.execute(insert(KnowledgePassage), [dict(zip(_PASSAGE_COLUMNS, row)) for row in rows])


def _drop_gin_index(connection: Connection) -> str | None:
    definition = connection.scalar(
        text("SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = :name"),
        {"name": GIN_INDEX},
    )
    if definition is not None:
        connection.exec_driver_sql(f"DROP INDEX {GIN_INDEX}")
    return definition
