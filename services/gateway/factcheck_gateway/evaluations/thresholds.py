"""Binary checkers' decision thresholds: fitted on an evaluation, named by a run or by another evaluation.

A binary checker (an `onnx/` model, a model of a grounding dialect: `grounding_kind`) reads each claim's
P(supported) against a threshold. An evaluation asked to (EvaluationConfig.fit_thresholds) fits each of its
checkers' thresholds once it is COMPLETE, on its one set, by factcheck/evaluation/thresholds.py, from the
readings every answer stored (support_probability, support_threshold), and stores them before its end.

A run (FactCheckConfig.threshold_evaluation_id) or an evaluation (EvaluationConfig.threshold_evaluation_id)
that names such an evaluation gets, for each of its checkers with a threshold fitted there, that threshold
(`look_up`), sent with each Verify (VerifyRequest.support_threshold). An evaluation that does so may not
measure on the set the thresholds were fitted on, nor on the whole shipped set that holds that dev half: its
scores would be measured on the answers the thresholds were tuned to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from factcheck.evaluation.sets import UnknownSetError, shipped_set_and_split
from factcheck.evaluation.thresholds import (
    BALANCED_ACCURACY,
    NoFit,
    ThresholdItem,
    balanced_accuracy_at,
    fit_threshold,
)
from factcheck.v1 import evaluation_pb2
from factcheck_gateway.evaluations.store import EvaluationStore, FittedThreshold, ItemResult
from factcheck_gateway.store.models import STATUS_COMPLETE

_CRITERIA = {BALANCED_ACCURACY: evaluation_pb2.THRESHOLD_CRITERION_BALANCED_ACCURACY}


@dataclass(frozen=True)
class ChosenThreshold:
    """The threshold a checker of a run or an evaluation uses instead of its own, and where it comes from."""

    checker_model: str
    threshold: float
    evaluation_id: str
    fitted_on: str

    def to_json(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "evaluationId": self.evaluation_id, "fittedOn": self.fitted_on}

    @classmethod
    def from_json(cls, checker_model: str, data: Mapping[str, Any]) -> ChosenThreshold:
        return cls(checker_model, float(data["threshold"]), str(data["evaluationId"]), str(data["fittedOn"]))

    def to_proto(self) -> evaluation_pb2.CheckerThreshold:
        return evaluation_pb2.CheckerThreshold(
            checker_model=self.checker_model,
            threshold=self.threshold,
            evaluation_id=self.evaluation_id,
            fitted_on=self.fitted_on,
        )


class Unusable(Exception):
    """The evaluation a request names gives it no threshold: why, in words."""


# --- fitting ------------------------------------------------------------------------------------------


def fit(checker_model: str, set_name: str, answers: Sequence[ItemResult]) -> FittedThreshold:
    """`checker_model`'s threshold fitted on its answers on `set_name` (failed calls left out), or why none can be."""
    scored = [answer for answer in answers if not answer.failed]
    unread = sum(1 for a in scored if not a.unreadable and a.support_threshold is None)
    items = [
        ThresholdItem(answer.label == "VERIFIED", None if answer.unreadable else answer.support_probability)
        for answer in scored
    ]
    thresholds = Counter(a.support_threshold for a in scored if a.support_threshold is not None)
    evaluated = thresholds.most_common(1)[0][0] if thresholds else None
    found = FittedThreshold(
        checker_model=checker_model,
        set_name=set_name,
        threshold=None,
        criterion=BALANCED_ACCURACY,
        balanced_accuracy=0.0,
        evaluated_threshold=evaluated,
        evaluated_balanced_accuracy=balanced_accuracy_at(items, evaluated) if evaluated is not None else 0.0,
        items=len(items),
        verified_items=sum(1 for item in items if item.verified),
        fixed_items=sum(1 for item in items if item.support is None),
        candidates=0,
    )
    if unread:
        return _failed(
            found,
            f"{unread} of its {len(items)} answers carry no P(supported) reading (answers served from the "
            "verification cache before readings were stored, or a checker that reads no threshold); evaluate "
            "again without the cache (--no-cache)",
        )
    try:
        fitted = fit_threshold(items)
    except NoFit as reason:
        return _failed(found, str(reason))
    return replace(
        found, threshold=fitted.threshold, balanced_accuracy=fitted.balanced_accuracy, candidates=fitted.candidates
    )


