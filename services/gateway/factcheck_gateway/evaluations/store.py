"""The evaluations' rows: one per evaluation, one per checker answer on an item, its events, and their
ledger rows.

Every answer is stored (with the ledger rows and cache entries it paid for, and its progress event) in
one transaction the moment it exists, so a cancelled or interrupted evaluation keeps everything it
judged. While an evaluation runs, the gateway working on it is its `owner` and every write renews
`updated_at`; a write that finds the evaluation no longer RUNNING under this owner (Cancel, a takeover)
tells the runner to stop. Such a late answer is still stored (it was paid for), but not its event.

Events get their `seq` here, from evaluations.last_seq in the transaction that stores them, so the
seqs of one evaluation are gap-free across every gateway and attempt; on PostgreSQL each commit
notifies the gateways' watchers (the runs' channel: runs/watch.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, Engine, delete, func, insert, or_, select, text, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import sessionmaker

from factcheck.v1 import evaluation_pb2
from factcheck_gateway.evaluations.tables import (
    EvaluationEventRow,
    EvaluationItemRow,
    EvaluationRow,
    EvaluationThresholdRow,
)
from factcheck_gateway.ledger.queries import LedgerStore
from factcheck_gateway.ledger.tables import ModelCallRecord
from factcheck_gateway.ledger.totals import UsageTotals
from factcheck_gateway.store.models import STATUS_CANCELLED, STATUS_COMPLETE, STATUS_RUNNING, utc_now
from factcheck_gateway.store.paging import Listing, newest_first_page
from factcheck_gateway.store.records import StoredEvent
from factcheck_gateway.store.stage_store import EVENTS_CHANNEL
from factcheck_gateway.verification_cache.entries import upsert_cache_entries

# Builds an evaluation's final event once its status is known (the `finished` event: the whole evaluation).
FinalEvent = Callable[[], evaluation_pb2.EvaluationEvent]


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
    last_seq: int = 0


@dataclass(frozen=True)
class ItemResult:
    """One checker's answer on one item (or its failed call), as stored."""

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
    cached_tokens: int = 0
    cost_usd: float = 0.0
    # The checker's evidence text (an unreadable answer: the start of what it answered), and its correction.
    answer: str | None = None
    correction: str | None = None
    # A binary checker's P(supported) of the claim when the threshold decided its verdict, and the threshold it
    # was read against (None for other checkers): what a threshold is fitted on.
    support_probability: float | None = None
    support_threshold: float | None = None

    @property
    def correct(self) -> bool:
        return not self.failed and not self.unreadable and self.verdict == self.label


@dataclass(frozen=True)
class FittedThreshold:
    """A checker's threshold fitted on an evaluation's set (`threshold` None: none could be, `error` says why)."""

    checker_model: str
    set_name: str
    threshold: float | None
    criterion: str
    balanced_accuracy: float
    evaluated_threshold: float | None
    evaluated_balanced_accuracy: float
    items: int
    verified_items: int
    fixed_items: int
    candidates: int
    error: str | None = None


@dataclass(frozen=True)
class StoredAnswer:
    """An answer as ListEvaluationItems pages them: the answer, and when it was stored."""

    result: ItemResult
    created_at: datetime


@dataclass(frozen=True)
class ItemFilter:
    """Which answers ListEvaluationItems lists (every field set must hold)."""

    checker_model: str | None = None
    set_name: str | None = None
    label: str | None = None
    wrong_only: bool = False
    failed_only: bool = False

    def conditions(self) -> list:
        item = EvaluationItemRow
        found: list = []
        if self.checker_model is not None:
            found.append(item.checker_model == self.checker_model)
        if self.set_name is not None:
            found.append(item.set_name == self.set_name)
        if self.label is not None:
            found.append(item.label == self.label)
        if self.wrong_only:
            found += [item.failed.is_(False), or_(item.unreadable.is_(True), item.verdict != item.label)]
        if self.failed_only:
            found.append(item.failed.is_(True))
        return found


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
        last_seq=row.last_seq,
    )


