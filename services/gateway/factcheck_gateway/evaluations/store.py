"""The evaluations' rows: one per evaluation, one per checker answer on an item, and their ledger rows.

Every answer is stored (with the ledger rows and cache entries it paid for) in one transaction the
moment it exists, so a cancelled or interrupted evaluation keeps everything it judged. While an
evaluation runs, the gateway working on it is its `owner` and every write renews `updated_at`;
a write that finds the evaluation no longer RUNNING under this owner (Cancel, a takeover) tells
the runner to stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, Engine, and_, delete, func, insert, or_, select, update
from sqlalchemy.orm import sessionmaker

from factcheck.evaluation.sets import LABELS
from factcheck_gateway.ledger.totals import UsageTotals
from factcheck_gateway.store.ledger_queries import LedgerStore, upsert_cache_entries
from factcheck_gateway.store.models import (
    STATUS_CANCELLED,
    STATUS_COMPLETE,
    STATUS_RUNNING,
    EvaluationItemRow,
    EvaluationRow,
    ModelCallRecord,
    utc_now,
)
from factcheck_gateway.store.paging import Listing, newest_first_page

Confusion = tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]


@dataclass(frozen=True)
class EvaluationRecord:
    id: str
    tenant_id: str
    status: str
    config: dict[str, Any]
    custom_items: dict[str, Any]
    total: int
    owner: str | None
    error_message: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ItemResult:
    """One checker's answer on one item (or its failed call)."""

    checker_model: str
    set_name: str
    item_id: str
    label: str
    verdict: str | None = None
    confidence: str | None = None
    unreadable: bool = False
    cached: bool = False
    failed: bool = False
    error: str | None = None
    latency_ms: int | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


@dataclass(frozen=True)
class MeasuredReliability:
    """What the weighted consensus needs from an evaluation: per checker model, its confusion counts
    pooled over every set (rows the label, columns the verdict, both in LABELS)."""

    evaluation_id: str
    confusions: dict[str, Confusion]


