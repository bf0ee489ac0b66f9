"""Entailment mode's result, rebuilt from its stage rows (each agent output, each item's final output)
and the run's failures (agents that gave no output)."""

from __future__ import annotations

from factcheck.core.entailment_rules import final_from_json, output_from_json
from factcheck.v1 import entailment_pb2 as pb
from factcheck.v1 import factcheck_pb2
from factcheck_gateway.modes.entailment.plan import items_from, run_config_from
from factcheck_gateway.modes.entailment.stages import AGENT_BY_KEY, FINAL, parse_stage
from factcheck_gateway.modes.entailment.steps import ItemResult, summary_of
from factcheck_gateway.runs.run import stored_data
from factcheck_gateway.store.records import MessageRecord, StageRecord


def fill_entailment_result(
    result: factcheck_pb2.FactCheckResult, message: MessageRecord, stages: list[StageRecord]
) -> None:
    config = message.request_config
    entailment = result.entailment
    entailment.config.CopyFrom(run_config_from(config))
    items = [
        pb.EntailmentItemResult(item_index=index, item=item.to_proto()) for index, item in enumerate(items_from(config))
    ]
    for stage in stages:
        parsed = parse_stage(stage.stage_type)
        if parsed is None or parsed[0] >= len(items):
            continue
        index, kind = parsed
        data = stored_data(stage)
        if kind == FINAL:
            if "final" in data:
                items[index].final.CopyFrom(final_from_json(data["final"]))
            if data.get("error"):
                items[index].error = data["error"]
            continue
        output = output_from_json(data)
        getattr(items[index], kind).CopyFrom(getattr(output, kind))
    for failure in message.failures:
        parsed = parse_stage(failure.get("stage", ""))
        if parsed is not None and parsed[0] < len(items) and parsed[1] in AGENT_BY_KEY:
            index, kind = parsed
            items[index].failures.append(
                pb.EntailmentAgentFailure(
                    agent=AGENT_BY_KEY[kind],
                    model=failure.get("model", ""),
                    message=f"{failure.get('code', '')}: {failure.get('message', '')}",
                )
            )
    entailment.items.extend(items)
    finished = [
        ItemResult(final=item.final if item.HasField("final") else None, error=item.error or None)
        for item in items
        if item.HasField("final") or item.HasField("error")
    ]
    entailment.summary.CopyFrom(summary_of(finished))
