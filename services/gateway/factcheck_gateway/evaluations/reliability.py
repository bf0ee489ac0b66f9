"""What the weighted consensus reads from the evaluations: each checker model's confusion counts.

Only readable answers count: a failed call has no verdict, and an unreadable answer has none either
(the evaluation scores it as wrong, but it says nothing about which verdict the checker gives for a
label). The counts are pooled over every set of the evaluation.

Which evaluation: the one a run names (`pinned`: it must be this tenant's, COMPLETE, and have measured
every checker of the run), else the tenant's newest COMPLETE evaluation that measured every checker
on at least `min_per_label` readable answers of each label (`newest`): a five-item evaluation of the
same checkers does not silently replace weights measured on hundreds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from factcheck.evaluation.sets import LABELS
from factcheck_gateway.evaluations.tables import EvaluationItemRow, EvaluationRow
from factcheck_gateway.store.models import STATUS_COMPLETE

Confusion = tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]


@dataclass(frozen=True)
class MeasuredReliability:
    """Per checker model, its confusion counts pooled over every set of one evaluation (rows the label,
    columns the verdict, both in LABELS; readable answers only)."""

    evaluation_id: str
    confusions: dict[str, Confusion]


class Unusable(Exception):
    """The evaluation a run named cannot give its weights; str() says why, for the run's note."""


class ReliabilityLookup:
    def __init__(self, engine: Engine) -> None:
        self._sessions = sessionmaker(engine)

    def pinned(self, tenant_id: str, evaluation_id: str, checker_models: Sequence[str]) -> MeasuredReliability:
        """The named evaluation's counts; Unusable when it is not this tenant's, not COMPLETE, or did not
        measure every one of `checker_models`."""
        wanted = list(dict.fromkeys(checker_models))
        with self._sessions() as session:
            row = session.get(EvaluationRow, evaluation_id)
            if row is None or row.tenant_id != tenant_id:
                raise Unusable(f"evaluation {evaluation_id} was not found")
            if row.status != STATUS_COMPLETE:
                raise Unusable(f"evaluation {evaluation_id} is {row.status}, not COMPLETE")
            missing = [model for model in wanted if model not in row.config.get("checkerModels", [])]
            if missing:
                raise Unusable(f"evaluation {evaluation_id} did not measure {', '.join(missing)}")
            return MeasuredReliability(row.id, _confusions(session, row.id, wanted))

    def newest(self, tenant_id: str, checker_models: Sequence[str], min_per_label: int) -> MeasuredReliability | None:
        """The tenant's newest COMPLETE evaluation that measured every one of `checker_models` on at least
        `min_per_label` readable answers of each label; None when there is none."""
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
                confusions = _confusions(session, row.id, wanted)
                if all(sum(line) >= min_per_label for matrix in confusions.values() for line in matrix):
                    return MeasuredReliability(row.id, confusions)
        return None


def _confusions(session: Session, evaluation_id: str, models: list[str]) -> dict[str, Confusion]:
    item = EvaluationItemRow
    counts = session.execute(
        select(item.checker_model, item.label, item.verdict, func.count())
        .where(
            item.evaluation_id == evaluation_id,
            item.failed.is_(False),
            item.unreadable.is_(False),
            item.checker_model.in_(models),
        )
        .group_by(item.checker_model, item.label, item.verdict)
    ).all()
    matrices = {model: [[0, 0, 0], [0, 0, 0], [0, 0, 0]] for model in models}
    for model, label, verdict, count in counts:
        if label in LABELS and verdict in LABELS:
            matrices[model][LABELS.index(label)][LABELS.index(verdict)] += count
    return {model: cast(Confusion, tuple(tuple(line) for line in matrix)) for model, matrix in matrices.items()}
