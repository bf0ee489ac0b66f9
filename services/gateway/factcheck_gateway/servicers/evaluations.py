"""EvaluationService: checker models measured on labelled sets, within the caller's tenant.

RunEvaluation and ResumeEvaluation execute the evaluation while their caller listens: the stream
carries its progress, and a caller that goes away stops it as CANCELLED (everything judged is
stored; ResumeEvaluation continues it on any gateway). Another tenant's evaluations are NOT_FOUND
exactly as unknown ones.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from factcheck.evaluation.sets import SHIPPED_SETS
from factcheck.kit.errors import FailedPrecondition, NotFound, Reason
from factcheck.kit.security.tenants import caller_tenant
from factcheck.kit.settings import Settings
from factcheck.text.text_safety import excerpt
from factcheck.v1 import checker_pb2_grpc, evaluation_pb2, evaluation_pb2_grpc
from factcheck_gateway.evaluations.plan import (
    EvaluationPlan,
    NotResumable,
    plan_evaluation,
    plan_from_record,
    stored_budget,
)
from factcheck_gateway.evaluations.runner import SHUTTING_DOWN, EvaluationRunner
from factcheck_gateway.evaluations.scores import checker_score
from factcheck_gateway.evaluations.store import EvaluationRecord, EvaluationStore
from factcheck_gateway.ledger.budget import run_budget
from factcheck_gateway.ledger.pricing import Pricing
from factcheck_gateway.ledger.totals import UsageTotals
from factcheck_gateway.request_validation import check_budget
from factcheck_gateway.runs.database_calls import call_store, page_size, resource_id
from factcheck_gateway.runs.registry import gateway_owner_id
from factcheck_gateway.store.models import FINAL_STATUSES, STATUS_COMPLETE, utc_now
from factcheck_gateway.stored_results import timestamp

log = logging.getLogger("factcheck.gateway.evaluations")

EVALUATIONS_UNAVAILABLE = "The evaluations database is unavailable. Try again shortly."
CANCELLED_BY_CALLER = "Cancelled by the caller; ResumeEvaluation continues it."
# How long Cancel waits for this gateway's own evaluation to store its end.
CANCEL_WAIT_S = 5.0

_STATUS = {
    "RUNNING": evaluation_pb2.EVALUATION_STATUS_RUNNING,
    "COMPLETE": evaluation_pb2.EVALUATION_STATUS_COMPLETE,
    "PARTIAL": evaluation_pb2.EVALUATION_STATUS_PARTIAL,
    "FAILED": evaluation_pb2.EVALUATION_STATUS_FAILED,
    "CANCELLED": evaluation_pb2.EVALUATION_STATUS_CANCELLED,
}


def _not_found(evaluation_id: str) -> NotFound:
    return NotFound(
        f"No evaluation with evaluation_id '{excerpt(evaluation_id)}'",
        reason=Reason.RESULT_NOT_FOUND,
        resource_type="factcheck.v1.Evaluation",
        resource_name=evaluation_id,
    )


def _now() -> Timestamp:
    stamp = Timestamp()
    stamp.GetCurrentTime()
    return stamp


class EvaluationService(evaluation_pb2_grpc.EvaluationServiceServicer):
    def __init__(
        self, store: EvaluationStore, checker: checker_pb2_grpc.CheckerServiceStub, settings: Settings
    ) -> None:
        self._store = store
        self._checker = checker
        self._settings = settings
        self._pricing = Pricing.from_settings(settings)
        self.owner = gateway_owner_id()
        # The evaluations this gateway executes, by id: what a local Cancel and shutdown stop.
        self._running: dict[str, tuple[EvaluationRunner, asyncio.Task]] = {}

    # --- running ------------------------------------------------------------------------------------

    async def RunEvaluation(
        self, request: evaluation_pb2.RunEvaluationRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[evaluation_pb2.RunEvaluationResponse]:
        tenant = caller_tenant()
        plan = await asyncio.to_thread(plan_evaluation, request, self._settings, tenant)
        evaluation_id = str(uuid.uuid4())
        await call_store(
            EVALUATIONS_UNAVAILABLE,
            self._store.create,
            evaluation_id,
            tenant,
            self.owner,
            plan.config_json(),
            plan.custom_items_json(),
            plan.total,
        )
        runner = self._runner(evaluation_id, plan, stored=[], spent=UsageTotals())
        async for event in self._execute(runner):
            yield evaluation_pb2.RunEvaluationResponse(event=event)

    async def ResumeEvaluation(
        self, request: evaluation_pb2.ResumeEvaluationRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[evaluation_pb2.ResumeEvaluationResponse]:
        tenant = caller_tenant()
        evaluation_id = resource_id("evaluation_id", request.evaluation_id)
        check_budget(request)
        record = await self._existing(evaluation_id, tenant)
        if record.status == STATUS_COMPLETE:
            raise FailedPrecondition(
                "The evaluation is COMPLETE: every checker answered every item. Start a new one to measure again.",
                reason=Reason.RUN_ALREADY_FINISHED,
                metadata={"status": record.status},
            )
        budget = (
            run_budget(request, self._settings, tenant) if request.HasField("budget") else stored_budget(record.config)
        )
        try:
            plan = await asyncio.to_thread(
                plan_from_record, record.config, record.custom_items, tenant, self._settings, budget
            )
        except NotResumable as error:
            raise FailedPrecondition(
                f"The evaluation cannot be resumed: {error}", reason=Reason.INVALID_REQUEST
            ) from None
        config = {**record.config, "budget": {"maxCostUsd": budget.max_cost_usd, "maxTokens": budget.max_tokens}}
        stale_before = utc_now() - timedelta(seconds=self._settings.run_lease_s)
        claimed = await call_store(
            EVALUATIONS_UNAVAILABLE, self._store.claim, evaluation_id, tenant, self.owner, stale_before, config
        )
        if not claimed:
            raise FailedPrecondition(
                "The evaluation is running on a gateway now; cancel it first, or wait for it to end.",
                reason=Reason.RUN_STILL_RUNNING,
            )
        stored = await call_store(EVALUATIONS_UNAVAILABLE, self._store.items, evaluation_id)
        if request.HasField("budget"):
            spent = UsageTotals()  # a new budget is for what is left
        else:
            usage = await call_store(EVALUATIONS_UNAVAILABLE, self._store.usage, [evaluation_id])
            spent = usage.get(evaluation_id, UsageTotals())
        runner = self._runner(evaluation_id, plan, stored=stored, spent=spent)
        async for event in self._execute(runner):
            yield evaluation_pb2.ResumeEvaluationResponse(event=event)

    def _runner(self, evaluation_id: str, plan: EvaluationPlan, *, stored, spent: UsageTotals) -> EvaluationRunner:
        return EvaluationRunner(
            evaluation_id,
            plan,
            self._store,
            self._checker,
            self._pricing,
            self.owner,
            self._settings.run_lease_s,
            stored=stored,
            spent=spent,
            ledger_enabled=self._settings.ledger_enabled,
        )

    async def _execute(self, runner: EvaluationRunner) -> AsyncIterator[evaluation_pb2.EvaluationEvent]:
        """Run the evaluation in a task of its own and hand on its events; when the caller goes away the
        task is cancelled, and it stores CANCELLED."""
        events: asyncio.Queue[evaluation_pb2.EvaluationEvent | None] = asyncio.Queue()
        evaluation_id = runner.evaluation_id

        async def emit(field_name: str, payload) -> None:
            event = evaluation_pb2.EvaluationEvent(evaluation_id=evaluation_id, timestamp=_now())
            getattr(event, field_name).CopyFrom(payload)
            events.put_nowait(event)

        async def execute() -> None:
            try:
                status, reason = await runner.execute(emit)
                ended = await asyncio.shield(
                    asyncio.to_thread(self._store.finish, evaluation_id, self.owner, status, reason)
                )
                if not ended:
                    log.info("%s: ended elsewhere before it could store %s", evaluation_id, status)
                record = await asyncio.to_thread(self._store.get, evaluation_id, runner.plan.tenant_id)
                if record is not None:
                    await emit("finished", await asyncio.to_thread(self._evaluation, record, True))
            finally:
                events.put_nowait(None)

        task = asyncio.create_task(execute(), name=f"evaluation-{evaluation_id}")
        self._running[evaluation_id] = (runner, task)
        task.add_done_callback(lambda _: self._running.pop(evaluation_id, None))
        try:
            while (event := await events.get()) is not None:
                yield event
            await task  # raises what ended it, if anything did
        finally:
            if not task.done():  # the caller went away
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    # --- stopping -----------------------------------------------------------------------------------

    async def CancelEvaluation(
        self, request: evaluation_pb2.CancelEvaluationRequest, context: grpc.aio.ServicerContext
    ) -> evaluation_pb2.CancelEvaluationResponse:
        tenant = caller_tenant()
        evaluation_id = resource_id("evaluation_id", request.evaluation_id)
        record = await self._existing(evaluation_id, tenant)
        if record.status in FINAL_STATUSES:
            raise FailedPrecondition(
                f"The evaluation already ended with status {record.status}; only a running evaluation can be cancelled.",
                reason=Reason.RUN_ALREADY_FINISHED,
                metadata={"status": record.status},
            )
        local = self._running.get(evaluation_id)
        if local is not None:
            runner, task = local
            runner.cancel_reason = CANCELLED_BY_CALLER
            task.cancel()
            await asyncio.wait([task], timeout=CANCEL_WAIT_S)
        # Another gateway's (or a stopped gateway's) evaluation: ended in the store; its runner stops at its next write.
        await call_store(EVALUATIONS_UNAVAILABLE, self._store.cancel, evaluation_id, tenant, CANCELLED_BY_CALLER)
        record = await self._existing(evaluation_id, tenant)
        return evaluation_pb2.CancelEvaluationResponse(status=_STATUS[record.status])

    async def stop(self) -> None:
        """Shutdown: stop this gateway's evaluations (stored CANCELLED, resumable)."""
        for runner, task in list(self._running.values()):
            runner.cancel_reason = SHUTTING_DOWN
            task.cancel()
        await asyncio.gather(*(task for _, task in list(self._running.values())), return_exceptions=True)

    # --- reading ------------------------------------------------------------------------------------

    async def GetEvaluation(
        self, request: evaluation_pb2.GetEvaluationRequest, context: grpc.aio.ServicerContext
    ) -> evaluation_pb2.GetEvaluationResponse:
        record = await self._existing(resource_id("evaluation_id", request.evaluation_id), caller_tenant())
        evaluation = await call_store(EVALUATIONS_UNAVAILABLE, self._evaluation, record, True)
        return evaluation_pb2.GetEvaluationResponse(evaluation=evaluation)

    async def ListEvaluations(
        self, request: evaluation_pb2.ListEvaluationsRequest, context: grpc.aio.ServicerContext
    ) -> evaluation_pb2.ListEvaluationsResponse:
        size, token = page_size(request.page_size), request.page_token or None
        records, next_token = await call_store(
            EVALUATIONS_UNAVAILABLE, self._store.list_evaluations, caller_tenant(), size, token
        )
        ids = [record.id for record in records]
        done = await call_store(EVALUATIONS_UNAVAILABLE, self._store.counts_done, ids)
        usage = await call_store(EVALUATIONS_UNAVAILABLE, self._store.usage, ids)
        return evaluation_pb2.ListEvaluationsResponse(
            evaluations=[_summary(record, done.get(record.id, 0), usage.get(record.id)) for record in records],
            next_page_token=next_token or "",
        )

    async def ListEvaluationSets(
        self, request: evaluation_pb2.ListEvaluationSetsRequest, context: grpc.aio.ServicerContext
    ) -> evaluation_pb2.ListEvaluationSetsResponse:
        return evaluation_pb2.ListEvaluationSetsResponse(
            sets=[
                evaluation_pb2.EvaluationSet(
                    name=info.name,
                    title=info.title,
                    description=info.description,
                    licence=info.licence,
                    items=info.items,
                )
                for info in sorted(SHIPPED_SETS.values(), key=lambda info: info.name)
            ]
        )

    async def _existing(self, evaluation_id: str, tenant: str) -> EvaluationRecord:
        record = await call_store(EVALUATIONS_UNAVAILABLE, self._store.get, evaluation_id, tenant)
        if record is None:
            raise _not_found(evaluation_id)
        return record

    def _evaluation(self, record: EvaluationRecord, with_scores: bool) -> evaluation_pb2.Evaluation:
        """The stored evaluation with its scores, computed from its stored answers (in a worker thread)."""
        answers = self._store.items(record.id)
        usage = self._store.usage([record.id]).get(record.id)
        done = sum(1 for answer in answers if not answer.failed)
        evaluation = _summary(record, done, usage)
        if with_scores:
            by_pair: dict[tuple[str, str], list] = {}
            for answer in answers:
                by_pair.setdefault((answer.checker_model, answer.set_name), []).append(answer)
            for model in record.config["checkerModels"]:
                for stored in record.config["sets"]:
                    pair = by_pair.get((model, stored["name"]), [])
                    evaluation.scores.append(checker_score(model, stored["name"], len(stored["itemIds"]), pair))
        return evaluation


def _summary(record: EvaluationRecord, done: int, usage: UsageTotals | None) -> evaluation_pb2.Evaluation:
    config = record.config
    evaluation = evaluation_pb2.Evaluation(
        evaluation_id=record.id,
        status=_STATUS[record.status],
        checker_models=config["checkerModels"],
        sets=[
            evaluation_pb2.EvaluationSetSummary(
                name=s["name"], custom=s["custom"], items=len(s["itemIds"]), available=s["available"]
            )
            for s in config["sets"]
        ],
        limit=config.get("limit") or 0,
        seed=config.get("seed") or 0,
        done=done,
        total=record.total,
        usage=(usage or UsageTotals()).to_proto(),
        created_at=timestamp(record.created_at),
        updated_at=timestamp(record.updated_at),
    )
    if record.error_message is not None:
        evaluation.error_message = record.error_message
    return evaluation
