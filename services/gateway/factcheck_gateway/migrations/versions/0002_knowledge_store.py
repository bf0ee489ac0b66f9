"""Knowledge store: documents, passages and a full-text index per backend.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

SQLite: an external-content FTS5 table over kb_passages.text, kept in step by triggers.
PostgreSQL: a generated tsvector column with a GIN index.
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: Union[str, Sequence[str], None] = "0001"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

SQLITE_FTS = [
    "CREATE VIRTUAL TABLE kb_passages_fts USING fts5("
    "text, content='kb_passages', content_rowid='id', tokenize='porter unicode61')",
    "CREATE TRIGGER kb_passages_fts_insert AFTER INSERT ON kb_passages BEGIN "
    "INSERT INTO kb_passages_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER kb_passages_fts_delete AFTER DELETE ON kb_passages BEGIN "
    "INSERT INTO kb_passages_fts(kb_passages_fts, rowid, text) VALUES ('delete', old.id, old.text); END",
    "CREATE TRIGGER kb_passages_fts_update AFTER UPDATE ON kb_passages BEGIN "
    "INSERT INTO kb_passages_fts(kb_passages_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "INSERT INTO kb_passages_fts(rowid, text) VALUES (new.id, new.text); END",
]
POSTGRES_FTS = [
    "ALTER TABLE kb_passages ADD COLUMN search_vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('english', text)) STORED",
    "CREATE INDEX idx_kb_passages_search ON kb_passages USING GIN (search_vector)",
]


def upgrade() -> None:
    op.create_table(
        "kb_documents",
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("published_at", sa.String(64), nullable=True),
        sa.Column("authority", sa.Float(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("content_sha256", sa.String(64), nullable=False),
        sa.Column("char_count", sa.Integer(), nullable=False),
        sa.Column("passage_count", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_kb_documents"),
        sa.UniqueConstraint("content_sha256", name="uq_kb_documents_content_sha256"),
    )
    op.create_index("idx_kb_documents_created_id", "kb_documents", ["created_at", "id"])
    op.create_table(
        "kb_passages",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("document_id", sa.String(255), nullable=False),
        sa.Column("chunk_index", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("start_offset", sa.Integer(), nullable=False),
        sa.Column("end_offset", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_kb_passages"),
        sa.ForeignKeyConstraint(
            ["document_id"], ["kb_documents.id"], name="fk_kb_passages_document_id_kb_documents", ondelete="CASCADE"
        ),
        sa.UniqueConstraint("document_id", "chunk_index", name="uq_kb_passages_document_id_chunk_index"),
    )
    statements = SQLITE_FTS if op.get_bind().dialect.name == "sqlite" else POSTGRES_FTS
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        op.execute("DROP TABLE IF EXISTS kb_passages_fts")
    op.drop_table("kb_passages")
    op.drop_index("idx_kb_documents_created_id", table_name="kb_documents")
    op.drop_table("kb_documents")