def _failed(found: FittedThreshold, reason: str) -> FittedThreshold:
    return replace(found, error=reason)


def fits(
    checker_models: Sequence[str], set_name: str, answers: Mapping[tuple[str, str], Mapping[str, ItemResult]]
) -> list[FittedThreshold]:
    """Each checker's fit on the evaluation's one set, in checker order (`answers` by (checker, set), by item)."""
    return [fit(model, set_name, list(answers.get((model, set_name), {}).values())) for model in checker_models]


def fitted_proto(found: FittedThreshold) -> evaluation_pb2.FittedThreshold:
    message = evaluation_pb2.FittedThreshold(
        checker_model=found.checker_model,
        set=found.set_name,
        criterion=_CRITERIA.get(found.criterion, evaluation_pb2.THRESHOLD_CRITERION_UNSPECIFIED),
        balanced_accuracy=found.balanced_accuracy,
        evaluated_balanced_accuracy=found.evaluated_balanced_accuracy,
        items=found.items,
        verified_items=found.verified_items,
        fixed_items=found.fixed_items,
        candidates=found.candidates,
    )
    if found.threshold is not None:
        message.threshold = found.threshold
    if found.evaluated_threshold is not None:
        message.evaluated_threshold = found.evaluated_threshold
    if found.error is not None:
        message.error = found.error
    return message


# --- naming an evaluation's thresholds ----------------------------------------------------------------


def look_up(
    store: EvaluationStore, tenant_id: str, evaluation_id: str, checker_models: Sequence[str]
) -> dict[str, ChosenThreshold]:
    """The thresholds `evaluation_id` fitted for these checker models (by model; at least one), or Unusable."""
    record = store.get(evaluation_id, tenant_id)
    if record is None:
        raise Unusable(f"there is no evaluation '{evaluation_id}' of yours")
    if not record.config.get("fitThresholds"):
        raise Unusable(
            f"evaluation {evaluation_id} fitted no thresholds: it was not asked to (EvaluationConfig.fit_thresholds, "
            "`factcheck eval --fit-threshold`)"
        )
    if record.status != STATUS_COMPLETE:
        raise Unusable(f"evaluation {evaluation_id} is {record.status}: its thresholds are fitted once it is COMPLETE")
    fitted = {found.checker_model: found for found in store.thresholds([evaluation_id])[evaluation_id]}
    chosen = {
        model: ChosenThreshold(model, found.threshold, evaluation_id, found.set_name)
        for model in dict.fromkeys(checker_models)
        if (found := fitted.get(model)) is not None and found.threshold is not None
    }
    if not chosen:
        usable = ", ".join(model for model, found in fitted.items() if found.threshold is not None) or "none"
        raise Unusable(
            f"evaluation {evaluation_id} fitted no threshold for any of the checkers {', '.join(checker_models)} "
            f"(it fitted thresholds for: {usable})"
        )
    return chosen


def measured_on_fitted(chosen: Mapping[str, ChosenThreshold], sets: Sequence[tuple[str, bool]]) -> str | None:
    """Why an evaluation of `sets` ((name, custom)) may not use `chosen` (a set they were fitted on, or the whole
    shipped set holding it), or None."""
    for threshold in chosen.values():
        fitted_on, shipped = threshold.fitted_on, _shipped_half(threshold.fitted_on)
        for name, custom in sets:
            if name == fitted_on:
                elsewhere = f"{shipped[0]}:test" if shipped is not None else "another set"
                return f"{threshold.checker_model}'s threshold was fitted on {name}: measure it on {elsewhere}"
            if not custom and shipped is not None and name == shipped[0]:
                return (
                    f"{threshold.checker_model}'s threshold was fitted on {fitted_on}, which is part of {name}: "
                    f"measure it on {name}:test"
                )
    return None


def _shipped_half(name: str) -> tuple[str, str] | None:
    """(set, half) for a shipped set's half ("wice:dev"); None for a custom set's name."""
    try:
        base, split = shipped_set_and_split(name)
    except UnknownSetError:
        return None
    return (base, split) if split is not None else None
