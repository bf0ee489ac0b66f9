"""The verification loop's human reviews of CRITICAL outcomes.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23

One new table, investigation_reviews: a CRITICAL claim's investigation outcome held for a
person's decision. Nothing existing changes (no rebuild of messages: see 0003 and 0004).
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: Union[str, Sequence[str], None] = "0006"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "investigation_reviews",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("claim_id", sa.String(64), nullable=False),
        sa.Column("tenant_id", sa.String(64), nullable=False, server_default="default"),
        sa.Column("claim", sa.Text(), nullable=False),
        sa.Column("origin_flags", JSON_DOCUMENT, nullable=False),
        sa.Column("proposed_status", sa.String(16), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("reasoning", sa.Text(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_investigation_reviews"),
        sa.UniqueConstraint("message_id", "claim_id", name="uq_investigation_reviews_message_id_claim_id"),
        sa.ForeignKeyConstraint(
            ["message_id"], ["messages.id"], name="fk_investigation_reviews_message_id_messages", ondelete="CASCADE"
        ),
    )
    op.create_index(
        "idx_investigation_reviews_tenant_state_created",
        "investigation_reviews",
        ["tenant_id", "state", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("idx_investigation_reviews_tenant_state_created", table_name="investigation_reviews")
    op.drop_table("investigation_reviews")
