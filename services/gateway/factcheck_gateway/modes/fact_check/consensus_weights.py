"""FactCheckConfig.consensus: which consensus a fact-check uses, and, for CONSENSUS_WEIGHTED, its weights.

The weights are looked up once per run, at the consensus step: the tenant's newest complete evaluation that
measured every checker model of the run (EvaluationStore.newest_confusions: its confusion counts pooled over
all its sets). What was found (the weights, or why the majority was used) is stored as the run's consensus
stage row, in the commit of the all_checkers_complete event that reports it; a resumed run and GetResult read
that row, so they combine the verdicts with the same weights even when a newer evaluation has been stored
since. Runs that leave the option unset store no row and report no ConsensusWeighting (the spec's events).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from sqlalchemy.engine import Engine

from factcheck.core.domain import verdict_to_proto
from factcheck.v1 import evaluation_pb2
from factcheck_gateway.evaluations.store import EvaluationStore, MeasuredReliability
from factcheck_gateway.runs.run import stored_data
from factcheck_gateway.store.records import StageRecord, StageRow
from factcheck_gateway.weighted_consensus import ConsensusWeights, fit_weights

log = logging.getLogger("factcheck.gateway.fact_check")

# The run's consensus row: after the checkers (verify_0.. at 10..), before the verification loop (95).
STAGE_CONSENSUS = ("consensus", 90)
ROLE_CONSENSUS = "consensus"

# FactCheckConfig.consensus as the plan and messages.request_config spell it ("default": left unset).
DEFAULT, MAJORITY, WEIGHTED = "default", "majority", "weighted"
_NAMES = {
    evaluation_pb2.CONSENSUS_UNSPECIFIED: DEFAULT,
    evaluation_pb2.CONSENSUS_MAJORITY: MAJORITY,
    evaluation_pb2.CONSENSUS_WEIGHTED: WEIGHTED,
}
_PROTOS = {MAJORITY: evaluation_pb2.CONSENSUS_MAJORITY, WEIGHTED: evaluation_pb2.CONSENSUS_WEIGHTED}


def consensus_name(value: int) -> str | None:
    """The plan's name of a Consensus value (None: not one)."""
    return _NAMES.get(value)  # type: ignore[call-overload]


def consensus_proto(name: str) -> evaluation_pb2.Consensus:
    """The Consensus a plan's name stands for (an unset one reads as the majority)."""
    return _PROTOS.get(name, evaluation_pb2.CONSENSUS_MAJORITY)


@dataclass(frozen=True)
class Weighting:
    """What a run's consensus used: its weights (None: the majority) and, when weights were asked for but
    none could be had, why."""

    requested: str
    weights: ConsensusWeights | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"requested": self.requested, "used": WEIGHTED if self.weights else MAJORITY}
        if self.weights is not None:
            data["weights"] = self.weights.to_json()
        if self.note:
            data["note"] = self.note
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Weighting:
        weights = data.get("weights")
        return cls(
            requested=str(data.get("requested", WEIGHTED)),
            weights=ConsensusWeights.from_json(weights) if weights else None,
            note=str(data.get("note", "")),
        )

    def to_proto(self, checker_models: Sequence[str]) -> evaluation_pb2.ConsensusWeighting:
        """The ConsensusWeighting of the run's checkers (each model once, in checker order)."""
        message = evaluation_pb2.ConsensusWeighting(
            requested=consensus_proto(self.requested),
            used=evaluation_pb2.CONSENSUS_WEIGHTED if self.weights else evaluation_pb2.CONSENSUS_MAJORITY,
            note=self.note,
        )
        if self.weights is not None:
            message.evaluation_id = self.weights.evaluation_id
            for model in dict.fromkeys(checker_models):
                reliability = self.weights.checkers.get(model)
                if reliability is None:
                    continue
                message.checkers.append(
                    evaluation_pb2.CheckerReliability(
                        checker_model=model,
                        items=reliability.items,
                        verdict_given_label=[p for row in reliability.verdict_given_label for p in row],
                        verdict_weights=reliability.verdict_weights,
                        unmeasured_verdicts=[verdict_to_proto(v) for v in reliability.unmeasured],
                    )
                )
        return message

    def stage_row(self) -> StageRow:
        return StageRow(STAGE_CONSENSUS[0], STAGE_CONSENSUS[1], None, ROLE_CONSENSUS, None, self.to_json(), 0)


NOT_REACHED = "the run has not reached its consensus step: no weights were looked up"


def no_evaluation_note(checker_models: Sequence[str]) -> str:
    models = ", ".join(dict.fromkeys(checker_models))
    return f"no complete evaluation of this tenant measured {models}; the majority was used"


def newest_confusions(engine: Engine, tenant_id: str, checker_models: Sequence[str]) -> MeasuredReliability | None:
    """The tenant's newest complete evaluation that measured every one of `checker_models`: its id and
    each model's confusion counts pooled over its sets, or None."""
    return EvaluationStore(engine).newest_confusions(tenant_id, checker_models)


def look_up(engine: Engine, tenant_id: str, requested: str, checker_models: Sequence[str]) -> Weighting:
    """The run's weighting: for CONSENSUS_WEIGHTED, the weights of the tenant's newest complete evaluation
    that measured every checker model of the run, or the majority with a note saying why."""
    if requested != WEIGHTED:
        return Weighting(requested)
    models = list(dict.fromkeys(checker_models))
    measured = newest_confusions(engine, tenant_id, models)
    if measured is None or any(model not in measured.confusions for model in models):
        return Weighting(requested, note=no_evaluation_note(models))
    return Weighting(requested, weights=fit_weights(measured.evaluation_id, measured.confusions))


async def for_run(run, checker_models: Sequence[str]) -> Weighting:
    """The run's weighting: from its consensus row when an earlier attempt stored one, else looked up now."""
    requested = run.plan.consensus
    if (stored := run.stored.get(STAGE_CONSENSUS[0])) is not None:
        return Weighting.from_json(stored_data(stored))
    if requested != WEIGHTED:
        return Weighting(requested)
    return await run.read(
        "evaluation lookup", lambda: look_up(run.store.engine, run.tenant_id, requested, checker_models)
    )


def stored_weighting(requested: str, stage: StageRecord | None) -> Weighting | None:
    """A stored run's weighting (GetResult): None when the run left the option unset."""
    if stage is not None:
        return Weighting.from_json(stored_data(stage))
    if requested == DEFAULT:
        return None
    # Asked for, but no row: the majority was asked for, or the run has not reached its consensus (still
    # running, or it ended before: all checkers failed, cancelled).
    return Weighting(requested, note=NOT_REACHED if requested == WEIGHTED else "")
