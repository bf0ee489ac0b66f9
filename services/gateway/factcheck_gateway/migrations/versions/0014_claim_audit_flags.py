"""Claims keep what the gateway's audit found in the checkers' answers on them.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05

claims.audit_flags: the AuditFlag messages (kind, detail, checker model) as a JSON list, NULL when the audit
found nothing (and for every claim stored before this revision). A plain nullable ADD COLUMN: no rewrite of the
table on either database.
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: Union[str, Sequence[str], None] = "0013"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column(
        "claims",
        sa.Column("audit_flags", sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql"), nullable=True),
    )


def downgrade() -> None:
    op.drop_column("claims", "audit_flags")
