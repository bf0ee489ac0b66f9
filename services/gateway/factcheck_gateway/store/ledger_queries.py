"""Queries of the model-call ledger (model_calls) and of the verification cache (model_cache).

Ledger rows and cache entries are written with the run's commits (`StageStore.commit_runs`);
this module sums and reads them. Every read is tenant-scoped except the per-run totals, which
the caller asks for runs it already checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Connection, CursorResult, Engine, case, delete, func, literal, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import sessionmaker

from factcheck_gateway.ledger.totals import OUTCOME_CACHE_HIT, OUTCOME_OK, UsageTotals
from factcheck_gateway.store.models import CacheEntry, ModelCallRecord

GROUP_KEYS = ("model", "stage", "mode", "day")

_CALLS = ModelCallRecord.__table__.c


def _sums() -> list:
    """The columns every usage query sums, cache hits apart (they are rows without a model call)."""
    is_call = _CALLS.outcome != OUTCOME_CACHE_HIT
    return [
        func.coalesce(func.sum(case((is_call, _CALLS.prompt_tokens), else_=0)), 0).label("prompt_tokens"),
        func.coalesce(func.sum(case((is_call, _CALLS.completion_tokens), else_=0)), 0).label("completion_tokens"),
        func.coalesce(func.sum(case((is_call, _CALLS.cached_tokens), else_=0)), 0).label("cached_tokens"),
        func.coalesce(func.sum(case((is_call, _CALLS.total_tokens), else_=0)), 0).label("total_tokens"),
        func.coalesce(func.sum(_CALLS.cost_usd), 0.0).label("cost_usd"),
        func.coalesce(func.sum(case((is_call, 1), else_=0)), 0).label("calls"),
        func.coalesce(func.sum(case((is_call & (_CALLS.outcome != OUTCOME_OK), 1), else_=0)), 0).label("failed_calls"),
        func.coalesce(func.sum(case((_CALLS.outcome == OUTCOME_CACHE_HIT, 1), else_=0)), 0).label("cache_hits"),
        func.coalesce(func.sum(case((is_call & _CALLS.usage_estimated, 1), else_=0)), 0).label("estimated_calls"),
    ]


def _totals(row: Any) -> UsageTotals:
    return UsageTotals(
        prompt_tokens=int(row.prompt_tokens),
        completion_tokens=int(row.completion_tokens),
        cached_tokens=int(row.cached_tokens),
        total_tokens=int(row.total_tokens),
        cost_usd=float(row.cost_usd),
        calls=int(row.calls),
        failed_calls=int(row.failed_calls),
        cache_hits=int(row.cache_hits),
        estimated_calls=int(row.estimated_calls),
    )


@dataclass(frozen=True)
class UsageGroup:
    keys: dict[str, str]  # the group's values of the keys asked for
    totals: UsageTotals
    runs: int


@dataclass(frozen=True)
class CachedAnswer:
    payload: bytes
    model: str
    prompt_version: str
    created_at: datetime


class LedgerStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    # --- the ledger -----------------------------------------------------------------------------------

    def run_usage(self, message_ids: list[str]) -> dict[str, UsageTotals]:
        """Per-run totals (runs without ledger rows are absent)."""
        if not message_ids:
            return {}
        query = (
            select(_CALLS.message_id, *_sums()).where(_CALLS.message_id.in_(message_ids)).group_by(_CALLS.message_id)
        )
        with self._sessions() as session:
            return {row.message_id: _totals(row) for row in session.execute(query)}

    def evaluation_usage(self, evaluation_ids: list[str]) -> dict[str, UsageTotals]:
        """Per-evaluation totals (evaluations without ledger rows are absent)."""
        if not evaluation_ids:
            return {}
        query = (
            select(_CALLS.evaluation_id, *_sums())
            .where(_CALLS.evaluation_id.in_(evaluation_ids))
            .group_by(_CALLS.evaluation_id)
        )
        with self._sessions() as session:
            return {row.evaluation_id: _totals(row) for row in session.execute(query)}

    def run_calls(self, message_id: str) -> list[dict[str, Any]]:
        """A run's ledger rows, oldest first."""
        query = select(ModelCallRecord.__table__).where(_CALLS.message_id == message_id).order_by(_CALLS.id)
        with self._sessions() as session:
            return [dict(row._mapping) for row in session.execute(query)]

    def usage(
        self, tenant_id: str, start: datetime, end: datetime, group_by: tuple[str, ...] = ()
    ) -> tuple[list[UsageGroup], UsageTotals]:
        """One tenant's calls in [start, end), grouped by `group_by` (of GROUP_KEYS), and their total."""
        keys = [self._key_column(key).label(key) for key in group_by]
        where = [_CALLS.tenant_id == tenant_id, _CALLS.created_at >= start, _CALLS.created_at < end]
        runs = func.count(func.distinct(_CALLS.message_id)).label("runs")
        groups_query = select(*keys, *_sums(), runs).where(*where)
        if keys:
            groups_query = groups_query.group_by(*keys).order_by(*keys)
        total_query = select(*_sums()).where(*where)
        with self._sessions() as session:
            groups = [
                UsageGroup({key: str(getattr(row, key) or "") for key in group_by}, _totals(row), int(row.runs))
                for row in session.execute(groups_query)
                if keys or row.runs
            ]
            total = _totals(session.execute(total_query).one())
        return groups, total

    def _key_column(self, key: str):
        if key == "day":
            if self.engine.dialect.name == "postgresql":
                return func.to_char(func.timezone("UTC", _CALLS.created_at), literal("YYYY-MM-DD"))
            return func.substr(_CALLS.created_at, 1, 10)  # SQLite stores UTC as "YYYY-MM-DD HH:MM:SS..."
        return getattr(_CALLS, key)

    # --- the verification cache ------------------------------------------------------------------------

    def cache_lookup(self, tenant_id: str, kind: str, keys: list[str], not_before: datetime) -> dict[str, CachedAnswer]:
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

    def cache_purge(self, tenant_id: str, *, older_than: datetime | None = None) -> int:
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
