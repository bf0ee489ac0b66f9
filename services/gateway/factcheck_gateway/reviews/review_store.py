"""Pending reviews: written when a run's investigate stage is stored, decided once.

A decision is one transaction: the review row is decided, a "review:<claim id>" stage row records
it (GetResult rebuilds the result from stage rows), and a `review_decided` event is appended to
the run's events after its last one (the run has ended, so no lease fences the write; the
messages row's last_seq guards the sequence).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import insert, select, text, update
from sqlalchemy.engine import CursorResult, Engine
from sqlalchemy.orm import sessionmaker

from factcheck_gateway.reviews.states import REVIEW_ORDER, REVIEW_PENDING, REVIEW_PREFIX, ROLE_REVIEWER
from factcheck_gateway.reviews.tables import InvestigationReview
from factcheck_gateway.store.models import STATUS_RUNNING, Message, RunEvent, utc_now
from factcheck_gateway.store.paging import Listing, newest_first_page
from factcheck_gateway.store.records import StageRow, storable
from factcheck_gateway.store.stage_store import EVENTS_CHANNEL, _stage_values


@dataclass(frozen=True)
class PendingReview:
    claim_id: str
    claim: str
    origin_flags: tuple[str, ...]
    proposed_status: str
    confidence: float
    reasoning: str


@dataclass(frozen=True)
class ReviewRecord:
    message_id: str
    claim_id: str
    claim: str
    origin_flags: tuple[str, ...]
    proposed_status: str
    confidence: float
    reasoning: str
    state: str
    status: str | None
    reason: str | None
    created_at: datetime
    decided_at: datetime | None


class ReviewNotFound(LookupError):
    pass


class AlreadyDecided(Exception):
    def __init__(self, record: ReviewRecord) -> None:
        super().__init__(record.state)
        self.record = record


class RunStillRunning(Exception):
    pass


def review_stage_type(claim_id: str) -> str:
    return f"{REVIEW_PREFIX}{claim_id}"[:32]


class ReviewStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    def add_pending(self, message_id: str, tenant_id: str, reviews: Sequence[PendingReview]) -> int:
        """Idempotent: a review already stored (a resumed run stores them again) is left as it is."""
        if not reviews:
            return 0
        with self.engine.begin() as session:
            known = set(
                session.scalars(
                    select(InvestigationReview.claim_id).where(InvestigationReview.message_id == message_id)
                )
            )
            rows = [
                {
                    "id": str(uuid.uuid4()),
                    "message_id": message_id,
                    "claim_id": r.claim_id,
                    "tenant_id": tenant_id,
                    "claim": storable(r.claim),
                    "origin_flags": list(r.origin_flags),
                    "proposed_status": r.proposed_status,
                    "confidence": r.confidence,
                    "reasoning": storable(r.reasoning),
                    "state": REVIEW_PENDING,
                    "created_at": utc_now(),
                }
                for r in reviews
                if r.claim_id not in known
            ]
            if rows:
                session.execute(insert(InvestigationReview.__table__), rows)
        return len(rows)

    def list_reviews(
        self, tenant_id: str, *, message_id: str | None, include_decided: bool, page_size: int, page_token: str | None
    ) -> tuple[list[ReviewRecord], str | None]:
        conditions: list[Any] = [InvestigationReview.tenant_id == tenant_id]
        if message_id:
            conditions.append(InvestigationReview.message_id == message_id)
        if not include_decided:
            conditions.append(InvestigationReview.state == REVIEW_PENDING)
        listing = Listing("ListReviews", tenant_id, {"message_id": message_id, "include_decided": include_decided})
        with self._sessions() as session:
            rows, token = newest_first_page(
                session, InvestigationReview, page_size, page_token, *conditions, listing=listing
            )
            return [_record(row) for row in rows], token

    def decide(
        self,
        tenant_id: str,
        message_id: str,
        claim_id: str,
        *,
        state: str,
        status: str | None,
        reason: str,
        build_event: Callable[[int, ReviewRecord], bytes],
    ) -> ReviewRecord:
        """Decide one pending review (see the module docstring); `build_event(seq, decided)` serialises the event."""
        now = utc_now()
        with self._sessions() as session, session.begin():
            query = select(InvestigationReview).where(
                InvestigationReview.tenant_id == tenant_id,
                InvestigationReview.message_id == message_id,
                InvestigationReview.claim_id == claim_id,
            )
            if session.get_bind().dialect.name == "postgresql":
                query = query.with_for_update()
            row = session.scalars(query).first()
            if row is None:
                raise ReviewNotFound(claim_id)
            if row.state != REVIEW_PENDING:
                raise AlreadyDecided(_record(row))
            message = session.get(Message, message_id)
            if message is None:
                raise ReviewNotFound(claim_id)
            if message.status == STATUS_RUNNING:
                raise RunStillRunning(message_id)
            row.state, row.status, row.reason, row.decided_at = state, status, storable(reason), now
            decided = _record(row)
            seq = message.last_seq + 1
            moved = cast(
                CursorResult,  # (Session.execute is typed to return a Result; an UPDATE's is a CursorResult)
                session.execute(
                    update(Message)
                    .where(Message.id == message_id, Message.last_seq == message.last_seq)
                    .values(last_seq=seq, updated_at=now)
                ),
            ).rowcount
            if moved != 1:
                raise RunStillRunning(message_id)  # another write moved the sequence: try again
            session.execute(
                insert(RunEvent.__table__),
                [
                    {
                        "message_id": message_id,
                        "seq": seq,
                        "event_type": "review_decided",
                        "payload": build_event(seq, decided),
                        "created_at": now,
                    }
                ],
            )
            stage = StageRow(
                review_stage_type(claim_id),
                REVIEW_ORDER,
                None,
                ROLE_REVIEWER,
                reason,
                {"claimId": claim_id, "state": state, "status": status, "reason": reason},
                0,
            )
            session.execute(
                insert(Message.metadata.tables["deliberation_stages"]), [_stage_values(message_id, stage, now)]
            )
            if session.get_bind().dialect.name == "postgresql":
                session.execute(text("SELECT pg_notify(:channel, :id)"), {"channel": EVENTS_CHANNEL, "id": message_id})
        return decided


def _record(row: InvestigationReview) -> ReviewRecord:
    return ReviewRecord(
        message_id=row.message_id,
        claim_id=row.claim_id,
        claim=row.claim,
        origin_flags=tuple(row.origin_flags or ()),
        proposed_status=row.proposed_status,
        confidence=row.confidence,
        reasoning=row.reasoning,
        state=row.state,
        status=row.status,
        reason=row.reason,
        created_at=row.created_at,
        decided_at=row.decided_at,
    )
