"""Claim-level citation rows, written in the fenced commit of the event that reports them.

A `RowWrites` rides in `RunCommit.rows` (services/gateway/factcheck_gateway/store/stage_store.py) and is applied in
the same transaction as its event, only once the run's fence has passed, so a claim's rows
and its `claim_verified` event land together or not at all, exactly like stage rows.
Span rows are shared by claims of a run and may be written by several commits: they are
inserted with ON CONFLICT DO NOTHING (their ids are derived from run, source and offsets).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, delete, insert, update
from sqlalchemy.dialects import postgresql, sqlite

from factcheck_gateway.claims.tables import (
    CitationCorrectionRow,
    CitationRow,
    ClaimRow,
    EvidenceSpanRow,
    NumericClaimRow,
    VerificationSummaryRow,
)
from factcheck_gateway.store.models import utc_now
from factcheck_gateway.store.records import storable

_NAMESPACE = uuid.UUID("6f1c1c2e-9a43-4c0e-9d55-3c2f1b7d0a17")


def stable_id(*parts: Any) -> str:
    """The same UUID for the same parts (a resumed run writes the ids an earlier attempt wrote)."""
    return str(uuid.uuid5(_NAMESPACE, "|".join(str(p) for p in parts)))


@dataclass
class RowWrites:
    """Inserts and deletes of claim-level rows, applied in order within one transaction."""

    spans: list[dict[str, Any]] = field(default_factory=list)
    claims: list[dict[str, Any]] = field(default_factory=list)
    numeric: list[dict[str, Any]] = field(default_factory=list)
    deleted_citations: list[tuple[str, str]] = field(default_factory=list)  # (claim id, span id)
    citations: list[dict[str, Any]] = field(default_factory=list)
    corrections: list[dict[str, Any]] = field(default_factory=list)
    # Claims a correction left without evidence: (claim id, new reasoning) → abstained, no tier.
    abstained_claims: list[tuple[str, str]] = field(default_factory=list)
    summary: dict[str, Any] | None = None

    def apply(self, session) -> None:
        now = utc_now()
        if self.spans:
            session.execute(_insert_ignoring(session, EvidenceSpanRow, ["id"]), _stamped(self.spans, now))
        if self.claims:
            session.execute(insert(ClaimRow.__table__), _stamped(self.claims, now))
        if self.numeric:
            session.execute(insert(NumericClaimRow.__table__), storable(self.numeric))
        for claim_id, span_id in self.deleted_citations:
            table = CitationRow.__table__
            session.execute(
                delete(table).where(and_(table.c.claim_id == claim_id, table.c.evidence_span_id == span_id))
            )
        if self.citations:
            statement = _insert_ignoring(session, CitationRow, ["claim_id", "evidence_span_id"])
            session.execute(statement, _stamped(self.citations, now))
        if self.corrections:
            session.execute(insert(CitationCorrectionRow.__table__), _stamped(self.corrections, now))
        for claim_id, reasoning in self.abstained_claims:
            table = ClaimRow.__table__
            session.execute(
                update(table)
                .where(table.c.id == claim_id)
                .values(abstained=True, verification_verdict=None, verification_reasoning=storable(reasoning))
            )
        if self.summary is not None:
            session.execute(insert(VerificationSummaryRow.__table__), _stamped([self.summary], now))


def _stamped(rows: list[dict[str, Any]], now) -> list[dict[str, Any]]:
    return [{"created_at": now, **storable(row)} for row in rows]


def _insert_ignoring(session, model, conflict_columns: list[str]):
    """INSERT ... ON CONFLICT DO NOTHING on SQLite and PostgreSQL."""
    dialect = session.dialect.name
    if dialect == "postgresql":
        return postgresql.insert(model.__table__).on_conflict_do_nothing(index_elements=conflict_columns)
    if dialect == "sqlite":
        return sqlite.insert(model.__table__).on_conflict_do_nothing(index_elements=conflict_columns)
    raise NotImplementedError(f"claim rows are written on SQLite and PostgreSQL only, not {dialect}")
