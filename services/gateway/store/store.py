"""The gateway's stage store: messages and their deliberation_stages rows.

Synchronous SQLAlchemy on purpose: the gateway calls it through `asyncio.to_thread`,
which keeps one simple code path for SQLite and PostgreSQL.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Engine, and_, create_engine, event, or_, select
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import StaticPool

from services.gateway.store.models import STATUS_RUNNING, STATUSES, DeliberationStage, Message, utc_now

SQLITE_BUSY_TIMEOUT_MS = 5000
# A migrating process waits for another one's whole upgrade (several DDL statements, slow
# on a loaded machine), not just for one write: it gets far longer before "database is locked".
SQLITE_MIGRATION_BUSY_TIMEOUT_MS = 60_000
PG_CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True)
class MessageRecord:
    id: str
    conversation_id: str
    question: str
    request_config: dict[str, Any]
    status: str
    title: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class StageRecord:
    id: str
    message_id: str
    stage_type: str
    stage_order: int
    model: str | None
    role: str
    content: str | None
    parsed_data: dict[str, Any]
    response_time_ms: int | None
    created_at: datetime


# --- engine -------------------------------------------------------------------------------------------


def create_db_engine(database_url: str, *, immediate_transactions: bool = False) -> Engine:
    """An engine tuned per backend: SQLite pragmas, or PostgreSQL pre-ping and a connect timeout.

    `immediate_transactions` (SQLite only) makes every transaction BEGIN IMMEDIATE, so
    a writer takes the lock up front; migrations use it to serialise concurrent starts.
    """
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, immediate_transactions)
    connect_args = {}
    if url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query:
        connect_args["connect_timeout"] = PG_CONNECT_TIMEOUT_S
    return create_engine(url, pool_pre_ping=True, connect_args=connect_args)


def _sqlite_engine(url: URL, immediate_transactions: bool) -> Engine:
    in_memory = url.database in (None, "", ":memory:")
    options: dict[str, Any] = {}
    if in_memory:  # One shared connection, or every pooled connection would see its own empty database.
        options = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
    engine = create_engine(url, **options)

    @event.listens_for(engine, "connect")
    def _set_pragmas(dbapi_connection, _record) -> None:
        if immediate_transactions:
            dbapi_connection.isolation_level = None  # We issue BEGIN ourselves (see below).
        cursor = dbapi_connection.cursor()
        busy_timeout = SQLITE_MIGRATION_BUSY_TIMEOUT_MS if immediate_transactions else SQLITE_BUSY_TIMEOUT_MS
        cursor.execute(f"PRAGMA busy_timeout={busy_timeout}")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    if immediate_transactions:

        @event.listens_for(engine, "begin")
        def _begin_immediate(connection) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


# --- text the databases accept --------------------------------------------------------------------------

# PostgreSQL text and JSONB cannot hold NUL; untrusted content and model output can.
# U+FFFD is one character too, so every offset computed on the original text stays valid.
_NUL, _REPLACEMENT = "\x00", "\ufffd"


def storable(value: Any) -> Any:
    """The value with NUL characters replaced in every string, however deeply nested."""
    if isinstance(value, str):
        return value.replace(_NUL, _REPLACEMENT) if _NUL in value else value
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    return value


# --- page tokens --------------------------------------------------------------------------------------


def encode_page_token(created_at: datetime, message_id: str) -> str:
    """Opaque, url-safe position after which the next page starts."""
    raw = json.dumps([created_at.isoformat(), message_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


class InvalidPageToken(ValueError):
    """A page token this store did not make (or could not have made)."""


MAX_PAGE_TOKEN_CHARS = 1_000
INVALID_PAGE_TOKEN = "invalid page token: pass the next_page_token of a previous page"


def decode_page_token(token: str) -> tuple[datetime, str]:
    """(created_at in UTC, row id) of a token; InvalidPageToken for anything else, whatever its bytes."""
    if len(token) > MAX_PAGE_TOKEN_CHARS:
        raise InvalidPageToken(INVALID_PAGE_TOKEN)
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        created, row_id = json.loads(raw)
        parsed = datetime.fromisoformat(created)
        # In UTC, as stored; OverflowError when the offset moves it past year 1 or 9999.
        created_at = parsed.astimezone(timezone.utc) if parsed.tzinfo is not None else None
    except (binascii.Error, UnicodeDecodeError, ValueError, TypeError, RecursionError, OverflowError) as exc:
        raise InvalidPageToken(INVALID_PAGE_TOKEN) from exc
    if created_at is None or not isinstance(row_id, str) or not 0 < len(row_id) <= 255 or "\x00" in row_id:
        raise InvalidPageToken(INVALID_PAGE_TOKEN)
    return created_at, row_id


def newest_first_page(session: Session, model: Any, page_size: int, page_token: str | None) -> tuple[list, str | None]:
    """One page of `model` rows (which have created_at and id), newest first, keyset-paged on (created_at, id)."""
    if page_size < 1:
        raise ValueError(f"page_size must be at least 1, got {page_size}")
    query = select(model).order_by(model.created_at.desc(), model.id.desc()).limit(page_size + 1)
    if page_token:
        created_at, row_id = decode_page_token(page_token)
        query = query.where(or_(model.created_at < created_at, and_(model.created_at == created_at, model.id < row_id)))
    rows = session.scalars(query).all()
    page = list(rows[:page_size])
    next_token = encode_page_token(page[-1].created_at, page[-1].id) if len(rows) > page_size else None
    return page, next_token


# --- the store ----------------------------------------------------------------------------------------


class StageStore:
    """Reads and writes messages and their stage rows. Every write commits before returning."""

    def __init__(self, database_url: str) -> None:
        self.engine = create_db_engine(database_url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def close(self) -> None:
        self.engine.dispose()

    # --- messages -----------------------------------------------------------------------------------

    def create_message(self, message_id: str, conversation_id: str, question: str, request_config: dict) -> None:
        now = utc_now()
        row = Message(
            id=message_id,
            conversation_id=storable(conversation_id),
            question=storable(question),
            request_config=storable(request_config),
            status=STATUS_RUNNING,
            created_at=now,
            updated_at=now,
        )
        try:
            with self._sessions.begin() as session:
                session.add(row)
        except IntegrityError as exc:
            raise ValueError(f"message {message_id!r} already exists") from exc

    def set_status(self, message_id: str, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}; expected one of {', '.join(STATUSES)}")
        self._update_message(message_id, status=status)

    def set_title(self, message_id: str, title: str) -> None:
        self._update_message(message_id, title=storable(title))

    def _update_message(self, message_id: str, **values: Any) -> None:
        with self._sessions.begin() as session:
            row = session.get(Message, message_id)
            if row is None:
                raise LookupError(f"no message {message_id!r}")
            for name, value in values.items():
                setattr(row, name, value)
            row.updated_at = utc_now()

    def get_message(self, message_id: str) -> MessageRecord | None:
        with self._sessions() as session:
            row = session.get(Message, message_id)
            return _message_record(row) if row is not None else None

    def list_messages(self, page_size: int, page_token: str | None) -> tuple[list[MessageRecord], str | None]:
        """Newest first, keyset-paged on (created_at, id) so pages stay stable while rows are added."""
        with self._sessions() as session:
            rows, next_token = newest_first_page(session, Message, page_size, page_token)
            return [_message_record(row) for row in rows], next_token

    # --- stages -------------------------------------------------------------------------------------

    def save_stage(
        self,
        message_id: str,
        stage_type: str,
        stage_order: int,
        model: str | None,
        role: str,
        content: str | None,
        parsed_data: dict[str, Any],
        response_time_ms: int | None,
    ) -> str:
        """Store one completed stage and return its id; saving the same stage again returns the first row's id."""
        existing = self._stage_id(message_id, stage_type)
        if existing is not None:
            return existing
        row = DeliberationStage(
            id=str(uuid.uuid4()),
            message_id=message_id,
            stage_type=stage_type,
            stage_order=stage_order,
            model=storable(model),
            role=role,
            content=storable(content),
            parsed_data=storable(parsed_data),
            response_time_ms=response_time_ms,
            created_at=utc_now(),
        )
        try:
            with self._sessions.begin() as session:
                session.add(row)
        except IntegrityError:
            # Lost a race with a concurrent save of the same stage: theirs is the row.
            # Anything else (e.g. an unknown message id) finds no row and re-raises.
            existing = self._stage_id(message_id, stage_type)
            if existing is None:
                raise
            return existing
        return row.id

    def _stage_id(self, message_id: str, stage_type: str) -> str | None:
        query = select(DeliberationStage.id).where(
            DeliberationStage.message_id == message_id, DeliberationStage.stage_type == stage_type
        )
        with self._sessions() as session:
            return session.scalar(query)

    def get_stages(self, message_id: str) -> list[StageRecord]:
        query = (
            select(DeliberationStage)
            .where(DeliberationStage.message_id == message_id)
            .order_by(DeliberationStage.stage_order, DeliberationStage.created_at)
        )
        with self._sessions() as session:
            return [_stage_record(row) for row in session.scalars(query)]


def _message_record(row: Message) -> MessageRecord:
    return MessageRecord(
        id=row.id,
        conversation_id=row.conversation_id,
        question=row.question,
        request_config=dict(row.request_config or {}),
        status=row.status,
        title=row.title,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _stage_record(row: DeliberationStage) -> StageRecord:
    return StageRecord(
        id=row.id,
        message_id=row.message_id,
        stage_type=row.stage_type,
        stage_order=row.stage_order,
        model=row.model,
        role=row.role,
        content=row.content,
        parsed_data=dict(row.parsed_data or {}),
        response_time_ms=row.response_time_ms,
        created_at=row.created_at,
    )
