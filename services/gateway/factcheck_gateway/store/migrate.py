"""Bring the gateway's database schema up to date; called at every gateway start.

Alembic is configured in code (no alembic.ini at runtime). Concurrent starts are
serialised by the database itself: a PostgreSQL advisory lock, or SQLite's write
lock taken by BEGIN IMMEDIATE. The whole upgrade runs in that one transaction, so
the second process waits, then finds the schema at head and does nothing.
Within one process a plain lock is needed as well: Alembic's `context`/`op`
proxies are process-global, so two threads must never run it at once.
"""

from __future__ import annotations

import threading
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, text

from factcheck_gateway.store.engine import create_db_engine

MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"
# Arbitrary constant shared by every gateway process ("factche" in ASCII).
_PG_MIGRATION_LOCK_ID = 0x66616374636865
_IN_PROCESS_LOCK = threading.Lock()


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic config pointing at our migrations; `connection` is handed to env.py."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade_database(database_url: str) -> None:
    """Upgrade the schema to the newest revision; a no-op when it is already there."""
    engine = create_db_engine(database_url, immediate_transactions=True)
    try:
        with _IN_PROCESS_LOCK, engine.begin() as connection:
            _lock_for_migration(connection)
            command.upgrade(alembic_config(connection), "head")
    finally:
        engine.dispose()


def _lock_for_migration(connection: Connection) -> None:
    """On PostgreSQL, wait for any other migrating process; released at commit."""
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _PG_MIGRATION_LOCK_ID})
