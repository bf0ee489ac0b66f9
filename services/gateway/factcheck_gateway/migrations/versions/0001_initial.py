"""Initial schema: messages and deliberation_stages.

Revision ID: 0001
Revises:
Create Date: 2026-02-09

"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: Union[str, Sequence[str], None] = None
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Frozen copy of the column type at this revision (models.py may evolve).
JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    """Create both tables and their indexes."""
    op.create_table(
        "messages",
        sa.Column("id", sa.String(255), nullable=False),
        sa.Column("conversation_id", sa.String(255), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("request_config", JSON_DOCUMENT, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("title", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_messages"),
    )
    op.create_index("idx_messages_created_id", "messages", ["created_at", "id"])
    op.create_table(
        "deliberation_stages",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("stage_type", sa.String(32), nullable=False),
        sa.Column("stage_order", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(255), nullable=True),
        sa.Column("role", sa.String(32), nullable=False),
        sa.Column("content", sa.Text(), nullable=True),
        sa.Column("parsed_data", JSON_DOCUMENT, nullable=True),
        sa.Column("response_time_ms", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_deliberation_stages"),
        sa.ForeignKeyConstraint(
            ["message_id"], ["messages.id"], name="fk_deliberation_stages_message_id_messages", ondelete="CASCADE"
        ),
        sa.UniqueConstraint("message_id", "stage_type", name="uq_deliberation_stages_message_id_stage_type"),
    )
    op.create_index("idx_deliberation_stages_message", "deliberation_stages", ["message_id", "stage_order"])


def downgrade() -> None:
    """Drop everything this revision created."""
    op.drop_index("idx_deliberation_stages_message", table_name="deliberation_stages")
    op.drop_table("deliberation_stages")
    op.drop_index("idx_messages_created_id", table_name="messages")
    op.drop_table("messages")
