"""How a fact-check's consensus was reached (ConsensusWeighting), in one line for reports."""

from __future__ import annotations

from factcheck.core.domain import verdict_from_proto
from factcheck.evaluation.sets import LABELS
from factcheck.v1 import evaluation_pb2


def describe_weighting(weighting: evaluation_pb2.ConsensusWeighting) -> str:
    """ "weighted by evaluation <id> (weights: <model>: VERIFIED +2.10, ...; ...)", or "majority", with the
    reason when weights were asked for but none could be had."""
    if weighting.used != evaluation_pb2.CONSENSUS_WEIGHTED:
        return f"majority ({weighting.note})" if weighting.note else "majority"
    parts = []
    for checker in weighting.checkers:
        unmeasured = {verdict_from_proto(value) for value in checker.unmeasured_verdicts}
        values = ", ".join(
            f"{verdict} never given" if verdict in unmeasured else f"{verdict} {weight:+.2f}"
            for verdict, weight in zip(LABELS, checker.verdict_weights)
        )
        parts.append(f"{checker.checker_model}: {values}")
    return f"weighted by evaluation {weighting.evaluation_id} (weights: {'; '.join(parts)})"
