"""The gateway's whole schema: the store's tables and every feature's, on one metadata.

Each feature declares its tables in its own package (store/models.py keeps the run's); whatever needs all of
them (the Alembic environment, creating a schema, the test comparing the models with the migrations)
imports this module, which imports them all. The store itself never imports a feature.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from factcheck_gateway.claims import tables as claims_tables
from factcheck_gateway.evaluations import tables as evaluations_tables
from factcheck_gateway.knowledge import tables as knowledge_tables
from factcheck_gateway.ledger import tables as ledger_tables
from factcheck_gateway.reviews import tables as reviews_tables
from factcheck_gateway.store import models as store_tables
from factcheck_gateway.verification_cache import tables as verification_cache_tables

# Every module whose tables are on the metadata (the imports above register them).
TABLE_MODULES = (
    store_tables,
    claims_tables,
    evaluations_tables,
    knowledge_tables,
    ledger_tables,
    reviews_tables,
    verification_cache_tables,
)

Base = store_tables.Base
metadata = Base.metadata


def include_in_schema_comparison(name: str | None, type_: str, parent_names: Mapping[Any, Any]) -> bool:
    """Alembic `include_name` hook: what the models declare (the knowledge store's hand-written full-text
    index is not part of them: knowledge/tables.py)."""
    return knowledge_tables.include_in_schema_comparison(name, type_, parent_names)
