"""Durable runs: stored events, leases, idempotency keys, cancellation and failure reasons.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23

messages gains what a run needs to outlive the gateway that started it: the resolved request
(to resume it elsewhere), its lease (owner, expiry), the last stored event's seq, a cancel
flag, the idempotency key (unique per tenant) and the failure reasons. run_events holds every event as emitted.
Existing runs keep their rows; they have no lease, so a gateway treats those still RUNNING as
abandoned and resumes or ends them.
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: Union[str, Sequence[str], None] = "0003"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    # Plain ADD COLUMN and CREATE INDEX, never a batch (copy-and-move) rebuild of messages: on
    # SQLite, dropping the old table would cascade-delete every stage row (foreign keys are on).
    for column in (
        sa.Column("request_id", sa.String(64), nullable=True),
        sa.Column("request_sha256", sa.String(64), nullable=True),
        sa.Column("request_proto", sa.LargeBinary(), nullable=True),
        sa.Column("lease_owner", sa.String(64), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resume_count", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("last_seq", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("cancel_requested", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("failures", JSON_DOCUMENT, nullable=True),
    ):
        op.add_column("messages", column)
    op.create_index("idx_messages_status_lease", "messages", ["status", "lease_expires_at"])
    op.create_index("uq_messages_tenant_id_request_id", "messages", ["tenant_id", "request_id"], unique=True)
    op.create_table(
        "run_events",
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("event_type", sa.String(32), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("message_id", "seq", name="pk_run_events"),
        sa.ForeignKeyConstraint(
            ["message_id"], ["messages.id"], name="fk_run_events_message_id_messages", ondelete="CASCADE"
        ),
    )


def downgrade() -> None:
    op.drop_table("run_events")
    op.drop_index("uq_messages_tenant_id_request_id", table_name="messages")
    op.drop_index("idx_messages_status_lease", table_name="messages")
    # Plain DROP COLUMN (SQLite 3.35+), not a batch rebuild, for the reason given in upgrade().
    for column in (
        "failures",
        "error_message",
        "cancel_requested",
        "last_seq",
        "resume_count",
        "lease_expires_at",
        "lease_owner",
        "request_proto",
        "request_sha256",
        "request_id",
    ):
        op.drop_column("messages", column)
