"""Ledger rows say whether their token counts are estimates.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27

model_calls.usage_estimated: true when the service counted the tokens itself (a local engine,
a provider that reports no usage, a call cancelled or timed out before its end) rather than
the provider reporting them. A plain ADD COLUMN, never a batch rebuild (see 0004).
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: Union[str, Sequence[str], None] = "0008"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column("model_calls", sa.Column("usage_estimated", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    op.drop_column("model_calls", "usage_estimated")
