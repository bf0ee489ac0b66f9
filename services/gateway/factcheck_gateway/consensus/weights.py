"""FactCheckConfig.consensus: which consensus a fact-check uses, and, for CONSENSUS_WEIGHTED, its weights
(weighted.py fits them; combine.py applies them).

The weights are looked up once per run, at the consensus step (evaluations/reliability.py: readable answers
only, pooled over the evaluation's sets): from the evaluation the run names (FactCheckConfig.consensus_evaluation_id),
else from the tenant's newest complete evaluation that measured every checker model of the run on at least
FACTCHECK_CONSENSUS_MIN_ITEMS_PER_LABEL answers of each label. What was found (the weights, or why the majority
was used: `fallback` and `note`) is stored as the run's consensus stage row, in the commit of the
all_checkers_complete event that reports it; a resumed run and GetResult read that row, so they combine the
verdicts with the same weights even when a newer evaluation has been stored since. Runs that leave the option
unset store no row and report no ConsensusWeighting (docs/api.md).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from sqlalchemy.engine import Engine

from factcheck.core.domain import verdict_to_proto
from factcheck.v1 import evaluation_pb2
from factcheck_gateway.consensus.weighted import ConsensusWeights, fit_weights
from factcheck_gateway.evaluations.reliability import MeasuredReliability, ReliabilityLookup, Unusable
from factcheck_gateway.runs.run import stored_data
from factcheck_gateway.store.records import StageRecord, StageRow

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
# Why weights asked for were not used (ConsensusWeighting.fallback).
NO_EVALUATION, EVALUATION_UNUSABLE = "no_evaluation", "evaluation_unusable"
_FALLBACKS = {
    NO_EVALUATION: evaluation_pb2.CONSENSUS_FALLBACK_NO_EVALUATION,
    EVALUATION_UNUSABLE: evaluation_pb2.CONSENSUS_FALLBACK_EVALUATION_UNUSABLE,
}


def consensus_name(value: int) -> str | None:
    """The plan's name of a Consensus value (None: not one)."""
    return _NAMES.get(value)  # type: ignore[call-overload]


def consensus_proto(name: str) -> evaluation_pb2.Consensus:
    """The Consensus a plan's name stands for (an unset one reads as the majority)."""
    return _PROTOS.get(name, evaluation_pb2.CONSENSUS_MAJORITY)


@dataclass(frozen=True)
class Weighting:
    """What a run's consensus used: its weights (None: the majority) and, when weights were asked for but
    none could be had, why (`fallback`: NO_EVALUATION or EVALUATION_UNUSABLE; `note`: in words)."""

    requested: str
    weights: ConsensusWeights | None = None
    note: str = ""
    fallback: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"requested": self.requested, "used": WEIGHTED if self.weights else MAJORITY}
        if self.weights is not None:
            data["weights"] = self.weights.to_json()
        if self.note:
            data["note"] = self.note
        if self.fallback:
            data["fallback"] = self.fallback
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Weighting:
        weights = data.get("weights")
        requested = str(data.get("requested", WEIGHTED))
        fallback = str(data.get("fallback", ""))
        if not fallback and requested == WEIGHTED and not weights and data.get("note"):
            fallback = NO_EVALUATION  # a row stored before the reason had a name: the only fallback there was
        return cls(
            requested=requested,
            weights=ConsensusWeights.from_json(weights) if weights else None,
            note=str(data.get("note", "")),
            fallback=fallback,
        )

    def to_proto(self, checker_models: Sequence[str]) -> evaluation_pb2.ConsensusWeighting:
        """The ConsensusWeighting of the run's checkers (each model once, in checker order)."""
        message = evaluation_pb2.ConsensusWeighting(
            requested=consensus_proto(self.requested),
            used=evaluation_pb2.CONSENSUS_WEIGHTED if self.weights else evaluation_pb2.CONSENSUS_MAJORITY,
            note=self.note,
            fallback=_FALLBACKS.get(self.fallback, evaluation_pb2.CONSENSUS_FALLBACK_UNSPECIFIED),
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


def no_evaluation_note(checker_models: Sequence[str], min_per_label: int) -> str:
    models = ", ".join(dict.fromkeys(checker_models))
    return (
        f"no complete evaluation of this tenant measured {models} on at least {min_per_label} readable "
        "answers of each label; the majority was used"
    )


def unusable_note(reason: str) -> str:
    return f"{reason}; the majority was used"


def newest_confusions(
    engine: Engine, tenant_id: str, checker_models: Sequence[str], min_per_label: int
) -> MeasuredReliability | None:
    """The tenant's newest complete evaluation that measured every one of `checker_models` on enough
    readable answers per label: its id and each model's confusion counts pooled over its sets, or None."""
    return ReliabilityLookup(engine).newest(tenant_id, checker_models, min_per_label)


def look_up(
    engine: Engine,
    tenant_id: str,
    requested: str,
    checker_models: Sequence[str],
    *,
    evaluation_id: str | None = None,
    min_per_label: int = 0,
) -> Weighting:
    """The run's weighting: for CONSENSUS_WEIGHTED, the weights of the evaluation it names, else of the
    tenant's newest complete evaluation that measured every checker model of the run on at least
    `min_per_label` readable answers per label; or the majority, with why."""
    if requested != WEIGHTED:
        return Weighting(requested)
    models = list(dict.fromkeys(checker_models))
    if evaluation_id:
        try:
            measured = ReliabilityLookup(engine).pinned(tenant_id, evaluation_id, models)
        except Unusable as reason:
            return Weighting(requested, note=unusable_note(str(reason)), fallback=EVALUATION_UNUSABLE)
    else:
        found = newest_confusions(engine, tenant_id, models, min_per_label)
        if found is None:
            return Weighting(requested, note=no_evaluation_note(models, min_per_label), fallback=NO_EVALUATION)
        measured = found
    return Weighting(requested, weights=fit_weights(measured.evaluation_id, measured.confusions))


async def for_run(run, checker_models: Sequence[str]) -> Weighting:
    """The run's weighting: from its consensus row when an earlier attempt stored one, else looked up now."""
    plan = run.plan
    requested = plan.consensus
    if (stored := run.stored.get(STAGE_CONSENSUS[0])) is not None:
        return Weighting.from_json(stored_data(stored))
    if requested != WEIGHTED:
        return Weighting(requested)
    return await run.read(
        "evaluation lookup",
        lambda: look_up(
            run.store.engine,
            run.tenant_id,
            requested,
            checker_models,
            evaluation_id=plan.consensus_evaluation_id,
            min_per_label=plan.consensus_min_items_per_label,
        ),
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
