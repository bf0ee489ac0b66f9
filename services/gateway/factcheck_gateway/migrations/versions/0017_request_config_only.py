"""A run's request stored once: messages.request_config, without messages.request_proto.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05

A run's config was stored twice: request_config (the plan's resolved config as JSON, which results and
listings read) and request_proto (the resolved RunRequest's bytes, which a resumed run planned again).
request_config is now the only copy, and a resumed run's request is rebuilt from it by its mode
(mode_dispatch.resume_request). The JSON gains what only the bytes held, each key only when the caller set
it: the budget ("budget"), a fact-check's "useCache" and the text of a council's supplied "responses"
(mode_dispatch.caller_config), and the key "resumable" (store/records.py: RESUMABLE), which runs stored
before runs were durable (request_proto NULL) lack: those still end, unresumed, when they are abandoned.

Upgrade reads each stored request's bytes, merges those keys into its request_config and drops the column;
downgrade adds the column back and writes each resumable run's request, rebuilt from its request_config,
removing the keys upgrade added. Both use the gateway's own mapping (mode_dispatch), so that the config a
resumed run reads is the one new runs store.
"""

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from google.protobuf.message import DecodeError
from sqlalchemy.dialects import postgresql

from factcheck.v1 import factcheck_pb2
from factcheck_gateway.mode_dispatch import caller_config, resume_request
from factcheck_gateway.store.records import RESUMABLE, MessageRecord

revision: str = "0017"
down_revision: Union[str, Sequence[str], None] = "0016"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

MESSAGES = sa.table(
    "messages",
    sa.column("id", sa.String),
    sa.column("tenant_id", sa.String),
    sa.column("conversation_id", sa.String),
    sa.column("question", sa.Text),
    sa.column("request_config", JSON_DOCUMENT),
    sa.column("request_id", sa.String),
    sa.column("request_proto", sa.LargeBinary),
)


# Rows read and rewritten per batch: the messages table is read in keyset pages, never held whole.
BATCH_ROWS = 500


def _batches(connection: sa.Connection, query: sa.Select) -> Iterator[Sequence[sa.Row]]:
    """`query`'s rows (its first column: messages.id) in pages of BATCH_ROWS, by id."""
    after = None
    while True:
        page = query if after is None else query.where(MESSAGES.c.id > after)
        rows = connection.execute(page.order_by(MESSAGES.c.id).limit(BATCH_ROWS)).all()
        if not rows:
            return
        yield rows
        after = rows[-1][0]


def upgrade() -> None:
    connection = op.get_bind()
    query = sa.select(MESSAGES.c.id, MESSAGES.c.request_config, MESSAGES.c.request_proto).where(
        MESSAGES.c.request_proto.is_not(None)
    )
    for message_id, config, proto in (row for rows in _batches(connection, query) for row in rows):
        try:
            request = factcheck_pb2.RunRequest.FromString(bytes(proto))
        except DecodeError:
            continue  # never resumable (a resume ended it): it stays so, without RESUMABLE
        merged = {**(config or {}), **caller_config(request), RESUMABLE: True}
        connection.execute(sa.update(MESSAGES).where(MESSAGES.c.id == message_id).values(request_config=merged))
    # Plain DROP COLUMN (SQLite 3.35+), never a batch rebuild of messages: on SQLite, dropping the old table
    # would cascade-delete every stage row (foreign keys are on); 0004 says the same.
    op.drop_column("messages", "request_proto")


def downgrade() -> None:
    op.add_column("messages", sa.Column("request_proto", sa.LargeBinary(), nullable=True))
    connection = op.get_bind()
    query = sa.select(
        MESSAGES.c.id,
        MESSAGES.c.tenant_id,
        MESSAGES.c.conversation_id,
        MESSAGES.c.question,
        MESSAGES.c.request_config,
        MESSAGES.c.request_id,
    )
    for message_id, tenant_id, conversation_id, question, config, request_id in (
        row for rows in _batches(connection, query) for row in rows
    ):
        config = dict(config or {})
        if config.get(RESUMABLE) is not True:
            continue
        record = MessageRecord(
            id=message_id,
            tenant_id=tenant_id,
            conversation_id=conversation_id,
            question=question,
            request_config=config,
            status="",
            title=None,
            created_at=datetime.now(UTC),
            updated_at=datetime.now(UTC),
            request_id=request_id,
        )
        request = resume_request(record)
        assert request is not None  # (resumable)
        for key in (*caller_config(request), RESUMABLE):
            config.pop(key, None)
        connection.execute(
            sa.update(MESSAGES)
            .where(MESSAGES.c.id == message_id)
            .values(request_config=config, request_proto=request.SerializeToString(deterministic=True))
        )
