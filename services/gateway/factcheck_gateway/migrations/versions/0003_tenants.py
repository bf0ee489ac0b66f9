"""Tenants: every run and every knowledge-store document belongs to a tenant.

Revision ID: 0003
Revises: 0002
Create Date: 2027-01-18

messages, kb_documents and kb_passages get a tenant_id (NOT NULL); rows stored before
belong to the tenant "default". Runs are listed per tenant (index on tenant_id,
created_at, id). Document ids and content hashes are unique per tenant: kb_documents'
key becomes (tenant_id, id), its passages refer to that key, and the same text may be
stored once by each tenant.

SQLite: messages gets its column with ALTER TABLE ADD COLUMN. The knowledge tables are
rebuilt by hand rather than by Alembic's batch "move and copy": the migration runs in one
transaction, where `PRAGMA foreign_keys` cannot be turned off, and dropping a parent table
then deletes its children through ON DELETE CASCADE. So the passages are copied aside
first, both tables are rebuilt child first, the rows copied back (ids kept) and the FTS5
index rebuilt. The same caution holds for any later migration on SQLite: never recreate
`messages` or `kb_documents` while their children are in place.
PostgreSQL: plain ALTER TABLE statements.
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: Union[str, Sequence[str], None] = "0002"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

DEFAULT_TENANT = "default"  # frozen copy of factcheck.kit.security.tenants.DEFAULT_TENANT

DOCUMENT_COLUMNS = (
    "id, title, url, published_at, authority, text, content_sha256, char_count, passage_count, created_at"
)
PASSAGE_COLUMNS = "id, document_id, chunk_index, text, start_offset, end_offset"
FTS_TRIGGERS = {  # as created by 0002
    "kb_passages_fts_insert": "AFTER INSERT ON kb_passages BEGIN "
    "INSERT INTO kb_passages_fts(rowid, text) VALUES (new.id, new.text); END",
    "kb_passages_fts_delete": "AFTER DELETE ON kb_passages BEGIN "
    "INSERT INTO kb_passages_fts(kb_passages_fts, rowid, text) VALUES ('delete', old.id, old.text); END",
    "kb_passages_fts_update": "AFTER UPDATE ON kb_passages BEGIN "
    "INSERT INTO kb_passages_fts(kb_passages_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "INSERT INTO kb_passages_fts(rowid, text) VALUES (new.id, new.text); END",
}


def tenant_column() -> sa.Column:
    return sa.Column("tenant_id", sa.String(64), nullable=False, server_default=DEFAULT_TENANT)


def upgrade() -> None:
    op.add_column("messages", tenant_column())
    op.drop_index("idx_messages_created_id", table_name="messages")
    op.create_index("idx_messages_tenant_created_id", "messages", ["tenant_id", "created_at", "id"])
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_knowledge_sqlite(tenants=True)
    else:
        _upgrade_knowledge_postgresql()


def downgrade() -> None:
    """Back to one shared store; refused while any row belongs to a tenant other than "default"."""
    bind = op.get_bind()
    for table in ("messages", "kb_documents"):
        count = bind.execute(sa.text(f"SELECT COUNT(*) FROM {table} WHERE tenant_id <> :t"), {"t": DEFAULT_TENANT})
        if count.scalar():
            raise RuntimeError(
                f"cannot downgrade below 0003: {table} holds rows of tenants other than {DEFAULT_TENANT!r}"
            )
    if bind.dialect.name == "sqlite":
        _rebuild_knowledge_sqlite(tenants=False)
    else:
        _downgrade_knowledge_postgresql()
    op.drop_index("idx_messages_tenant_created_id", table_name="messages")
    op.create_index("idx_messages_created_id", "messages", ["created_at", "id"])
    op.execute("ALTER TABLE messages DROP COLUMN tenant_id")  # native on SQLite >= 3.35; no table rebuild


# --- SQLite ---------------------------------------------------------------------------------------------


def _rebuild_knowledge_sqlite(tenants: bool) -> None:
    op.execute(f"CREATE TEMP TABLE kb_documents_copy AS SELECT {DOCUMENT_COLUMNS} FROM kb_documents")
    op.execute(f"CREATE TEMP TABLE kb_passages_copy AS SELECT {PASSAGE_COLUMNS} FROM kb_passages")
    for trigger in FTS_TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    op.drop_table("kb_passages")  # the child first: nothing cascades
    op.drop_table("kb_documents")  # with its indexes
    _create_documents(tenants)
    _create_passages(tenants)
    tenant, tenant_value = ("tenant_id, ", f"'{DEFAULT_TENANT}', ") if tenants else ("", "")
    op.execute(
        f"INSERT INTO kb_documents ({tenant}{DOCUMENT_COLUMNS}) "
        f"SELECT {tenant_value}{DOCUMENT_COLUMNS} FROM kb_documents_copy"
    )
    op.execute(
        f"INSERT INTO kb_passages ({tenant}{PASSAGE_COLUMNS}) SELECT {tenant_value}{PASSAGE_COLUMNS} FROM kb_passages_copy"
    )
    for trigger, body in FTS_TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {trigger} {body}")
    # Passage ids (the FTS rowids) are kept, but rebuild the index from the rows to be sure.
    op.execute("INSERT INTO kb_passages_fts(kb_passages_fts) VALUES ('rebuild')")
    op.execute("DROP TABLE kb_documents_copy")
    op.execute("DROP TABLE kb_passages_copy")


def _create_documents(tenants: bool) -> None:
    key = ["tenant_id", "id"] if tenants else ["id"]
    op.create_table(
        "kb_documents",
        *([tenant_column()] if tenants else []),
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
        sa.PrimaryKeyConstraint(*key, name="pk_kb_documents"),
        sa.UniqueConstraint(*key[:-1], "content_sha256", name=_documents_unique(tenants)),
    )
    name, columns = _documents_index(tenants)
    op.create_index(name, "kb_documents", columns)


def _create_passages(tenants: bool) -> None:
    document = ["tenant_id", "document_id"] if tenants else ["document_id"]
    op.create_table(
        "kb_passages",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        *([tenant_column()] if tenants else []),
        sa.Column("document_id", sa.String(255), nullable=False),
        sa.Column("chunk_index", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("start_offset", sa.Integer(), nullable=False),
        sa.Column("end_offset", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_kb_passages"),
        sa.ForeignKeyConstraint(
            document,
            [f"kb_documents.{column}" for column in (["tenant_id", "id"] if tenants else ["id"])],
            name=_passages_foreign_key(tenants),
            ondelete="CASCADE",
        ),
        sa.UniqueConstraint(*document, "chunk_index", name=_passages_unique(tenants)),
    )


# --- PostgreSQL -----------------------------------------------------------------------------------------


def _upgrade_knowledge_postgresql() -> None:
    op.add_column("kb_documents", tenant_column())
    op.add_column("kb_passages", tenant_column())
    _swap_knowledge_keys_postgresql(tenants=True)


def _downgrade_knowledge_postgresql() -> None:
    _swap_knowledge_keys_postgresql(tenants=False)
    op.drop_column("kb_passages", "tenant_id")
    op.drop_column("kb_documents", "tenant_id")


def _swap_knowledge_keys_postgresql(tenants: bool) -> None:
    """Replace the keys of one layout (tenants=False: 0002's) by the other's."""
    op.drop_constraint(_passages_foreign_key(not tenants), "kb_passages", type_="foreignkey")
    op.drop_constraint(_passages_unique(not tenants), "kb_passages", type_="unique")
    op.drop_constraint("pk_kb_documents", "kb_documents", type_="primary")
    op.drop_constraint(_documents_unique(not tenants), "kb_documents", type_="unique")
    op.drop_index(_documents_index(not tenants)[0], table_name="kb_documents")
    prefix = ["tenant_id"] if tenants else []
    op.create_primary_key("pk_kb_documents", "kb_documents", [*prefix, "id"])
    op.create_unique_constraint(_documents_unique(tenants), "kb_documents", [*prefix, "content_sha256"])
    name, columns = _documents_index(tenants)
    op.create_index(name, "kb_documents", columns)
    op.create_foreign_key(
        _passages_foreign_key(tenants),
        "kb_passages",
        "kb_documents",
        [*prefix, "document_id"],
        [*prefix, "id"],
        ondelete="CASCADE",
    )
    op.create_unique_constraint(_passages_unique(tenants), "kb_passages", [*prefix, "document_id", "chunk_index"])


# --- constraint names of each layout (the models' naming convention) -------------------------------------


def _documents_unique(tenants: bool) -> str:
    return "uq_kb_documents_tenant_id_content_sha256" if tenants else "uq_kb_documents_content_sha256"


def _documents_index(tenants: bool) -> tuple[str, list[str]]:
    if tenants:
        return "idx_kb_documents_tenant_created_id", ["tenant_id", "created_at", "id"]
    return "idx_kb_documents_created_id", ["created_at", "id"]


def _passages_foreign_key(tenants: bool) -> str:
    return "fk_kb_passages_tenant_id_kb_documents" if tenants else "fk_kb_passages_document_id_kb_documents"


def _passages_unique(tenants: bool) -> str:
    return "uq_kb_passages_tenant_id_document_id_chunk_index" if tenants else "uq_kb_passages_document_id_chunk_index"
