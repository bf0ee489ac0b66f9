"""The knowledge store's exact term statistics, per tenant, and each passage's salient terms indexed apart.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05

Search ranks a tenant's passages by BM25 with the tenant's own, exact term counts and bounds its candidates
with them (knowledge/top_k.py), instead of estimates that moved whenever the database refreshed its
statistics. kb_terms: per tenant and term, the passages holding it, the most times one passage holds it, the
shortest passage holding it and the passages in which it is salient; kb_term_totals: per tenant, the passages
and their summed length in terms. kb_passages.length: the passage's length in terms (search bounds its
score with it before tokenizing it). kb_passages.salient: the passage's salient terms (held more than once, or
all of a short passage's), which the index holds apart from the text so that search can read a term's
salient postings on their own. The passages already stored are counted and marked here with the store's own
tokens (term_statistics: they must be made the way search reads them, so this revision uses that code rather
than a copy).

The full-text indexes now make the store's tokens too, with no stemming and no stopwords of their own:
search reads a term's whole posting list, and a stem's list ("record" for "records") is longer, while a
word PostgreSQL's english configuration drops ("after", "only", "over") could not be looked up at all.
SQLite: kb_passages_fts is made again with a third column, `salient`, and tokenize='unicode61' (0005's
triggers with the new column, re-indexed, merged); PostgreSQL: search_vector is made again from
the passage's terms as the store makes them (kb_passages.terms: PostgreSQL's own parser makes one token of
"loamy/sandy" or "a@b.com", whose words search could then not find), the salient terms as lexemes marked
with "*" ('*mill'), and the tenant's lexeme (a rewrite of
kb_passages and its GIN index: about a minute per million passages), with the default statistics target
(search no longer reads ANALYZE's lexeme frequencies). Marking the stored passages and re-indexing them
are the longest part of this revision on a large store (minutes at a million passages).
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


def _sqlite_fts(tokenize: str, salient: bool) -> list[str]:
    """0005's contentless FTS5 table and triggers, with this tokenizer (and the salient column), filled and merged."""
    columns = "text, tenant, salient" if salient else "text, tenant"
    new = "new.text, hex(new.tenant_id)" + (", new.salient" if salient else "")
    old = "old.text, hex(old.tenant_id)" + (", old.salient" if salient else "")
    return [
        f"CREATE VIRTUAL TABLE kb_passages_fts USING fts5({columns}, content='', tokenize='{tokenize}')",
        "CREATE TRIGGER kb_passages_fts_insert AFTER INSERT ON kb_passages BEGIN "
        f"INSERT INTO kb_passages_fts(rowid, {columns}) VALUES (new.id, {new}); END",
        "CREATE TRIGGER kb_passages_fts_delete AFTER DELETE ON kb_passages BEGIN "
        f"INSERT INTO kb_passages_fts(kb_passages_fts, rowid, {columns}) VALUES ('delete', old.id, {old}); END",
        "CREATE TRIGGER kb_passages_fts_update AFTER UPDATE ON kb_passages BEGIN "
        f"INSERT INTO kb_passages_fts(kb_passages_fts, rowid, {columns}) VALUES ('delete', old.id, {old}); "
        f"INSERT INTO kb_passages_fts(rowid, {columns}) VALUES (new.id, {new}); END",
        f"INSERT INTO kb_passages_fts(rowid, {columns}) SELECT id, "
        + ("text, hex(tenant_id), salient" if salient else "text, hex(tenant_id)")
        + " FROM kb_passages",
        "INSERT INTO kb_passages_fts(kb_passages_fts) VALUES ('optimize')",
    ]


def _postgres_vector(vector: str, statistics: int) -> list[str]:
    """0005's generated search_vector, made of `vector`, and its GIN index."""
    return [
        f"ALTER TABLE kb_passages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({vector}) STORED",
        f"ALTER TABLE kb_passages ALTER COLUMN search_vector SET STATISTICS {statistics}",
        "CREATE INDEX idx_kb_passages_search ON kb_passages USING GIN (search_vector)",
        "ANALYZE kb_passages",
    ]


