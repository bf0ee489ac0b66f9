"""The knowledge store's exact term statistics, per tenant: kb_terms and kb_term_totals.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05

Search ranks a tenant's passages by BM25 with the tenant's own, exact term counts and bounds its candidates
with them (knowledge/top_k.py), instead of estimates that moved whenever the database refreshed its
statistics. kb_terms: per tenant and term, the passages holding it, the most times one passage holds it and
the shortest passage holding it; kb_term_totals: per tenant, the passages and their summed length in terms.
The passages already stored are counted here, with the store's own tokens (term_statistics.count: the
counts must be made the way search reads them, so this revision uses that code rather than a copy).

The full-text indexes now make the store's tokens too, with no stemming and no stopwords of their own:
search reads a term's whole posting list, and a stem's list ("record" for "records") is longer, while a
word PostgreSQL's english configuration drops ("after", "only", "over") could not be looked up at all.
SQLite: kb_passages_fts is made again with tokenize='unicode61' (0005's triggers, re-indexed, merged);
PostgreSQL: search_vector is made again from to_tsvector('simple', ...) (a rewrite of kb_passages and its
GIN index: about a minute per million passages), with the default statistics target (search no longer
reads ANALYZE's lexeme frequencies). Both are the longest part of this revision on a large store.
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

from factcheck_gateway.knowledge import term_statistics

revision: str = "0016"
down_revision: Union[str, Sequence[str], None] = "0015"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

TENANT_ID_LENGTH = 64

SQLITE_TRIGGERS = ("kb_passages_fts_insert", "kb_passages_fts_delete", "kb_passages_fts_update")


def _sqlite_fts(tokenize: str) -> list[str]:
    """0005's contentless FTS5 table and triggers, with this tokenizer, filled and merged."""
    return [
        f"CREATE VIRTUAL TABLE kb_passages_fts USING fts5(text, tenant, content='', tokenize='{tokenize}')",
        "CREATE TRIGGER kb_passages_fts_insert AFTER INSERT ON kb_passages BEGIN "
        "INSERT INTO kb_passages_fts(rowid, text, tenant) VALUES (new.id, new.text, hex(new.tenant_id)); END",
        "CREATE TRIGGER kb_passages_fts_delete AFTER DELETE ON kb_passages BEGIN "
        "INSERT INTO kb_passages_fts(kb_passages_fts, rowid, text, tenant) "
        "VALUES ('delete', old.id, old.text, hex(old.tenant_id)); END",
        "CREATE TRIGGER kb_passages_fts_update AFTER UPDATE ON kb_passages BEGIN "
        "INSERT INTO kb_passages_fts(kb_passages_fts, rowid, text, tenant) "
        "VALUES ('delete', old.id, old.text, hex(old.tenant_id)); "
        "INSERT INTO kb_passages_fts(rowid, text, tenant) VALUES (new.id, new.text, hex(new.tenant_id)); END",
        "INSERT INTO kb_passages_fts(rowid, text, tenant) SELECT id, text, hex(tenant_id) FROM kb_passages",
        "INSERT INTO kb_passages_fts(kb_passages_fts) VALUES ('optimize')",
    ]


def _postgres_vector(configuration: str, statistics: int) -> list[str]:
    """0005's generated search_vector (the passage's lexemes and its tenant's), with this configuration."""
    vector = f"to_tsvector('{configuration}', text) || array_to_tsvector(ARRAY['tenant ' || tenant_id])"
    return [
        "ALTER TABLE kb_passages DROP COLUMN search_vector",  # and its GIN index
        f"ALTER TABLE kb_passages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({vector}) STORED",
        f"ALTER TABLE kb_passages ALTER COLUMN search_vector SET STATISTICS {statistics}",
        "CREATE INDEX idx_kb_passages_search ON kb_passages USING GIN (search_vector)",
        "ANALYZE kb_passages",
    ]


def _reindex(tokenize: str, configuration: str, statistics: int) -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trigger in SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute("DROP TABLE IF EXISTS kb_passages_fts")
        statements = _sqlite_fts(tokenize)
    else:
        statements = _postgres_vector(configuration, statistics)
    for statement in statements:
        op.execute(statement)


def upgrade() -> None:
    op.create_table(
        "kb_terms",
        sa.Column("tenant_id", sa.String(TENANT_ID_LENGTH), nullable=False, server_default="default"),
        sa.Column("term", sa.Text(), nullable=False),
        sa.Column("passages", sa.Integer(), nullable=False),
        sa.Column("most", sa.Integer(), nullable=False),
        sa.Column("shortest", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "term", name="pk_kb_terms"),
    )
    op.create_table(
        "kb_term_totals",
        sa.Column("tenant_id", sa.String(TENANT_ID_LENGTH), nullable=False),
        sa.Column("passages", sa.BigInteger(), nullable=False),
        sa.Column("terms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", name="pk_kb_term_totals"),
    )
    connection = op.get_bind()
    tenants = connection.execute(sa.text("SELECT DISTINCT tenant_id FROM kb_passages")).scalars().all()
    for tenant_id in tenants:
        passages = connection.execute(
            sa.text("SELECT text FROM kb_passages WHERE tenant_id = :tenant_id"), {"tenant_id": tenant_id}
        ).scalars()
        term_statistics.count(connection, tenant_id, passages)
    _reindex("unicode61", "simple", -1)


def downgrade() -> None:
    _reindex("porter unicode61", "english", 1000)
    op.drop_table("kb_term_totals")
    op.drop_table("kb_terms")
