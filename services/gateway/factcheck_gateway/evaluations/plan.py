"""An evaluation request, validated and drawn: which checkers judge which items, within which budget.

A stored evaluation is planned again from its row (`plan_from_record`): the shipped sets by the item
ids drawn at the start, the caller's sets from the items stored with it, so a resume on any gateway
judges exactly the items the evaluation started with, with the thresholds it started with.

An evaluation that fits thresholds (fit_thresholds) has one set, a shipped set's dev half or the caller's
own, and binary checkers only (evaluations/thresholds.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from factcheck.core.domain import is_known_enum, verdict_from_proto
from factcheck.evaluation.sets import (
    DEV,
    MAX_ITEMS_PER_SET,
    SHIPPED_SETS,
    ItemsFileError,
    LabelledItem,
    UnknownSetError,
    load_shipped_set,
    parse_item,
    sample,
    shipped_set_and_split,
)
from factcheck.kit.settings import Settings
from factcheck.models.availability import grounding_kind
from factcheck.text.text_safety import excerpt
from factcheck.v1 import common_pb2, evaluation_pb2
from factcheck_gateway.evaluations.thresholds import ChosenThreshold
from factcheck_gateway.ledger.budget import Budget, run_budget
from factcheck_gateway.request_validation import (
    ValidationError,
    bounded,
    check,
    check_budget,
    check_checker_model,
    identifier,
)

MAX_CHECKERS = 8
MAX_SETS = 16
DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 16
SET_NAME = re.compile(r"[a-z0-9._-]{1,64}")
MAX_EVALUATION_ID_CHARS = 255
BINARY_CHECKERS = "binary checkers (onnx/ models, models of a grounding dialect such as minicheck)"
# Everything an evaluation holds, items × checkers: bounds the work (and the rows) one request can ask for.
MAX_TOTAL_ANSWERS = 200_000


@dataclass(frozen=True)
class DrawnSet:
    name: str
    custom: bool
    available: int  # items the set holds
    items: tuple[LabelledItem, ...]  # the items drawn (limit applied)


@dataclass(frozen=True)
class EvaluationPlan:
    tenant_id: str
    checker_models: tuple[str, ...]
    sets: tuple[DrawnSet, ...]
    limit: int | None
    seed: int
    budget: Budget
    use_cache: bool
    concurrency: int
    cache_ttl_s: float
    timeout_ms: int
    # Fit each checker's threshold once COMPLETE (EvaluationConfig.fit_thresholds).
    fit_thresholds: bool = False
    # The evaluation whose fitted thresholds the checkers use, and those thresholds by model (resolved once,
    # when the evaluation starts, and stored with it: evaluations/thresholds.py).
    threshold_evaluation_id: str | None = None
    checker_thresholds: Mapping[str, ChosenThreshold] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.checker_models) * sum(len(drawn.items) for drawn in self.sets)

    def config_json(self) -> dict[str, Any]:
        """What is stored as evaluations.config."""
        return {
            "checkerModels": list(self.checker_models),
            "sets": [
                {"name": s.name, "custom": s.custom, "available": s.available, "itemIds": [i.id for i in s.items]}
                for s in self.sets
            ],
            "limit": self.limit,
            "seed": self.seed,
            "budget": {"maxCostUsd": self.budget.max_cost_usd, "maxTokens": self.budget.max_tokens},
            "useCache": self.use_cache,
            "concurrency": self.concurrency,
            "fitThresholds": self.fit_thresholds,
            "thresholdEvaluationId": self.threshold_evaluation_id,
            "checkerThresholds": {model: chosen.to_json() for model, chosen in self.checker_thresholds.items()},
        }

    def custom_items_json(self) -> dict[str, Any]:
        """The caller's sets' drawn items, stored with the evaluation (the shipped ones are in the package)."""
        return {s.name: [item_json(item) for item in s.items] for s in self.sets if s.custom}

    def summaries(self) -> list[evaluation_pb2.EvaluationSetSummary]:
        return [
            evaluation_pb2.EvaluationSetSummary(name=s.name, custom=s.custom, items=len(s.items), available=s.available)
            for s in self.sets
        ]


def item_json(item: LabelledItem) -> dict[str, Any]:
    """An item as `parse_item` reads it."""
    return {
        "id": item.id,
        "claim": item.claim,
        "evidence": [{"title": e.title, "text": e.text} for e in item.evidence],
        "label": item.label,
    }


def _custom_set(index: int, custom: evaluation_pb2.CustomEvaluationSet) -> tuple[str, list[LabelledItem]]:
    field = f"config.custom_sets[{index}]"
    check(
        SET_NAME.fullmatch(custom.name) is not None,
        f"{field}.name",
        f"{field}.name must be 1 to 64 characters of a-z, 0-9, '.', '_' and '-' (got {custom.name[:80]!r})",
    )
    check(
        custom.name not in SHIPPED_SETS,
        f"{field}.name",
        f"{field}.name '{custom.name}' is a shipped set's name; name your own set otherwise",
    )
    check(len(custom.items) > 0, f"{field}.items", f"{field} holds no items")
    check(
        len(custom.items) <= MAX_ITEMS_PER_SET,
        f"{field}.items",
        f"{field} may hold at most {MAX_ITEMS_PER_SET} items (got {len(custom.items)})",
    )
    items: list[LabelledItem] = []
    seen: set[str] = set()
    for number, claim in enumerate(custom.items):
        where = f"{field}.items[{number}]"
        label = verdict_from_proto(claim.label) if is_known_enum(common_pb2.Verdict, claim.label) else None
        check(label is not None, f"{where}.label", f"{where}.label must be VERIFIED, DISPUTED or UNVERIFIABLE")
        raw = {
            "id": claim.id,
            "claim": claim.claim,
            "evidence": [{"title": e.title, "text": e.text} for e in claim.evidence],
            "label": label,
        }
        try:
            item = parse_item(raw, where)
        except ItemsFileError as error:
            raise ValidationError(str(error), field=where) from error
        check(item.id not in seen, f"{where}.id", f"{where}.id '{item.id}' is used twice in {custom.name}")
        seen.add(item.id)
        items.append(item)
    return custom.name, items


def plan_evaluation(request: evaluation_pb2.RunEvaluationRequest, settings: Settings, tenant_id: str) -> EvaluationPlan:
    """Validate a RunEvaluationRequest and draw its items; ValidationError with a readable message."""
    config = request.config
    models = tuple(config.checker_models)
    check(
        0 < len(models) <= MAX_CHECKERS,
        "config.checker_models",
        f"config.checker_models must list 1 to {MAX_CHECKERS} models (got {len(models)})",
    )
    check(len(set(models)) == len(models), "config.checker_models", "config.checker_models lists a model twice")
    for index, model in enumerate(models):
        check_checker_model(f"config.checker_models[{index}]", model, settings)
    check(
        len(config.sets) + len(config.custom_sets) > 0,
        "config.sets",
        f"name at least one set (config.sets: {', '.join(sorted(SHIPPED_SETS))}; or config.custom_sets)",
    )
    check(
        len(config.sets) + len(config.custom_sets) <= MAX_SETS,
        "config.sets",
        f"an evaluation may use at most {MAX_SETS} sets",
    )
    limit = bounded("config.limit", config.limit, 1, MAX_ITEMS_PER_SET) if config.HasField("limit") else None
    seed = config.seed if config.HasField("seed") else 0
    concurrency = (
        bounded("config.concurrency", config.concurrency, 1, MAX_CONCURRENCY)
        if config.HasField("concurrency")
        else DEFAULT_CONCURRENCY
    )
    check_budget(config)
    names: list[str] = []
    drawn: list[DrawnSet] = []
    for index, name in enumerate(config.sets):
        field = f"config.sets[{index}]"
        check(name not in names, field, f"{field}: the set '{name[:80]}' is named twice")
        try:
            items = load_shipped_set(name)
        except UnknownSetError as error:
            raise ValidationError(f"{field}: {error}", field=field) from error
        names.append(name)
        drawn.append(DrawnSet(name, False, len(items), tuple(sample(items, limit, seed))))
    for index, custom in enumerate(config.custom_sets):
        name, items = _custom_set(index, custom)
        check(name not in names, f"config.custom_sets[{index}].name", f"the set '{name}' is named twice")
        names.append(name)
        drawn.append(DrawnSet(name, True, len(items), tuple(sample(items, limit, seed))))
    if config.fit_thresholds:
        _check_fittable(models, drawn, settings)
    plan = EvaluationPlan(
        tenant_id=tenant_id,
        checker_models=models,
        sets=tuple(drawn),
        limit=limit,
        seed=seed,
        budget=run_budget(config, settings, tenant_id),
        use_cache=config.use_cache if config.HasField("use_cache") else settings.cache_enabled,
        concurrency=concurrency,
        cache_ttl_s=settings.cache_ttl_s,
        timeout_ms=settings.stage_timeout_ms,
        fit_thresholds=config.fit_thresholds,
        threshold_evaluation_id=_threshold_evaluation_id(config),
    )
    check(
        plan.total <= MAX_TOTAL_ANSWERS,
        "config.limit",
        f"this evaluation needs {plan.total} checker answers; at most {MAX_TOTAL_ANSWERS} are allowed "
        "(set config.limit, or use fewer checkers or sets)",
    )
    return plan


def _threshold_evaluation_id(config: evaluation_pb2.EvaluationConfig) -> str | None:
    if not config.HasField("threshold_evaluation_id"):
        return None
    name, value = "config.threshold_evaluation_id", config.threshold_evaluation_id
    check(value.strip(), name, f"{name} must not be blank")
    check(len(value) <= MAX_EVALUATION_ID_CHARS, name, f"{name} must be at most {MAX_EVALUATION_ID_CHARS} characters")
    identifier(name, value)
    return value


def _check_fittable(models: tuple[str, ...], drawn: list[DrawnSet], settings: Settings) -> None:
    """ValidationError unless a threshold can be fitted: one set, a shipped set's dev half or the caller's own,
    holding items labelled VERIFIED and others; binary checkers only."""
    check(
        len(drawn) == 1,
        "config.fit_thresholds",
        "config.fit_thresholds fits a threshold on one set: name exactly one, a shipped set's dev half "
        f"(e.g. wice:dev) or your own (got {len(drawn)})",
    )
    for index, model in enumerate(models):
        check(
            grounding_kind(model, settings) is not None,
            f"config.checker_models[{index}]",
            f"config.checker_models[{index}]: {excerpt(model, 100)} has no threshold to fit (its verdicts do not "
            f"come from a probability read against one): config.fit_thresholds is for {BINARY_CHECKERS}",
        )
    [fitted_on] = drawn
    if not fitted_on.custom:
        base, split = shipped_set_and_split(fitted_on.name)
        where = "config.sets[0]"
        check(
            split is not None,
            where,
            f"{where}: a threshold is never fitted on a whole shipped set, which holds the test half it must then "
            f"be measured on: fit on {base}:dev, then measure on {base}:test",
        )
        check(
            split == DEV, where, f"{where}: {fitted_on.name} is a test half, which a fit never reads: fit on {base}:dev"
        )
    labels = {item.label for item in fitted_on.items}
    check(
        "VERIFIED" in labels and len(labels) > 1,
        "config.fit_thresholds",
        f"config.fit_thresholds: the items drawn from {fitted_on.name} are all labelled "
        f"{'VERIFIED' if 'VERIFIED' in labels else 'other than VERIFIED'}; a threshold that tells VERIFIED from "
        "the rest needs items of both",
    )


class NotResumable(Exception):
    """A stored evaluation that can no longer be planned as it started (its shipped set changed)."""


def plan_from_record(
    config: dict[str, Any], custom_items: dict[str, Any], tenant_id: str, settings: Settings, budget: Budget
) -> EvaluationPlan:
    """A stored evaluation's plan: the same checkers and items, with `budget`."""
    drawn: list[DrawnSet] = []
    for stored in config["sets"]:
        if stored["custom"]:
            items = [parse_item(raw, f"{stored['name']} item") for raw in custom_items.get(stored["name"], [])]
        else:
            try:
                by_id = {item.id: item for item in load_shipped_set(stored["name"])}
            except UnknownSetError as error:
                raise NotResumable(str(error)) from error
            missing = [item_id for item_id in stored["itemIds"] if item_id not in by_id]
            if missing:
                raise NotResumable(
                    f"the shipped set '{stored['name']}' no longer holds {len(missing)} of the items this "
                    f"evaluation drew (e.g. '{missing[0]}'): it changed with an upgrade; start a new evaluation"
                )
            items = [by_id[item_id] for item_id in stored["itemIds"]]
        drawn.append(DrawnSet(stored["name"], stored["custom"], stored["available"], tuple(items)))
    return EvaluationPlan(
        tenant_id=tenant_id,
        checker_models=tuple(config["checkerModels"]),
        sets=tuple(drawn),
        limit=config.get("limit"),
        seed=config.get("seed", 0),
        budget=budget,
        use_cache=bool(config.get("useCache")),
        concurrency=int(config.get("concurrency") or DEFAULT_CONCURRENCY),
        cache_ttl_s=settings.cache_ttl_s,
        timeout_ms=settings.stage_timeout_ms,
        fit_thresholds=bool(config.get("fitThresholds")),
        threshold_evaluation_id=config.get("thresholdEvaluationId"),
        checker_thresholds={
            model: ChosenThreshold.from_json(model, data)
            for model, data in (config.get("checkerThresholds") or {}).items()
        },
    )


def drawn_items(
    config: dict[str, Any], custom_items: dict[str, Any], set_names: Iterable[str]
) -> dict[tuple[str, str], LabelledItem]:
    """The items a stored evaluation drew from these sets, by (set, item id): what its answers are
    shown with. A shipped set the gateway no longer ships (or that lost items in an upgrade) gives none."""
    wanted = set(set_names)
    found: dict[tuple[str, str], LabelledItem] = {}
    for stored in config["sets"]:
        name = stored["name"]
        if name not in wanted:
            continue
        if stored["custom"]:
            items = [parse_item(raw, f"{name} item") for raw in custom_items.get(name, [])]
        else:
            try:
                items = load_shipped_set(name)
            except UnknownSetError:
                continue
        drawn = set(stored["itemIds"])
        found.update({(name, item.id): item for item in items if item.id in drawn})
    return found


def stored_budget(config: dict[str, Any]) -> Budget:
    budget = config.get("budget") or {}
    return Budget(budget.get("maxCostUsd"), budget.get("maxTokens"))
