"""The database engine, tuned per backend: SQLite's pragmas (WAL, busy timeout, foreign keys), PostgreSQL's
connection recycling and connect timeout."""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import StaticPool

SQLITE_BUSY_TIMEOUT_MS = 5000
# A migrating process waits for another one's whole upgrade (several DDL statements, slow
# on a loaded machine), not just for one write: it gets far longer before "database is locked".
SQLITE_MIGRATION_BUSY_TIMEOUT_MS = 60_000
PG_CONNECT_TIMEOUT_S = 10
PG_POOL_RECYCLE_S = 300


def create_db_engine(database_url: str, *, immediate_transactions: bool = False) -> Engine:
    """An engine tuned per backend: SQLite pragmas, or PostgreSQL connection recycling and a connect timeout.

    No pre-ping (a `SELECT 1` before every checkout, ~16 per run): connections are recycled
    after PG_POOL_RECYCLE_S instead, and a write that meets a connection the server dropped
    fails like any outage, and is retried (runs) or answered UNAVAILABLE (reads).

    `immediate_transactions` (SQLite only) makes every transaction BEGIN IMMEDIATE, so
    a writer takes the lock up front; migrations use it to serialise concurrent starts.
    """
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(url, immediate_transactions)
    connect_args = {}
    if url.get_backend_name() == "postgresql" and "connect_timeout" not in url.query:
        connect_args["connect_timeout"] = PG_CONNECT_TIMEOUT_S
    return create_engine(url, pool_recycle=PG_POOL_RECYCLE_S, connect_args=connect_args)


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
        _use_wal(cursor, busy_timeout / 1000)
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    if immediate_transactions:

        @event.listens_for(engine, "begin")
        def _begin_immediate(connection) -> None:
            connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _use_wal(cursor: Any, patience_s: float) -> None:
    """Switch the database file to WAL (a setting the file keeps). Several processes opening a new
    database at once race for that switch, and SQLite answers the losers "database is locked" at
    once, without its busy handler: try again until the winner is done (or `patience_s` passes)."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
