"""The verification cache's entries (model_cache): looked up by key, stored with the commits of the run or
evaluation that paid for them, purged on request (UsageService.PurgeCache)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, CursorResult, Engine, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import sessionmaker

from factcheck_gateway.verification_cache.tables import CacheEntry


@dataclass(frozen=True)
class CachedAnswer:
    payload: bytes
    model: str
    prompt_version: str
    created_at: datetime


class CacheEntries:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    def lookup(self, tenant_id: str, kind: str, keys: list[str], not_before: datetime) -> dict[str, CachedAnswer]:
        """The tenant's entries of `kind` among `keys` stored at or after `not_before`."""
        if not keys:
            return {}
        table = CacheEntry.__table__.c
        query = select(table.cache_key, table.payload, table.model, table.prompt_version, table.created_at).where(
            table.tenant_id == tenant_id,
            table.kind == kind,
            table.cache_key.in_(keys),
            table.created_at >= not_before,
        )
        with self._sessions() as session:
            return {
                row.cache_key: CachedAnswer(bytes(row.payload), row.model, row.prompt_version, row.created_at)
                for row in session.execute(query)
            }

    def purge(self, tenant_id: str, *, older_than: datetime | None = None) -> int:
        """Delete the tenant's cache entries (only those stored before `older_than`, when given)."""
        statement = delete(CacheEntry).where(CacheEntry.tenant_id == tenant_id)
        if older_than is not None:
            statement = statement.where(CacheEntry.created_at < older_than)
        with self._sessions.begin() as session:
            # (Session.execute is typed to return a Result; a DELETE's is a CursorResult)
            return cast(CursorResult, session.execute(statement)).rowcount or 0


def upsert_cache_entries(session: Connection, rows: list[dict[str, Any]]) -> None:
    """Store cache entries; a key stored before is replaced by the newer answer."""
    table = CacheEntry.__table__
    dialect = postgresql if session.dialect.name == "postgresql" else sqlite
    # One row per key (a run may pay twice for the same key: the last answer wins).
    unique = list({(row["tenant_id"], row["kind"], row["cache_key"]): row for row in rows}.values())
    statement = dialect.insert(table)
    statement = statement.on_conflict_do_update(
        index_elements=["tenant_id", "kind", "cache_key"],
        set_={
            "payload": statement.excluded.payload,
            "model": statement.excluded.model,
            "prompt_version": statement.excluded.prompt_version,
            "message_id": statement.excluded.message_id,
            "created_at": statement.excluded.created_at,
        },
    )
    session.execute(statement, unique)