_ITEM_FIELDS = tuple(field.name for field in fields(ItemResult))
_THRESHOLD_FIELDS = tuple(field.name for field in fields(FittedThreshold))


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
                    last_seq=0,
                )
            )

    def get(self, evaluation_id: str, tenant_id: str | None) -> EvaluationRecord | None:
        """The evaluation, if it is `tenant_id`'s (None: whoever's it is)."""
        with self._sessions() as session:
            row = session.get(EvaluationRow, evaluation_id)
            if row is None or (tenant_id is not None and row.tenant_id != tenant_id):
                return None
            return _record(row)

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

    def page_items(
        self, evaluation_id: str, tenant_id: str, where: ItemFilter, page_size: int, page_token: str | None
    ) -> tuple[list[StoredAnswer], str | None]:
        """One page of an evaluation's answers that pass `where`, newest first (InvalidPageToken for a
        token not made for this evaluation, tenant and filters)."""
        with self._sessions() as session:
            rows, next_token = newest_first_page(
                session,
                EvaluationItemRow,
                page_size,
                page_token,
                EvaluationItemRow.evaluation_id == evaluation_id,
                *where.conditions(),
                listing=Listing("ListEvaluationItems", tenant_id, {"evaluation_id": evaluation_id, **asdict(where)}),
            )
            return [StoredAnswer(_item(row), row.created_at) for row in rows], next_token

    def answer_counts(
        self, evaluation_ids: Sequence[str]
    ) -> dict[str, list[tuple[str, str, str, str | None, bool, bool, int]]]:
        """Per evaluation, its answers counted by (checker, set, label, verdict, unreadable, failed): what
        a headline's balanced accuracy needs, without reading every answer."""
        if not evaluation_ids:
            return {}
        item = EvaluationItemRow
        keys = (
            item.evaluation_id,
            item.checker_model,
            item.set_name,
            item.label,
            item.verdict,
            item.unreadable,
            item.failed,
        )
        query = select(*keys, func.count()).where(item.evaluation_id.in_(evaluation_ids)).group_by(*keys)
        counts: dict[str, list] = {evaluation_id: [] for evaluation_id in evaluation_ids}
        with self._sessions() as session:
            for evaluation_id, *row in session.execute(query):
                counts[evaluation_id].append(tuple(row))
        return counts

    def thresholds(self, evaluation_ids: Sequence[str]) -> dict[str, list[FittedThreshold]]:
        """Each evaluation's fitted thresholds (none before it is COMPLETE, or when it fitted none)."""
        found: dict[str, list[FittedThreshold]] = {evaluation_id: [] for evaluation_id in evaluation_ids}
        if not evaluation_ids:
            return found
        query = select(EvaluationThresholdRow).where(EvaluationThresholdRow.evaluation_id.in_(evaluation_ids))
        with self._sessions() as session:
            for row in session.scalars(query):
                found[row.evaluation_id].append(
                    FittedThreshold(**{name: getattr(row, name) for name in _THRESHOLD_FIELDS})
                )
        return found

    def usage(self, evaluation_ids: Sequence[str]) -> dict[str, UsageTotals]:
        """What each evaluation's model calls cost, from the ledger."""
        return self._ledger.evaluation_usage(list(evaluation_ids))

    # --- events -------------------------------------------------------------------------------------

    def events_after(self, evaluation_id: str, after_seq: int, limit: int = 1000) -> list[StoredEvent]:
        query = (
            select(EvaluationEventRow.seq, EvaluationEventRow.event_type, EvaluationEventRow.payload)
            .where(EvaluationEventRow.evaluation_id == evaluation_id, EvaluationEventRow.seq > after_seq)
            .order_by(EvaluationEventRow.seq)
            .limit(limit)
        )
        with self._sessions() as session:
            return [StoredEvent(row.seq, row.event_type, bytes(row.payload)) for row in session.execute(query)]

    def append_event(self, evaluation_id: str, owner: str, event: evaluation_pb2.EvaluationEvent) -> bool:
        """Store an event of a running evaluation this owner runs (its seq set here); False, storing
        nothing, once the evaluation is no longer this owner's."""
        with self.engine.begin() as session:
            return self._append(session, evaluation_id, event, *_owned_by(owner)) is not None

    @staticmethod
    def _append(session: Connection, evaluation_id: str, event: evaluation_pb2.EvaluationEvent, *where) -> int | None:
        """Give `event` the evaluation's next seq and store it, if the evaluation meets `where` (which
        also renews its heartbeat); its seq, or None."""
        now = utc_now()
        result = session.execute(
            update(EvaluationRow)
            .where(EvaluationRow.id == evaluation_id, *where)
            .values(last_seq=EvaluationRow.last_seq + 1, updated_at=now)
        )
        if cast(CursorResult, result).rowcount != 1:
            return None
        seq = int(session.scalar(select(EvaluationRow.last_seq).where(EvaluationRow.id == evaluation_id)) or 0)
        event.seq = seq
        if event.WhichOneof("event") == "finished":
            event.finished.last_seq = seq
        session.execute(
            insert(EvaluationEventRow),
            [
                {
                    "evaluation_id": evaluation_id,
                    "seq": seq,
                    "event_type": event.WhichOneof("event") or "",
                    "payload": event.SerializeToString(),
                    "created_at": now,
                }
            ],
        )
        if session.dialect.name == "postgresql":  # wakes watchers on every gateway once this commits
            session.execute(text("SELECT pg_notify(:channel, :id)"), {"channel": EVENTS_CHANNEL, "id": evaluation_id})
        return seq

    # --- while it runs ------------------------------------------------------------------------------

    def save_item(
        self,
        evaluation_id: str,
        owner: str,
        item: ItemResult,
        ledger_rows: Sequence[dict[str, Any]],
        cache_rows: Sequence[dict[str, Any]],
        event: evaluation_pb2.EvaluationEvent | None = None,
    ) -> bool:
        """Store one answer with its ledger rows, cache entries and progress event (one transaction; an
        earlier failed answer on the item is replaced). Returns whether the evaluation is still this
        owner's to run (if not, the answer and its rows are stored all the same, its event is not)."""
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
            row = {**values, "id": str(uuid.uuid4()), "evaluation_id": evaluation_id, "created_at": now}
            session.execute(insert(EvaluationItemRow), [row])
            self._insert_calls(session, evaluation_id, ledger_rows, now)
            if cache_rows:
                upsert_cache_entries(session, [{**row, "message_id": None, "created_at": now} for row in cache_rows])
            if event is not None:
                return self._append(session, evaluation_id, event, *_owned_by(owner)) is not None
            return self._renew(session, evaluation_id, owner, now)

    def record_calls(self, evaluation_id: str, ledger_rows: Sequence[dict[str, Any]]) -> None:
        """Ledger rows of calls that brought no answer (cut short, refused by the budget)."""
        with self.engine.begin() as session:
            self._insert_calls(session, evaluation_id, ledger_rows, utc_now())

    @staticmethod
    def _insert_calls(session: Connection, evaluation_id: str, ledger_rows: Sequence[dict[str, Any]], now) -> None:
        if ledger_rows:
            rows = [
                {**row, "evaluation_id": evaluation_id, "message_id": None, "created_at": now} for row in ledger_rows
            ]
            session.execute(insert(ModelCallRecord), rows)

    def save_thresholds(self, evaluation_id: str, owner: str, fitted: Sequence[FittedThreshold]) -> bool:
        """Store the thresholds fitted on a RUNNING evaluation this owner runs (before it is finished), replacing
        any an earlier attempt stored; False, storing nothing, once it is no longer this owner's."""
        now = utc_now()
        with self.engine.begin() as session:
            if not self._renew(session, evaluation_id, owner, now):
                return False
            session.execute(delete(EvaluationThresholdRow).where(EvaluationThresholdRow.evaluation_id == evaluation_id))
            if fitted:
                rows = [
                    {**{name: getattr(fit, name) for name in _THRESHOLD_FIELDS}, "evaluation_id": evaluation_id}
                    for fit in fitted
                ]
                session.execute(insert(EvaluationThresholdRow), [{**row, "created_at": now} for row in rows])
            return True

    def heartbeat(self, evaluation_id: str, owner: str) -> bool:
        """Renew the evaluation's claim; False once it is no longer RUNNING under `owner`."""
        with self.engine.begin() as session:
            return self._renew(session, evaluation_id, owner, utc_now())

    def still_owned(self, evaluation_id: str, owner: str) -> bool:
        """Whether the evaluation is still RUNNING under `owner` (a read: nothing is renewed)."""
        with self._sessions() as session:
            row = session.get(EvaluationRow, evaluation_id)
            return row is not None and row.status == STATUS_RUNNING and row.owner == owner

    @staticmethod
    def _renew(session: Connection, evaluation_id: str, owner: str, now: datetime) -> bool:
        result = session.execute(
            update(EvaluationRow).where(EvaluationRow.id == evaluation_id, *_owned_by(owner)).values(updated_at=now)
        )
        return cast(CursorResult, result).rowcount == 1

    # --- ending -------------------------------------------------------------------------------------

    def finish(self, evaluation_id: str, owner: str, status: str, error_message: str | None, final: FinalEvent) -> bool:
        """End a RUNNING evaluation this owner runs, with its final event; False when it was ended or
        taken over meanwhile (nothing is stored then)."""
        return self._end(
            evaluation_id, status, error_message, final, EvaluationRow.id == evaluation_id, EvaluationRow.owner == owner
        )

    def cancel(self, evaluation_id: str, tenant_id: str, reason: str, final: FinalEvent) -> bool:
        """End a RUNNING evaluation as CANCELLED, whichever gateway runs it (it stops at its next write),
        with its final event."""
        return self._end(
            evaluation_id,
            STATUS_CANCELLED,
            reason,
            final,
            EvaluationRow.id == evaluation_id,
            EvaluationRow.tenant_id == tenant_id,
        )

    def _end(self, evaluation_id: str, status: str, error_message: str | None, final: FinalEvent, *where) -> bool:
        event = final()  # built before the transaction: it reads what is stored, with the status it ends with
        with self.engine.begin() as session:
            result = session.execute(
                update(EvaluationRow)
                .where(*where, EvaluationRow.status == STATUS_RUNNING)
                .values(status=status, error_message=error_message, owner=None, updated_at=utc_now())
            )
            if cast(CursorResult, result).rowcount != 1:
                return False
            self._append(session, evaluation_id, event)
            return True

    def release(self, evaluation_id: str, owner: str) -> bool:
        """A gateway shutting down hands its evaluation on: still RUNNING, owned by none, so the next
        recovery pass of any gateway resumes it at once."""
        with self.engine.begin() as session:
            result = session.execute(
                update(EvaluationRow).where(EvaluationRow.id == evaluation_id, *_owned_by(owner)).values(owner=None)
            )
            return cast(CursorResult, result).rowcount == 1

    def claim(
        self,
        evaluation_id: str,
        tenant_id: str | None,
        owner: str,
        stale_before: datetime,
        config: dict[str, Any],
    ) -> EvaluationRecord | None:
        """Take a stopped evaluation (not COMPLETE; a RUNNING one only when no gateway owns it or its
        owner's heartbeat is older than `stale_before`) to resume it under `owner` with `config` (its
        budget may be new). The evaluation as claimed, or None."""
        with self.engine.begin() as session:
            conditions = [
                EvaluationRow.id == evaluation_id,
                EvaluationRow.status != STATUS_COMPLETE,
                or_(
                    EvaluationRow.status != STATUS_RUNNING,
                    EvaluationRow.owner.is_(None),
                    EvaluationRow.updated_at < stale_before,
                ),
            ]
            if tenant_id is not None:
                conditions.append(EvaluationRow.tenant_id == tenant_id)
            result = session.execute(
                update(EvaluationRow)
                .where(*conditions)
                .values(status=STATUS_RUNNING, owner=owner, error_message=None, config=config, updated_at=utc_now())
            )
            if cast(CursorResult, result).rowcount != 1:
                return None
        return self.get(evaluation_id, None)

    def abandoned(self, stale_before: datetime, exclude: Sequence[str], limit: int) -> list[EvaluationRecord]:
        """RUNNING evaluations no gateway works on: handed on at a shutdown, or whose gateway stopped
        writing before `stale_before` (it died). Oldest first; the recovery pass claims them one by one."""
        query = (
            select(EvaluationRow)
            .where(
                EvaluationRow.status == STATUS_RUNNING,
                or_(EvaluationRow.owner.is_(None), EvaluationRow.updated_at < stale_before),
            )
            .order_by(EvaluationRow.updated_at)
            .limit(limit + len(exclude))
        )
        with self._sessions() as session:
            rows = [row for row in session.scalars(query) if row.id not in set(exclude)]
            return [_record(row) for row in rows[:limit]]


def _owned_by(owner: str) -> tuple:
    return (EvaluationRow.status == STATUS_RUNNING, EvaluationRow.owner == owner)
