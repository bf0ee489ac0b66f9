"""A page-token key every gateway replica shares.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05

server_keys: random secrets created once in the database. "page_tokens" signs ListResults' (and every
other listing's) page tokens unless FACTCHECK_PAGE_TOKEN_KEYS is set: created here, in the migration
every replica runs (serialised), so that replicas on one database agree on it from their first call.
"""

import secrets
from datetime import UTC, datetime
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: Union[str, Sequence[str], None] = "0012"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    table = op.create_table(
        "server_keys",
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("secret", sa.String(128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name="pk_server_keys"),
    )
    # SQLite keeps UTC without an offset (UTCDateTime in store/models.py does the same).
    created = datetime.now(UTC)
    if op.get_bind().dialect.name == "sqlite":
        created = created.replace(tzinfo=None)
    op.bulk_insert(table, [{"name": "page_tokens", "secret": secrets.token_hex(32), "created_at": created}])


def downgrade() -> None:
    op.drop_table("server_keys")
