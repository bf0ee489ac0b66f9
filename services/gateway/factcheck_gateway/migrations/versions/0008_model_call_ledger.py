"""The model-call ledger and the verification cache.

Revision ID: 0008
Revises: 0007 (0006, citations, is not merged yet: the integrator chains it)
Create Date: 2026-11-23

model_calls: one row per model call of a run (tokens, latency, retries, outcome, prompt version,
the prices used and the cost); model_cache: verifications and extractions a tenant already paid
for, by a hash of everything they depend on. Two new tables only: messages and kb_documents are
never rebuilt (see 0003 on why that would be dangerous on SQLite).
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: Union[str, Sequence[str], None] = "0007"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.create_table(
        "model_calls",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("tenant_id", sa.String(64), nullable=False, server_default="default"),
        sa.Column("mode", sa.String(32), nullable=False),
        sa.Column("stage", sa.String(64), nullable=False),
        sa.Column("method", sa.String(64), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("provider", sa.String(64), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cached_tokens", sa.Integer(), nullable=False),
        sa.Column("total_tokens", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("latency_ms", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(64), nullable=False),
        sa.Column("prompt_version", sa.String(64), nullable=False),
        sa.Column("input_price_per_million", sa.Float(), nullable=True),
        sa.Column("output_price_per_million", sa.Float(), nullable=True),
        sa.Column("cached_input_price_per_million", sa.Float(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_model_calls"),
        sa.ForeignKeyConstraint(
            ["message_id"], ["messages.id"], name="fk_model_calls_message_id_messages", ondelete="CASCADE"
        ),
    )
    op.create_index("idx_model_calls_tenant_created", "model_calls", ["tenant_id", "created_at"])
    op.create_index("idx_model_calls_message_id", "model_calls", ["message_id"])
    op.create_table(
        "model_cache",
        sa.Column("tenant_id", sa.String(64), nullable=False, server_default="default"),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("cache_key", sa.String(64), nullable=False),
        sa.Column("model", sa.String(255), nullable=False),
        sa.Column("prompt_version", sa.String(64), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("tenant_id", "kind", "cache_key", name="pk_model_cache"),
    )
    op.create_index("idx_model_cache_created", "model_cache", ["created_at"])


def downgrade() -> None:
    op.drop_index("idx_model_cache_created", table_name="model_cache")
    op.drop_table("model_cache")
    op.drop_index("idx_model_calls_message_id", table_name="model_calls")
    op.drop_index("idx_model_calls_tenant_created", table_name="model_calls")
    op.drop_table("model_calls")
