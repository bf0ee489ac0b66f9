"""Keeping the knowledge store's index and statistics current after a load, on any server.

Search is fast only with two things a load leaves behind stale (its answers never depend on them: it
ranks with the store's own term statistics, term_statistics.py):

- PostgreSQL's GIN index takes new passages into a pending list (fast update) that every search
  must scan until it is merged, which only VACUUM, autovacuum or a 4 MB list normally do: after
  a load that is 20-25 ms on each query. `gin_clean_pending_list` merges it now.
- The planner's statistics (ANALYZE: row counts) are refreshed
  by autovacuum, which may be off or not have run yet; a store loaded after its last ANALYZE is
  planned as if it were empty (about five times slower at a million passages).

So every load (AddDocuments, `bulk_load`) ends with `refresh_after_load`: the pending list is
merged, and the table is analyzed when it has grown by STALE_GROWTH since its statistics were
taken. Growth is read from the table itself (its pages now against the pages ANALYZE saw, as the
planner does), so replicas and restarts agree and a load of many small calls is analyzed about
log(size) times, each ANALYZE bounded by its sample. SQLite keeps no pending list, but FTS5 keeps
each load's rows in segments of their own (merging only some as it goes), and every search reads a
term's rows from each segment: with the same growth rule as its planner's statistics (sqlite_stat1),
the index is merged into one segment.
"""

from __future__ import annotations

from sqlalchemy import Connection, text

# Statistics are refreshed once the passages have grown by this share since they were taken.
STALE_GROWTH = 0.25
GIN_INDEX = "idx_kb_passages_search"
FTS_TABLE = "kb_passages_fts"

_POSTGRES_GROWTH = text(
    "SELECT c.relpages AS analyzed, c.reltuples < 0 AS never, "
    "pg_relation_size(c.oid) / current_setting('block_size')::int AS now FROM pg_class c "
    "WHERE c.oid = 'kb_passages'::regclass"
)


def refresh_after_load(connection: Connection, *, analyze: bool = False) -> bool:
    """Merge the index's pending entries and refresh stale statistics, in the connection's transaction.

    `analyze`: refresh them whatever the growth (after CREATE INDEX, which records the table's pages as
    ANALYZE does, so that growth would be measured from there). Returns whether they were refreshed
    (so that a cached copy of them can be dropped).
    """
    if connection.dialect.name == "postgresql":
        has_gin = connection.scalar(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": GIN_INDEX})
        if has_gin:
            connection.execute(text("SELECT gin_clean_pending_list(CAST(:name AS regclass))"), {"name": GIN_INDEX})
        row = connection.execute(_POSTGRES_GROWTH).one()
        stale = row.now > 0 and (row.never or row.now > row.analyzed * (1 + STALE_GROWTH))
    else:
        now = connection.scalar(text("SELECT COALESCE(MAX(id) - MIN(id) + 1, 0) FROM kb_passages"))
        stale = now > 0 and now > _sqlite_analyzed_rows(connection) * (1 + STALE_GROWTH)
        if stale or analyze:
            # FTS5 adds every load's rows as new segments of the index and a search reads a term's rows from
            # each (13 of them after a million passages came in 2 MB calls); merged into one, searches take
            # a third less. The merge rewrites the index (3 s at a million passages), so only at this growth.
            connection.execute(text(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('optimize')"))
    if stale or analyze:
        # PostgreSQL: kb_documents too, which search joins to its hits (SQLite analyzes one table at a time,
        # and its planner needs no statistics of kb_documents for a lookup by key).
        connection.exec_driver_sql(
            "ANALYZE kb_passages, kb_documents" if connection.dialect.name == "postgresql" else "ANALYZE kb_passages"
        )
    return bool(stale or analyze)


def _sqlite_analyzed_rows(connection: Connection) -> int:
    """kb_passages' row count when it was last analyzed (0: never)."""
    if not connection.scalar(text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")):
        return 0
    stat = connection.scalar(text("SELECT stat FROM sqlite_stat1 WHERE tbl = 'kb_passages' LIMIT 1"))
    return int(stat.split()[0]) if stat else 0
