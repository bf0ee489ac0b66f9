"""Entailment mode's request: its config (RunRequest.entailment_config) checked, with every default applied."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from google.protobuf import json_format

from factcheck.kit.settings import Settings
from factcheck.v1 import entailment_pb2, factcheck_pb2
from factcheck_gateway.modes.entailment.stages import MAX_ITEMS
from factcheck_gateway.request_validation import RunBasics, check, check_model, stage_timeout_ms, storable

FIELD = "entailment_config"
MAX_CLAIM_CHARS = 2_000
MAX_EXCERPT_CHARS = 20_000
MAX_SOURCE_TYPE_CHARS = 500
AGENTS = ("extractor", "reliability", "judge", "auditor")


@dataclass(frozen=True)
class EntailmentItem:
    claim: str
    source_excerpt: str
    source_type: str

    def to_proto(self) -> entailment_pb2.EntailmentItem:
        return entailment_pb2.EntailmentItem(
            claim=self.claim, source_excerpt=self.source_excerpt, source_type=self.source_type
        )


@dataclass(frozen=True)
class EntailmentPlan:
    """A validated entailment request with every default applied."""

    mode_name: ClassVar[str] = "entailment"

    question: str
    conversation_id: str | None
    tenant_id: str
    items: tuple[EntailmentItem, ...]
    extractor_model: str
    reliability_model: str
    judge_model: str
    auditor_model: str
    timeout_ms: int
    max_parallel_items: int
    # The Plan protocol's title writer; entailment runs have no title step.
    reporter_model: str = ""

    def request_config(self) -> dict:
        return {
            "mode": self.mode_name,
            "items": [
                {"claim": i.claim, "sourceExcerpt": i.source_excerpt, "sourceType": i.source_type} for i in self.items
            ],
            "extractorModel": self.extractor_model,
            "reliabilityModel": self.reliability_model,
            "judgeModel": self.judge_model,
            "auditorModel": self.auditor_model,
            "timeoutMs": self.timeout_ms,
            "maxParallelItems": self.max_parallel_items,
        }

    def run_config(self) -> entailment_pb2.EntailmentRunConfig:
        return entailment_pb2.EntailmentRunConfig(
            extractor_model=self.extractor_model,
            reliability_model=self.reliability_model,
            judge_model=self.judge_model,
            auditor_model=self.auditor_model,
            item_count=len(self.items),
            timeout_ms=self.timeout_ms,
            max_parallel_items=self.max_parallel_items,
        )


def run_config_from(config: dict) -> entailment_pb2.EntailmentRunConfig:
    """The resolved config of a stored run (GetResult)."""
    return entailment_pb2.EntailmentRunConfig(
        extractor_model=config.get("extractorModel") or "",
        reliability_model=config.get("reliabilityModel") or "",
        judge_model=config.get("judgeModel") or "",
        auditor_model=config.get("auditorModel") or "",
        item_count=len(config.get("items") or []),
        timeout_ms=int(config.get("timeoutMs") or 0),
        max_parallel_items=int(config.get("maxParallelItems") or 0),
    )


def items_from(config: dict) -> list[EntailmentItem]:
    return [
        EntailmentItem(i.get("claim", ""), i.get("sourceExcerpt", ""), i.get("sourceType", ""))
        for i in config.get("items") or []
    ]


def plan_entailment(request: factcheck_pb2.RunRequest, settings: Settings, basics: RunBasics) -> EntailmentPlan:
    """Check entailment mode's config and fill in its defaults."""
    check(request.HasField(FIELD), FIELD, "A MODE_ENTAILMENT run needs entailment_config (its items)")
    config = request.entailment_config
    count = len(config.items)
    check(1 <= count <= MAX_ITEMS, f"{FIELD}.items", f"{FIELD}.items must list 1 to {MAX_ITEMS} items (got {count})")
    items = tuple(_item(f"{FIELD}.items[{index}]", item) for index, item in enumerate(config.items))
    default = config.model or settings.default_entailment_model
    check_model(f"{FIELD}.model", default, settings)
    models = {}
    for agent in AGENTS:
        models[agent] = getattr(config, f"{agent}_model") or default
        check_model(f"{FIELD}.{agent}_model", models[agent], settings)
    return EntailmentPlan(
        question=basics.question,
        conversation_id=basics.conversation_id,
        tenant_id=basics.tenant_id,
        items=items,
        extractor_model=models["extractor"],
        reliability_model=models["reliability"],
        judge_model=models["judge"],
        auditor_model=models["auditor"],
        timeout_ms=stage_timeout_ms(config, f"{FIELD}.timeout_ms", settings),
        max_parallel_items=settings.entailment_max_parallel_items,
        reporter_model=settings.default_reporter_model,
    )


def _item(field: str, item: entailment_pb2.EntailmentItem) -> EntailmentItem:
    check(item.claim.strip(), f"{field}.claim", f"{field}.claim must contain text")
    check(
        len(item.claim) <= MAX_CLAIM_CHARS,
        f"{field}.claim",
        f"{field}.claim must be at most {MAX_CLAIM_CHARS} characters",
    )
    check(
        len(item.source_excerpt) <= MAX_EXCERPT_CHARS,
        f"{field}.source_excerpt",
        f"{field}.source_excerpt must be at most {MAX_EXCERPT_CHARS} characters",
    )
    check(item.source_type.strip(), f"{field}.source_type", f"{field}.source_type must describe the source")
    check(
        len(item.source_type) <= MAX_SOURCE_TYPE_CHARS,
        f"{field}.source_type",
        f"{field}.source_type must be at most {MAX_SOURCE_TYPE_CHARS} characters",
    )
    for name in ("claim", "source_excerpt", "source_type"):
        storable(f"{field}.{name}", getattr(item, name))
    return EntailmentItem(item.claim, item.source_excerpt, item.source_type)


def request_from_config(config: dict[str, Any]) -> entailment_pb2.EntailmentConfig:
    """The resolved entailment_config of a stored run, from its request_config (EntailmentPlan.request_config(),
    whose keys are EntailmentConfig's JSON names; the keys that name no field are skipped)."""
    return json_format.ParseDict(config, entailment_pb2.EntailmentConfig(), ignore_unknown_fields=True)
