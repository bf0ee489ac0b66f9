"""Queries of the model-call ledger (model_calls).

A run's ledger rows are written with its commits (`StageStore.commit_runs`, through `LEDGER_WRITES`, which the
run's commits carry: runs/run.py), an evaluation's with its answers (evaluations/store.py); this module writes
them and sums and reads them. Every read is tenant-scoped except the per-run totals, which the caller asks
for runs it already checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, case, func, insert, literal, select
from sqlalchemy.orm import sessionmaker

from factcheck_gateway.ledger.tables import ModelCallRecord
from factcheck_gateway.ledger.totals import OUTCOME_CACHE_HIT, OUTCOME_OK, UsageTotals
from factcheck_gateway.store.models import utc_now

GROUP_KEYS = ("model", "stage", "mode", "day")

_CALLS = ModelCallRecord.__table__.c
# Built once: the gateway stores ledger rows with nearly every commit.
INSERT_MODEL_CALLS = insert(ModelCallRecord.__table__)


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


def record_model_calls(engine: Engine, message_id: str, rows: Sequence[dict[str, Any]]) -> None:
    """Ledger rows of a run outside its fenced commits: the calls a gateway paid for after it lost
    the run (its commits are refused, its spending happened)."""
    now = utc_now()
    with engine.begin() as session:
        session.execute(INSERT_MODEL_CALLS, [{**row, "message_id": message_id, "created_at": now} for row in rows])
