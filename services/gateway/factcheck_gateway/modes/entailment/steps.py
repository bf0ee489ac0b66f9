"""Entailment mode: every item through extractor and reliability (at once), judge, auditor;
items judged independently, at most `max_parallel_items` at a time. The agents run in the checker
service (CheckerService.RunEntailmentAgent); the gateway only orchestrates, stores and aggregates
(factcheck.core.entailment_agents / factcheck.core.entailment_rules: the same runner and rules as the checker strategy).

Each agent output is stored (its stage row) and streamed (entailment_agent_complete) as it arrives,
each item's final aggregated output likewise (entailment_item_complete, or entailment_item_failed
when its extractor or judge failed). A resumed run takes every stored agent output from its row and
asks only for the rest. When every item failed the run fails; otherwise it completes.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

import grpc

from factcheck.core.entailment_agents import AgentFailed, AgentModels, ItemOutcome, judge_item
from factcheck.core.entailment_rules import final_from_json, final_json, output_from_json, output_json, verdict_name
from factcheck.v1 import entailment_pb2 as pb
from factcheck.v1 import factcheck_pb2
from factcheck_gateway.modes.entailment.plan import EntailmentPlan
from factcheck_gateway.modes.entailment.stages import ROLE_AGGREGATOR, agent_role, agent_stage, final_stage
from factcheck_gateway.runs.run import Run, RunFailed, rpc_error_text, rpc_failure, stored_data

log = logging.getLogger("factcheck.gateway.entailment")

ALL_ITEMS_FAILED = "Every entailment item failed; the agents' outputs are stored."


@dataclass
class ItemResult:
    final: pb.EntailmentFinal | None = None
    error: str | None = None


@dataclass
class EntailmentRun(Run[EntailmentPlan]):
    """An entailment run: each item's final output or error, by item index."""

    results: dict[int, ItemResult] = field(default_factory=dict)

    @property
    def entailment_plan(self) -> EntailmentPlan:
        return self.plan


async def start(run: EntailmentRun) -> None:
    await run.emit(
        "factcheck_start",
        factcheck_pb2.FactCheckStartPayload(
            conversation_id=run.conversation_id,
            message_id=run.message_id,
            mode=factcheck_pb2.MODE_ENTAILMENT,
            entailment=run.entailment_plan.run_config(),
        ),
    )


async def judge_items(run: EntailmentRun) -> None:
    plan = run.entailment_plan
    await run.emit("entailment_start", pb.EntailmentStartPayload(item_count=len(plan.items)))
    models = AgentModels(plan.extractor_model, plan.reliability_model, plan.judge_model, plan.auditor_model)
    slots = asyncio.Semaphore(plan.max_parallel_items)

    async def one(index: int) -> None:
        async with slots:
            await _judge_one(run, index, models)

    tasks = [asyncio.create_task(one(index)) for index in range(len(plan.items))]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()


async def _judge_one(run: EntailmentRun, index: int, models: AgentModels) -> None:
    final_type = final_stage(index)
    if (stored := run.stored.get(final_type[0])) is not None:
        data = stored_data(stored)
        run.results[index] = ItemResult(
            final=final_from_json(data["final"]) if "final" in data else None, error=data.get("error")
        )
        return
    item = run.entailment_plan.items[index].to_proto()

    async def call(request: pb.RunEntailmentAgentRequest) -> pb.RunEntailmentAgentResponse:
        agent = _agent_of(request)
        stage = agent_stage(index, agent)
        if (row := run.stored.get(stage[0])) is not None:  # an earlier attempt's output
            output = output_from_json(stored_data(row))
            return pb.RunEntailmentAgentResponse(
                model=row.model or "", agent=agent, output=output, raw_text=row.content or ""
            )
        try:
            return await run.downstream.checker.RunEntailmentAgent(request, timeout=run.stage_timeout_s)
        except grpc.aio.AioRpcError as error:
            log.warning("%s: item %d %s failed: %s", run.message_id, index, stage[0], rpc_error_text(error))
            failure = rpc_failure(stage[0], request.model, error)
            run.failures.append(failure)
            raise AgentFailed(f"{failure['code']}: {failure['message']}") from None

    async def listener(agent: pb.EntailmentAgent, model: str, response, failure: str | None) -> None:
        stage = agent_stage(index, agent)
        if response is None:
            await run.emit(
                "entailment_agent_failed",
                pb.EntailmentAgentFailedPayload(item_index=index, agent=agent, model=model, message=failure),
            )
            return
        if stage[0] in run.stored:
            return
        data = output_json(response.output)
        data.update(attempts=response.attempts, structured=response.structured)
        await run.save_stage(
            stage,
            agent_role(agent),
            model,
            response.raw_text,
            data,
            response.response_time_ms,
            event=(
                "entailment_agent_complete",
                pb.EntailmentAgentCompletePayload(
                    item_index=index,
                    agent=agent,
                    model=model,
                    output=response.output,
                    response_time_ms=response.response_time_ms,
                ),
            ),
        )

    outcome = await judge_item(item, models, call, listener)
    await _save_final(run, index, outcome)


def _agent_of(request: pb.RunEntailmentAgentRequest) -> pb.EntailmentAgent:
    return getattr(pb, f"ENTAILMENT_AGENT_{request.WhichOneof('input').upper()}")


async def _save_final(run: EntailmentRun, index: int, outcome: ItemOutcome) -> None:
    run.results[index] = ItemResult(final=outcome.final, error=outcome.error)
    event: tuple[str, Any]
    data: dict[str, Any]
    if outcome.final is None:
        event = ("entailment_item_failed", pb.EntailmentItemFailedPayload(item_index=index, message=outcome.error))
        data = {"error": outcome.error}
    else:
        event = ("entailment_item_complete", pb.EntailmentItemCompletePayload(item_index=index, final=outcome.final))
        data = {"final": final_json(outcome.final)}
    await run.save_stage(final_stage(index), ROLE_AGGREGATOR, None, None, data, 0, event=event)


def summary_of(results) -> pb.EntailmentCompletePayload:
    verdicts = [verdict_name(r.final.final_verdict) for r in results if r.final is not None]
    return pb.EntailmentCompletePayload(
        supported=verdicts.count("SUPPORTED"),
        contradicted=verdicts.count("CONTRADICTED"),
        not_enough_info=verdicts.count("NOT ENOUGH INFO"),
        failed=sum(1 for r in results if r.final is None),
    )


async def conclude(run: EntailmentRun) -> None:
    results = [run.results[index] for index in sorted(run.results)]
    if results and all(result.final is None for result in results):
        raise RunFailed(ALL_ITEMS_FAILED)
    await run.emit("entailment_complete", summary_of(results))


async def stages(run: EntailmentRun):
    yield judge_items
    yield conclude