# The passage's own terms (kb_passages.terms, as search makes them), its salient terms as lexemes of their own,
# each marked with "*", and its tenant's lexeme.
POSTGRES_VECTOR = (
    "array_to_tsvector(string_to_array(terms, ' ')) "
    "|| array_to_tsvector(string_to_array(regexp_replace(salient, '(\\S+)', '*\\1', 'g'), ' ')) "
    "|| array_to_tsvector(ARRAY['tenant ' || tenant_id])"
)
POSTGRES_VECTOR_0005 = "to_tsvector('english', text) || array_to_tsvector(ARRAY['tenant ' || tenant_id])"


def _drop_index() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trigger in SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        op.execute("DROP TABLE IF EXISTS kb_passages_fts")
    else:
        op.execute("ALTER TABLE kb_passages DROP COLUMN search_vector")  # and its GIN index


def upgrade() -> None:
    op.create_table(
        "kb_terms",
        sa.Column("tenant_id", sa.String(TENANT_ID_LENGTH), nullable=False, server_default="default"),
        sa.Column("term", sa.Text(), nullable=False),
        sa.Column("passages", sa.Integer(), nullable=False),
        sa.Column("most", sa.Integer(), nullable=False),
        sa.Column("shortest", sa.Integer(), nullable=False),
        sa.Column("salient", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "term", name="pk_kb_terms"),
    )
    op.create_table(
        "kb_term_totals",
        sa.Column("tenant_id", sa.String(TENANT_ID_LENGTH), nullable=False),
        sa.Column("passages", sa.BigInteger(), nullable=False),
        sa.Column("terms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", name="pk_kb_term_totals"),
    )
    # The index first, so that marking the passages does not go through its triggers (or recompute search_vector).
    _drop_index()
    # A plain ADD COLUMN with a constant default, never a batch rebuild (see 0010).
    op.add_column("kb_passages", sa.Column("salient", sa.Text(), nullable=False, server_default=""))
    op.add_column("kb_passages", sa.Column("length", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("kb_passages", sa.Column("terms", sa.Text(), nullable=False, server_default=""))
    connection = op.get_bind()
    tenants = connection.execute(sa.text("SELECT DISTINCT tenant_id FROM kb_passages")).scalars().all()
    for tenant_id in tenants:
        passages = connection.execute(
            sa.text("SELECT text FROM kb_passages WHERE tenant_id = :tenant_id"), {"tenant_id": tenant_id}
        ).scalars()
        term_statistics.count(connection, tenant_id, passages)
    postgresql = connection.dialect.name == "postgresql"  # (only PostgreSQL indexes kb_passages.terms)
    rows = connection.execute(sa.text("SELECT id, text FROM kb_passages")).all()
    fields = []
    for i, body in rows:
        salient, length, terms = term_statistics.passage_fields(body)
        fields.append({"id": i, "salient": salient, "length": length, "terms": terms if postgresql else ""})
    if fields:
        connection.execute(
            sa.text("UPDATE kb_passages SET salient = :salient, length = :length, terms = :terms WHERE id = :id"),
            fields,
        )
    if connection.dialect.name == "sqlite":
        statements = _sqlite_fts("unicode61", salient=True)
    else:
        statements = _postgres_vector(POSTGRES_VECTOR, -1)
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    _drop_index()
    op.drop_column("kb_passages", "terms")
    op.drop_column("kb_passages", "length")
    op.drop_column("kb_passages", "salient")
    if op.get_bind().dialect.name == "sqlite":
        statements = _sqlite_fts("porter unicode61", salient=False)
    else:
        statements = _postgres_vector(POSTGRES_VECTOR_0005, 1000)
    for statement in statements:
        op.execute(statement)
    op.drop_table("kb_term_totals")
    op.drop_table("kb_terms")
