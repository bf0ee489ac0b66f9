"""FactCheckConfig.threshold_evaluation_id: the fitted thresholds a fact-check's binary checkers use.

Before the run starts the gateway looks the evaluation up (`check_stored`): unknown, not COMPLETE, asked to
fit nothing, or with no threshold for any checker of the run is INVALID_ARGUMENT. Each Verify of a checker
with a fitted threshold carries it (VerifyRequest.support_threshold); the thresholds are looked up once per
attempt of the run (fitted thresholds never change once their evaluation is COMPLETE, so a resumed run gets
the same). Each binary checker's stored verify row says which threshold its verdicts were read against, the
model's own or the evaluation's (CheckerResult.threshold), from the thresholds its verifications report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.engine import Engine

from factcheck.core.domain import ClaimVerification
from factcheck.v1 import checker_pb2, evaluation_pb2
from factcheck_gateway.evaluations.store import EvaluationStore
from factcheck_gateway.evaluations.thresholds import ChosenThreshold, Unusable, look_up
from factcheck_gateway.modes.fact_check.plan import RunPlan
from factcheck_gateway.modes.fact_check.state import FactCheckRun
from factcheck_gateway.request_validation import ValidationError
from factcheck_gateway.runs.run import RunFailed

FIELD = "mode_config.threshold_evaluation_id"
# The verify row's key for the threshold a checker's verdicts were read against.
STAGE_KEY = "threshold"


def check_stored(plan: RunPlan, engine: Engine) -> None:
    """ValidationError when the evaluation the run names gives none of its checkers a threshold."""
    if plan.threshold_evaluation_id is None:
        return
    try:
        look_up(EvaluationStore(engine), plan.tenant_id, plan.threshold_evaluation_id, plan.checker_models)
    except Unusable as reason:
        raise ValidationError(f"{FIELD}: {reason}", field=FIELD) from None


async def for_run(run: FactCheckRun) -> Mapping[str, ChosenThreshold]:
    """The thresholds of the run's checkers that have one (by model), looked up once per attempt."""
    evaluation_id = run.plan.threshold_evaluation_id
    if evaluation_id is None:
        return {}
    if run.checker_thresholds is None:
        store = EvaluationStore(run.store.engine)
        try:
            run.checker_thresholds = await run.read(
                "threshold lookup",
                lambda: look_up(store, run.tenant_id, evaluation_id, run.plan.checker_models),
            )
        except Unusable as reason:  # checked before the run started: only a changed database gets here
            raise RunFailed(f"The thresholds the run names cannot be used: {reason}.") from None
    return run.checker_thresholds


async def apply(run: FactCheckRun, request: checker_pb2.VerifyRequest) -> None:
    """Give the request its checker's fitted threshold, when the run names one for it."""
    chosen = (await for_run(run)).get(request.model)
    if chosen is not None:
        request.support_threshold = chosen.threshold


def stage_json(
    model: str, verifications: Sequence[ClaimVerification], chosen: Mapping[str, ChosenThreshold]
) -> dict[str, Any] | None:
    """What the checker's verify row stores of its threshold: the one its verifications were read against (None
    for a checker that reads no threshold), and the evaluation it comes from when it is a fitted one."""
    used = next((v.support_threshold for v in verifications if v.support_threshold is not None), None)
    if used is None:
        return None
    fitted = chosen.get(model)
    if fitted is not None and fitted.threshold == used:
        return fitted.to_json()
    return {"threshold": used, "evaluationId": "", "fittedOn": ""}


def result_proto(model: str, data: Mapping[str, Any]) -> evaluation_pb2.CheckerThreshold | None:
    """CheckerResult.threshold from a verify row's data (None when it stored none)."""
    stored = data.get(STAGE_KEY)
    return ChosenThreshold.from_json(model, stored).to_proto() if stored else None
