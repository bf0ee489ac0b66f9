"""Passages keep the heading of the document section they are in.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

kb_passages.section: the text of the heading in effect where the passage starts ('' when none).
Passages stored before this revision read '' until their document is loaded again: the heading
is found by chunking the document, which this migration does not redo. A plain ADD COLUMN with a
constant default, never a batch rebuild (see 0004): on SQLite a rebuild would go through the
FTS5 triggers, and on PostgreSQL it would recompute every passage's search_vector.
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: Union[str, Sequence[str], None] = "0009"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column("kb_passages", sa.Column("section", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    op.drop_column("kb_passages", "section")
