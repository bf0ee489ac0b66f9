"""Binary checkers' decision thresholds: each answer's P(supported) and threshold, and the thresholds fitted.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06

evaluation_items gets `support_probability` (a binary checker's P(supported) of the claim, when the threshold
decided its verdict) and `support_threshold` (the threshold it was read against): nullable, so both backends
take plain ALTER TABLE ADD COLUMN and the rows stored before keep NULL (no reading). evaluation_thresholds
holds one fitted threshold (or why none could be fitted) per checker of an evaluation that asked for them.
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: Union[str, Sequence[str], None] = "0014"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column("evaluation_items", sa.Column("support_probability", sa.Float(), nullable=True))
    op.add_column("evaluation_items", sa.Column("support_threshold", sa.Float(), nullable=True))
    op.create_table(
        "evaluation_thresholds",
        sa.Column("evaluation_id", sa.String(36), nullable=False),
        sa.Column("checker_model", sa.String(255), nullable=False),
        sa.Column("set_name", sa.String(64), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=True),
        sa.Column("criterion", sa.String(32), nullable=False),
        sa.Column("balanced_accuracy", sa.Float(), nullable=False),
        sa.Column("evaluated_threshold", sa.Float(), nullable=True),
        sa.Column("evaluated_balanced_accuracy", sa.Float(), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.Column("verified_items", sa.Integer(), nullable=False),
        sa.Column("fixed_items", sa.Integer(), nullable=False),
        sa.Column("candidates", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("evaluation_id", "checker_model", name="pk_evaluation_thresholds"),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name="fk_evaluation_thresholds_evaluation_id_evaluations",
            ondelete="CASCADE",
        ),
    )


def downgrade() -> None:
    op.drop_table("evaluation_thresholds")
    with op.batch_alter_table("evaluation_items") as batch:
        batch.drop_column("support_threshold")
        batch.drop_column("support_probability")
