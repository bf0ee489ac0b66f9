"""Checker evaluations, and their model calls in the ledger.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27

evaluations: one row per evaluation (EvaluationService); evaluation_items: one checker's answer on
one labelled item, stored as it arrives. model_calls gets evaluation_id: an evaluation's calls are
ledgered like a run's (GetUsage counts them, mode "evaluation"), so message_id becomes nullable and
a check says exactly one of the two is set.

model_calls is only a child table (nothing refers to it), so on SQLite it is rebuilt by hand (new
table, copy, drop, rename: SQLite cannot drop a NOT NULL in place); messages and kb_documents are
not touched (see 0003). PostgreSQL: plain ALTER TABLE statements.
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: Union[str, Sequence[str], None] = "0010"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

STATUSES = "'RUNNING', 'COMPLETE', 'PARTIAL', 'FAILED', 'CANCELLED'"
PAYER_CHECK = "(message_id IS NULL) <> (evaluation_id IS NULL)"
CALL_COLUMNS = (
    "id, message_id, tenant_id, mode, stage, method, model, provider, prompt_tokens, completion_tokens, "
    "cached_tokens, total_tokens, attempts, latency_ms, outcome, prompt_version, usage_estimated, "
    "input_price_per_million, output_price_per_million, cached_input_price_per_million, cost_usd, created_at"
)


def upgrade() -> None:
    op.create_table(
        "evaluations",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("tenant_id", sa.String(64), nullable=False, server_default="default"),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("config", sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql"), nullable=False),
        sa.Column("custom_items", sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql"), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_evaluations"),
        sa.CheckConstraint(f"status IN ({STATUSES})", name="ck_evaluations_status"),
    )
    op.create_index("idx_evaluations_tenant_created", "evaluations", ["tenant_id", "created_at", "id"])
    op.create_table(
        "evaluation_items",
        sa.Column("evaluation_id", sa.String(36), nullable=False),
        sa.Column("checker_model", sa.String(255), nullable=False),
        sa.Column("set_name", sa.String(64), nullable=False),
        sa.Column("item_id", sa.String(200), nullable=False),
        sa.Column("label", sa.String(16), nullable=False),
        sa.Column("verdict", sa.String(16), nullable=True),
        sa.Column("confidence", sa.String(8), nullable=True),
        sa.Column("unreadable", sa.Boolean(), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("failed", sa.Boolean(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=True),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("evaluation_id", "checker_model", "set_name", "item_id", name="pk_evaluation_items"),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name="fk_evaluation_items_evaluation_id_evaluations",
            ondelete="CASCADE",
        ),
    )
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite_model_calls()
    else:
        op.add_column("model_calls", sa.Column("evaluation_id", sa.String(36), nullable=True))
        op.create_foreign_key(
            "fk_model_calls_evaluation_id_evaluations",
            "model_calls",
            "evaluations",
            ["evaluation_id"],
            ["id"],
            ondelete="CASCADE",
        )
        op.alter_column("model_calls", "message_id", existing_type=sa.String(255), nullable=True)
        op.create_check_constraint("ck_model_calls_payer", "model_calls", PAYER_CHECK)
    op.create_index("idx_model_calls_evaluation_id", "model_calls", ["evaluation_id"])


def _rebuild_sqlite_model_calls() -> None:
    op.create_table(
        "model_calls_0011",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("message_id", sa.String(255), nullable=True),
        sa.Column("evaluation_id", sa.String(36), nullable=True),
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
        sa.Column("usage_estimated", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("input_price_per_million", sa.Float(), nullable=True),
        sa.Column("output_price_per_million", sa.Float(), nullable=True),
        sa.Column("cached_input_price_per_million", sa.Float(), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_model_calls"),
        sa.ForeignKeyConstraint(
            ["message_id"], ["messages.id"], name="fk_model_calls_message_id_messages", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name="fk_model_calls_evaluation_id_evaluations",
            ondelete="CASCADE",
        ),
        sa.CheckConstraint(PAYER_CHECK, name="ck_model_calls_payer"),
    )
    op.execute(f"INSERT INTO model_calls_0011 ({CALL_COLUMNS}) SELECT {CALL_COLUMNS} FROM model_calls")
    op.drop_index("idx_model_calls_message_id", table_name="model_calls")
    op.drop_index("idx_model_calls_tenant_created", table_name="model_calls")
    op.drop_table("model_calls")
    op.rename_table("model_calls_0011", "model_calls")
    op.create_index("idx_model_calls_tenant_created", "model_calls", ["tenant_id", "created_at"])
    op.create_index("idx_model_calls_message_id", "model_calls", ["message_id"])


def downgrade() -> None:
    # An evaluation's ledger rows go with it: the old table has no place for them.
    op.drop_index("idx_model_calls_evaluation_id", table_name="model_calls")
    op.execute("DELETE FROM model_calls WHERE evaluation_id IS NOT NULL")
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table("model_calls", recreate="always") as batch:
            batch.drop_constraint("ck_model_calls_payer", type_="check")
            batch.drop_constraint("fk_model_calls_evaluation_id_evaluations", type_="foreignkey")
            batch.drop_column("evaluation_id")
            batch.alter_column("message_id", existing_type=sa.String(255), nullable=False)
    else:
        op.drop_constraint("ck_model_calls_payer", "model_calls", type_="check")
        op.drop_constraint("fk_model_calls_evaluation_id_evaluations", "model_calls", type_="foreignkey")
        op.drop_column("model_calls", "evaluation_id")
        op.alter_column("model_calls", "message_id", existing_type=sa.String(255), nullable=False)
    op.drop_table("evaluation_items")
    op.drop_index("idx_evaluations_tenant_created", table_name="evaluations")
    op.drop_table("evaluations")