def _record(row: EvaluationRow) -> EvaluationRecord:
    return EvaluationRecord(
        id=row.id,
        tenant_id=row.tenant_id,
        status=row.status,
        config=dict(row.config),
        custom_items=dict(row.custom_items),
        total=row.total,
        owner=row.owner,
        error_message=row.error_message,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


_ITEM_FIELDS = tuple(ItemResult.__dataclass_fields__)


def _item(row: EvaluationItemRow) -> ItemResult:
    return ItemResult(**{name: getattr(row, name) for name in _ITEM_FIELDS})


class EvaluationStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._ledger = LedgerStore(engine)

    # --- evaluations --------------------------------------------------------------------------------

    def create(
        self,
        evaluation_id: str,
        tenant_id: str,
        owner: str,
        config: dict[str, Any],
        custom_items: dict[str, Any],
        total: int,
    ) -> None:
        now = utc_now()
        with self._sessions.begin() as session:
            session.add(
                EvaluationRow(
                    id=evaluation_id,
                    tenant_id=tenant_id,
                    status=STATUS_RUNNING,
                    config=config,
                    custom_items=custom_items,
                    total=total,
                    owner=owner,
                    created_at=now,
                    updated_at=now,
                )
            )

    def get(self, evaluation_id: str, tenant_id: str) -> EvaluationRecord | None:
        with self._sessions() as session:
            row = session.get(EvaluationRow, evaluation_id)
            return _record(row) if row is not None and row.tenant_id == tenant_id else None

    def list_evaluations(
        self, tenant_id: str, page_size: int, page_token: str | None
    ) -> tuple[list[EvaluationRecord], str | None]:
        """One tenant's evaluations, newest first (InvalidPageToken for a token it did not make for this listing)."""
        with self._sessions() as session:
            rows, next_token = newest_first_page(
                session,
                EvaluationRow,
                page_size,
                page_token,
                EvaluationRow.tenant_id == tenant_id,
                listing=Listing("ListEvaluations", tenant_id),
            )
            return [_record(row) for row in rows], next_token

    def items(self, evaluation_id: str) -> list[ItemResult]:
        with self._sessions() as session:
            rows = session.scalars(
                select(EvaluationItemRow).where(EvaluationItemRow.evaluation_id == evaluation_id)
            ).all()
            return [_item(row) for row in rows]

    def counts_done(self, evaluation_ids: Sequence[str]) -> dict[str, int]:
        """Answers stored (failed calls not counted) per evaluation."""
        if not evaluation_ids:
            return {}
        query = (
            select(EvaluationItemRow.evaluation_id, func.count())
            .where(EvaluationItemRow.evaluation_id.in_(evaluation_ids), EvaluationItemRow.failed.is_(False))
            .group_by(EvaluationItemRow.evaluation_id)
        )
        with self._sessions() as session:
            return {evaluation_id: count for evaluation_id, count in session.execute(query)}

    def usage(self, evaluation_ids: Sequence[str]) -> dict[str, UsageTotals]:
        """What each evaluation's model calls cost, from the ledger."""
        return self._ledger.evaluation_usage(list(evaluation_ids))

    # --- while it runs ------------------------------------------------------------------------------

    def save_item(
        self,
        evaluation_id: str,
        owner: str,
        item: ItemResult,
        ledger_rows: Sequence[dict[str, Any]],
        cache_rows: Sequence[dict[str, Any]],
    ) -> bool:
        """Store one answer with its ledger rows and cache entries (one transaction; an earlier failed
        answer on the item is replaced). Returns whether the evaluation is still this owner's to run."""
        now = utc_now()
        key = (
            EvaluationItemRow.evaluation_id == evaluation_id,
            EvaluationItemRow.checker_model == item.checker_model,
            EvaluationItemRow.set_name == item.set_name,
            EvaluationItemRow.item_id == item.item_id,
        )
        with self.engine.begin() as session:
            session.execute(delete(EvaluationItemRow).where(*key))
            values = {name: getattr(item, name) for name in _ITEM_FIELDS}
            session.execute(insert(EvaluationItemRow), [{**values, "evaluation_id": evaluation_id, "created_at": now}])
            if ledger_rows:
                rows = [
                    {**row, "evaluation_id": evaluation_id, "message_id": None, "created_at": now}
                    for row in ledger_rows
                ]
                session.execute(insert(ModelCallRecord), rows)
            if cache_rows:
                upsert_cache_entries(session, [{**row, "message_id": None, "created_at": now} for row in cache_rows])
            return self._renew(session, evaluation_id, owner, now)

    def record_calls(self, evaluation_id: str, ledger_rows: Sequence[dict[str, Any]]) -> None:
        """Ledger rows of calls that brought no answer (cut short, refused by the budget)."""
        now = utc_now()
        with self.engine.begin() as session:
            rows = [
                {**row, "evaluation_id": evaluation_id, "message_id": None, "created_at": now} for row in ledger_rows
            ]
            session.execute(insert(ModelCallRecord), rows)

    def heartbeat(self, evaluation_id: str, owner: str) -> bool:
        """Renew the evaluation's claim; False once it is no longer RUNNING under `owner`."""
        with self.engine.begin() as session:
            return self._renew(session, evaluation_id, owner, utc_now())

    @staticmethod
    def _renew(session, evaluation_id: str, owner: str, now: datetime) -> bool:
        result = session.execute(
            update(EvaluationRow)
            .where(
                EvaluationRow.id == evaluation_id, EvaluationRow.status == STATUS_RUNNING, EvaluationRow.owner == owner
            )
            .values(updated_at=now)
        )
        return cast(CursorResult, result).rowcount == 1

    def finish(self, evaluation_id: str, owner: str, status: str, error_message: str | None) -> bool:
        """End a RUNNING evaluation this owner runs; False when it was ended or taken over meanwhile."""
        return self._end(status, error_message, EvaluationRow.id == evaluation_id, EvaluationRow.owner == owner)

    def cancel(self, evaluation_id: str, tenant_id: str, reason: str) -> bool:
        """End a RUNNING evaluation as CANCELLED, whichever gateway runs it (it stops at its next write)."""
        return self._end(
            STATUS_CANCELLED, reason, EvaluationRow.id == evaluation_id, EvaluationRow.tenant_id == tenant_id
        )

    def _end(self, status: str, error_message: str | None, *where) -> bool:
        with self.engine.begin() as session:
            result = session.execute(
                update(EvaluationRow)
                .where(*where, EvaluationRow.status == STATUS_RUNNING)
                .values(status=status, error_message=error_message, owner=None, updated_at=utc_now())
            )
            return cast(CursorResult, result).rowcount == 1

    def claim(
        self, evaluation_id: str, tenant_id: str, owner: str, stale_before: datetime, config: dict[str, Any]
    ) -> bool:
        """Take a stopped evaluation (not COMPLETE; a RUNNING one only when its owner's heartbeat is older
        than `stale_before`) to resume it under `owner` with `config` (its budget may be new)."""
        with self.engine.begin() as session:
            result = session.execute(
                update(EvaluationRow)
                .where(
                    EvaluationRow.id == evaluation_id,
                    EvaluationRow.tenant_id == tenant_id,
                    EvaluationRow.status != STATUS_COMPLETE,
                    or_(EvaluationRow.status != STATUS_RUNNING, EvaluationRow.updated_at < stale_before),
                )
                .values(status=STATUS_RUNNING, owner=owner, error_message=None, config=config, updated_at=utc_now())
            )
            return cast(CursorResult, result).rowcount == 1

    # --- the weighted consensus ---------------------------------------------------------------------

    def newest_confusions(self, tenant_id: str, checker_models: Sequence[str]) -> MeasuredReliability | None:
        """The tenant's newest COMPLETE evaluation that measured every one of `checker_models`, with their
        confusion counts pooled over its sets (failed calls left out); None when there is none."""
        wanted = list(dict.fromkeys(checker_models))
        with self._sessions() as session:
            candidates = session.scalars(
                select(EvaluationRow)
                .where(EvaluationRow.tenant_id == tenant_id, EvaluationRow.status == STATUS_COMPLETE)
                .order_by(EvaluationRow.created_at.desc(), EvaluationRow.id.desc())
            )
            for row in candidates:
                if not set(wanted) <= set(row.config.get("checkerModels", [])):
                    continue
                counts = session.execute(
                    select(
                        EvaluationItemRow.checker_model,
                        EvaluationItemRow.label,
                        EvaluationItemRow.verdict,
                        func.count(),
                    )
                    .where(
                        and_(
                            EvaluationItemRow.evaluation_id == row.id,
                            EvaluationItemRow.failed.is_(False),
                            EvaluationItemRow.checker_model.in_(wanted),
                        )
                    )
                    .group_by(EvaluationItemRow.checker_model, EvaluationItemRow.label, EvaluationItemRow.verdict)
                ).all()
                matrices = {model: [[0, 0, 0], [0, 0, 0], [0, 0, 0]] for model in wanted}
                for model, label, verdict, count in counts:
                    if label in LABELS and verdict in LABELS:
                        matrices[model][LABELS.index(label)][LABELS.index(verdict)] += count
                confusions = {
                    model: cast(Confusion, tuple(tuple(line) for line in matrix)) for model, matrix in matrices.items()
                }
                return MeasuredReliability(row.id, confusions)
        return None
