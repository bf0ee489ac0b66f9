"""Full-text index per tenant: the tenant is part of each passage's indexed terms.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23

Search answers from a bounded number of candidates (services/gateway/factcheck_gateway/knowledge/passage_store.py); to
find a tenant's candidates without wading through other tenants' matches, the index itself
must know the tenant. So each passage is indexed with one extra term naming its tenant, and
every search ANDs that term with the query:

SQLite: kb_passages_fts becomes a contentless FTS5 table with two columns: `text` and `tenant`,
the hex of tenant_id (one token whatever punctuation the name has, so no two tenants share it).
Triggers keep it in step as before. Contentless, because the indexed tenant value is not a column
of kb_passages; nothing reads text back from the index (search reads kb_passages). An FTS5
'rebuild' is therefore impossible: re-index with INSERT ... SELECT as below.
PostgreSQL: search_vector gains the lexeme 'tenant <tenant_id>' (the parser never makes a lexeme
with a space), and its statistics target is raised to 1000 so ANALYZE records the document
frequency of every lexeme in more than about 0.04% of passages (search uses it to pick a claim's
rarest terms). Dropping and adding the generated column rewrites kb_passages and rebuilds the
GIN index: about a minute per million passages.

Only the index changes: kb_passages and kb_documents are never rebuilt (see 0003 on why that
would be dangerous on SQLite).
"""

from typing import Sequence, Union

from alembic import op

revision: str = "0005"
down_revision: Union[str, Sequence[str], None] = "0004"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# --- SQLite ---------------------------------------------------------------------------------------------

SQLITE_TRIGGERS = ("kb_passages_fts_insert", "kb_passages_fts_delete", "kb_passages_fts_update")
SQLITE_FTS = [
    "CREATE VIRTUAL TABLE kb_passages_fts USING fts5(text, tenant, content='', tokenize='porter unicode61')",
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
SQLITE_FTS_0002 = [  # external content over kb_passages.text, as 0002 made it
    "CREATE VIRTUAL TABLE kb_passages_fts USING fts5("
    "text, content='kb_passages', content_rowid='id', tokenize='porter unicode61')",
    "CREATE TRIGGER kb_passages_fts_insert AFTER INSERT ON kb_passages BEGIN "
    "INSERT INTO kb_passages_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER kb_passages_fts_delete AFTER DELETE ON kb_passages BEGIN "
    "INSERT INTO kb_passages_fts(kb_passages_fts, rowid, text) VALUES ('delete', old.id, old.text); END",
    "CREATE TRIGGER kb_passages_fts_update AFTER UPDATE ON kb_passages BEGIN "
    "INSERT INTO kb_passages_fts(kb_passages_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "INSERT INTO kb_passages_fts(rowid, text) VALUES (new.id, new.text); END",
    "INSERT INTO kb_passages_fts(kb_passages_fts) VALUES ('rebuild')",
]

# --- PostgreSQL -----------------------------------------------------------------------------------------

POSTGRES_VECTOR = "to_tsvector('english', text) || array_to_tsvector(ARRAY['tenant ' || tenant_id])"
POSTGRES_VECTOR_0002 = "to_tsvector('english', text)"


def _postgres_index(vector: str, statistics: int) -> list[str]:
    return [
        "ALTER TABLE kb_passages DROP COLUMN search_vector",  # and its GIN index
        f"ALTER TABLE kb_passages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({vector}) STORED",
        f"ALTER TABLE kb_passages ALTER COLUMN search_vector SET STATISTICS {statistics}",
        "CREATE INDEX idx_kb_passages_search ON kb_passages USING GIN (search_vector)",
        "ANALYZE kb_passages",
    ]


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _replace_sqlite_index(SQLITE_FTS)
    else:
        for statement in _postgres_index(POSTGRES_VECTOR, 1000):
            op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _replace_sqlite_index(SQLITE_FTS_0002)
    else:
        for statement in _postgres_index(POSTGRES_VECTOR_0002, -1):  # -1: the default target
            op.execute(statement)


def _replace_sqlite_index(statements: list[str]) -> None:
    for trigger in SQLITE_TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.execute("DROP TABLE IF EXISTS kb_passages_fts")
    for statement in statements:
        op.execute(statement)
