"""Shared fixtures.

`database_url` gives each test its own migrated database on SQLite (a temp file) and
on PostgreSQL (a fresh schema in database `test`). PostgreSQL is required: if it is
unreachable the PostgreSQL variants fail rather than skip, since CI guarantees it.
"""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import psycopg
import pytest
from psycopg import sql

from services.gateway.store import upgrade_database

# Server-level URL (libpq form) of the test PostgreSQL; override for other setups.
POSTGRES_URL = os.environ.get("FACTCHECK_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
DATABASE_BACKENDS = ["sqlite", "postgresql"]


@contextmanager
def fresh_database(backend: str, tmp_path: Path) -> Iterator[str]:
    """An empty database of `backend`, as a SQLAlchemy URL, removed afterwards."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'factcheck.db'}"
        return
    with _postgres_schema() as url:
        yield url


@contextmanager
def _postgres_schema() -> Iterator[str]:
    schema = f"test_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(POSTGRES_URL, autocommit=True, connect_timeout=5) as admin:
        admin.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
        try:
            base = POSTGRES_URL.replace("postgresql://", "postgresql+psycopg://", 1)
            joiner = "&" if "?" in base else "?"
            yield f"{base}{joiner}options=-csearch_path%3D{schema}"
        finally:
            admin.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))


@pytest.fixture(params=DATABASE_BACKENDS)
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with no tables yet, for migration tests."""
    with fresh_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture(params=DATABASE_BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A migrated database per backend; use `indirect=True` parametrization to pick one."""
    with fresh_database(request.param, tmp_path) as url:
        upgrade_database(url)
        yield url
