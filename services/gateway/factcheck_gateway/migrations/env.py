"""Alembic environment for the gateway's database.

Normally driven by `factcheck_gateway.store.migrate.upgrade_database`, which hands over
an open connection in `config.attributes["connection"]`; a `sqlalchemy.url` option is
used otherwise (e.g. `alembic -x` style runs from a hand-written alembic.ini).
"""

from __future__ import annotations

from alembic import context

# Every feature's tables (factcheck_gateway/schema.py gathers them).
from factcheck_gateway.schema import include_in_schema_comparison, metadata
from factcheck_gateway.store.engine import create_db_engine

target_metadata = metadata


def run_offline() -> None:
    context.configure(url=context.config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


def run_online(connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata, include_name=include_in_schema_comparison)
    with context.begin_transaction():
        context.run_migrations()


def main() -> None:
    if context.is_offline_mode():
        run_offline()
        return
    connection = context.config.attributes.get("connection")
    if connection is not None:
        run_online(connection)
        return
    url = context.config.get_main_option("sqlalchemy.url")
    assert url is not None  # (without a connection, the alembic.ini names the database)
    engine = create_db_engine(url)
    try:
        with engine.begin() as connection:
            run_online(connection)
    finally:
        engine.dispose()


main()
