"""Evaluations that outlive their caller, and every item's answer.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05

evaluation_events: an evaluation's events, each with its gap-free seq (evaluations.last_seq is the
newest), so WatchEvaluation replays them from any gateway. evaluation_items gets its own `id` (what
ListEvaluationItems pages by, with created_at; the rows stored before get one here), the answer as
the checker gave it (`answer`: its evidence text; `correction`) and its cached prompt tokens.

Only columns with defaults are added, so both backends take plain ALTER TABLE ADD COLUMN; the ids of
the rows already stored are written one by one (an evaluation holds at most 200,000 of them).
"""

import uuid
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: Union[str, Sequence[str], None] = "0011"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

ITEMS = sa.table(
    "evaluation_items",
    sa.column("id", sa.String),
    sa.column("evaluation_id", sa.String),
    sa.column("checker_model", sa.String),
    sa.column("set_name", sa.String),
    sa.column("item_id", sa.String),
)


def upgrade() -> None:
    op.add_column("evaluations", sa.Column("last_seq", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("evaluation_items", sa.Column("id", sa.String(36), nullable=False, server_default=""))
    op.add_column("evaluation_items", sa.Column("cached_tokens", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("evaluation_items", sa.Column("answer", sa.Text(), nullable=True))
    op.add_column("evaluation_items", sa.Column("correction", sa.Text(), nullable=True))
    _give_stored_items_ids()
    with op.batch_alter_table("evaluation_items") as batch:
        batch.alter_column("id", existing_type=sa.String(36), server_default=None, existing_nullable=False)
    op.create_index("idx_evaluation_items_page", "evaluation_items", ["evaluation_id", "created_at", "id"])
    op.create_table(
        "evaluation_events",
        sa.Column("evaluation_id", sa.String(36), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("event_type", sa.String(16), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("evaluation_id", "seq", name="pk_evaluation_events"),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name="fk_evaluation_events_evaluation_id_evaluations",
            ondelete="CASCADE",
        ),
    )


def _give_stored_items_ids() -> None:
    connection = op.get_bind()
    keys = connection.execute(
        sa.select(ITEMS.c.evaluation_id, ITEMS.c.checker_model, ITEMS.c.set_name, ITEMS.c.item_id)
    )
    for evaluation_id, checker_model, set_name, item_id in keys.all():
        connection.execute(
            sa.update(ITEMS)
            .where(
                ITEMS.c.evaluation_id == evaluation_id,
                ITEMS.c.checker_model == checker_model,
                ITEMS.c.set_name == set_name,
                ITEMS.c.item_id == item_id,
            )
            .values(id=str(uuid.uuid4()))
        )


def downgrade() -> None:
    op.drop_table("evaluation_events")
    op.drop_index("idx_evaluation_items_page", table_name="evaluation_items")
    with op.batch_alter_table("evaluation_items") as batch:
        batch.drop_column("correction")
        batch.drop_column("answer")
        batch.drop_column("cached_tokens")
        batch.drop_column("id")
    with op.batch_alter_table("evaluations") as batch:
        batch.drop_column("last_seq")
