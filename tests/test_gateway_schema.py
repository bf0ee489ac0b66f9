"""The gateway's tables live with their features; factcheck_gateway/schema.py gathers them for whatever needs
the whole schema, and the store stays free of them (docs/development.md, the gateway's floors)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine, inspect

from factcheck_gateway.store import upgrade_database


def _tables_after_importing(module: str) -> list[str]:
    """The tables on the gateway's metadata in a fresh interpreter that imports only `module`."""
    code = (
        f"import json, {module}\n"
        "from factcheck_gateway.store.models import Base\n"
        "print(json.dumps(sorted(Base.metadata.tables)))"
    )
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def test_the_schema_module_gathers_every_table_the_migrations_create(tmp_path: Path):
    url = f"sqlite:///{tmp_path / 'schema.db'}"
    upgrade_database(url)
    engine = create_engine(url)
    try:
        migrated = {
            name
            for name in inspect(engine).get_table_names()
            if name != "alembic_version" and not name.startswith("kb_passages_fts")  # the FTS5 index and its shadows
        }
    finally:
        engine.dispose()
    assert set(_tables_after_importing("factcheck_gateway.schema")) == migrated


def test_the_store_alone_declares_only_the_runs_tables():
    assert _tables_after_importing("factcheck_gateway.store") == [
        "deliberation_stages",
        "messages",
        "run_events",
        "server_keys",
    ]
