"""EvaluationService: checker models measured on labelled sets, within the caller's tenant.

An evaluation runs in a task of the gateway, not of the call that started it: RunEvaluation and
ResumeEvaluation start it and then follow its stored events exactly as WatchEvaluation does, so a
caller that goes away (or a connection the server recycles) leaves it running. Only CancelEvaluation,
its budget or a fatal error end it. A gateway shutting down hands its evaluations on (still RUNNING,
owned by none), and every gateway's recovery pass resumes evaluations handed on or whose gateway died
(its heartbeat older than FACTCHECK_RUN_LEASE_S). Another tenant's evaluations are NOT_FOUND exactly
as unknown ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from typing import Any

import grpc
from sqlalchemy.exc import SQLAlchemyError

from factcheck.core.domain import is_known_enum, verdict_from_proto, verdict_to_proto
from factcheck.evaluation.sets import SHIPPED_SETS
from factcheck.kit.errors import FailedPrecondition, NotFound, Reason, check_argument
from factcheck.kit.security.tenants import caller_tenant
from factcheck.kit.settings import Settings
from factcheck.text.text_safety import excerpt
from factcheck.v1 import checker_pb2_grpc, common_pb2, evaluation_pb2, evaluation_pb2_grpc
from factcheck_gateway.evaluations import thresholds
from factcheck_gateway.evaluations.compare import RESAMPLES, compare
from factcheck_gateway.evaluations.messages import STATUS, drawn_sets, evaluation_item, evaluation_summary
from factcheck_gateway.evaluations.plan import (
    EvaluationPlan,
    NotResumable,
    drawn_items,
    plan_evaluation,
    plan_from_record,
    stored_budget,
)
from factcheck_gateway.evaluations.runner import (
    CANCELLED_BY_CALLER,
    HANDED_ON,
    EvaluationRunner,
    event_of,
)
from factcheck_gateway.evaluations.scores import checker_score, headline, headlines
from factcheck_gateway.evaluations.store import EvaluationRecord, EvaluationStore, ItemFilter
from factcheck_gateway.evaluations.watch import watch_evaluation
from factcheck_gateway.grounding_checkers import confirm_grounding_checkers
from factcheck_gateway.ledger.budget import Budget, run_budget
from factcheck_gateway.ledger.pricing import Pricing
from factcheck_gateway.ledger.totals import UsageTotals
from factcheck_gateway.request_validation import ValidationError, check_budget, checking_against
from factcheck_gateway.runs.database_calls import call_store, page_size, resource_id
from factcheck_gateway.runs.recovery import recover_periodically
from factcheck_gateway.runs.registry import RECOVERY_BATCH, gateway_owner_id
from factcheck_gateway.runs.watch import EventHub
from factcheck_gateway.servable_models import ServableModelsCache
from factcheck_gateway.store.models import FINAL_STATUSES, STATUS_COMPLETE, STATUS_FAILED, utc_now

log = logging.getLogger("factcheck.gateway.evaluations")

EVALUATIONS_UNAVAILABLE = "The evaluations database is unavailable. Try again shortly."
# How long Cancel waits for this gateway's own evaluation to store its end.
CANCEL_WAIT_S = 5.0
DEFAULT_DISAGREEMENTS, MAX_DISAGREEMENTS = 100, 1_000
TOO_MANY_RECOVERIES = (
    "The evaluation was stopped: it lost its gateway {count} time(s) and FACTCHECK_MAX_RUN_RESUMES allows "
    "{limit} resume(s); resume it by hand to continue."
)
NOT_RESUMABLE = "The evaluation could not be resumed after its gateway stopped: {reason}"


def _not_found(evaluation_id: str) -> NotFound:
    return NotFound(
        f"No evaluation with evaluation_id '{excerpt(evaluation_id)}'",
        reason=Reason.EVALUATION_NOT_FOUND,
        resource_type="factcheck.v1.Evaluation",
        resource_name=evaluation_id,
    )


class EvaluationService(evaluation_pb2_grpc.EvaluationServiceServicer):
    def __init__(
        self,
        store: EvaluationStore,
        checker: checker_pb2_grpc.CheckerServiceStub,
        settings: Settings,
        hub: EventHub | None = None,
        servable_models: ServableModelsCache | None = None,
    ) -> None:
        self._store = store
        self._checker = checker
        # What the checker serves, for request validation (asked of it, kept a few seconds): the run registry's
        # cache where the gateway has one, so one answer serves runs and evaluations.
        self._servable_models = servable_models or ServableModelsCache(checker, settings)
        self._settings = settings
        self._hub = hub or EventHub()
        self._pricing = Pricing.from_settings(settings)
        self.owner = gateway_owner_id()
        # The evaluations this gateway executes, by id: what a local Cancel and shutdown stop.
        self._running: dict[str, tuple[EvaluationRunner, asyncio.Task]] = {}
        self._loops: list[asyncio.Task] = []

    # --- starting -----------------------------------------------------------------------------------

    async def RunEvaluation(
        self, request: evaluation_pb2.RunEvaluationRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[evaluation_pb2.RunEvaluationResponse]:
        tenant = caller_tenant()
        with checking_against(await self._servable_models.get()):
            plan = await asyncio.to_thread(plan_evaluation, request, self._settings, tenant)
        fields = [(f"config.checker_models[{i}]", model) for i, model in enumerate(plan.checker_models)]
        await confirm_grounding_checkers(fields, self._checker, self._settings)
        if plan.threshold_evaluation_id is not None:
            plan = await self._with_thresholds(plan)
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
        self._launch(self._runner(evaluation_id, plan, stored=[], spent=UsageTotals()))
        async for event in self._follow(evaluation_id, 0):
            yield evaluation_pb2.RunEvaluationResponse(event=event)

    async def _with_thresholds(self, plan: EvaluationPlan) -> EvaluationPlan:
        """The plan with the thresholds of the evaluation it names (INVALID_ARGUMENT when it gives none, or when
        this evaluation would measure them on the items they were fitted on)."""
        assert plan.threshold_evaluation_id is not None
        field = "config.threshold_evaluation_id"
        try:
            chosen = await call_store(
                EVALUATIONS_UNAVAILABLE,
                thresholds.look_up,
                self._store,
                plan.tenant_id,
                plan.threshold_evaluation_id,
                plan.checker_models,
            )
        except thresholds.Unusable as reason:
            raise ValidationError(f"{field}: {reason}", field=field) from None
        contaminated = thresholds.measured_on_fitted(chosen, [(s.name, s.custom) for s in plan.sets])
        if contaminated is not None:
            raise ValidationError(f"config.sets: {contaminated}", field="config.sets")
        return dataclasses.replace(plan, checker_thresholds=chosen)

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
                reason=Reason.EVALUATION_ALREADY_FINISHED,
                metadata={"status": record.status},
            )
        fresh = request.HasField("budget")
        budget = run_budget(request, self._settings, tenant) if fresh else stored_budget(record.config)
        try:
            plan = await asyncio.to_thread(
                plan_from_record, record.config, record.custom_items, tenant, self._settings, budget
            )
        except NotResumable as error:
            raise FailedPrecondition(
                f"The evaluation cannot be resumed: {error}", reason=Reason.INVALID_REQUEST
            ) from None
        claimed = await call_store(
            EVALUATIONS_UNAVAILABLE, self._store.claim, evaluation_id, tenant, self.owner, self._stale_before(),
            _with_budget(record.config, budget),
        )  # fmt: skip
        if claimed is None:
            raise FailedPrecondition(
                "The evaluation is running on a gateway now; cancel it first, or wait for it to end.",
                reason=Reason.EVALUATION_STILL_RUNNING,
            )
        await self._start_claimed(claimed, plan, fresh_budget=fresh)
        async for event in self._follow(evaluation_id, claimed.last_seq):
            yield evaluation_pb2.ResumeEvaluationResponse(event=event)

    async def WatchEvaluation(
        self, request: evaluation_pb2.WatchEvaluationRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[evaluation_pb2.WatchEvaluationResponse]:
        check_argument(request.after_seq >= 0, "after_seq", f"after_seq must not be negative (got {request.after_seq})")
        record = await self._existing(resource_id("evaluation_id", request.evaluation_id), caller_tenant())
        async for event in self._follow(record.id, request.after_seq):
            yield evaluation_pb2.WatchEvaluationResponse(event=event)

    def _follow(self, evaluation_id: str, after_seq: int) -> AsyncIterator[evaluation_pb2.EvaluationEvent]:
        return watch_evaluation(self._store, self._hub, evaluation_id, after_seq, self._settings.watch_poll_s)

    def _stale_before(self):
        return utc_now() - timedelta(seconds=self._settings.run_lease_s)

    async def _start_claimed(self, record: EvaluationRecord, plan: EvaluationPlan, *, fresh_budget: bool) -> None:
        """Launch a claimed evaluation with what it stored (a new budget counts from zero)."""
        stored = await call_store(EVALUATIONS_UNAVAILABLE, self._store.items, record.id)
        if fresh_budget:
            spent = UsageTotals()
        else:
            usage = await call_store(EVALUATIONS_UNAVAILABLE, self._store.usage, [record.id])
            spent = usage.get(record.id, UsageTotals())
        self._launch(self._runner(record.id, plan, stored=stored, spent=spent, fresh_budget=fresh_budget))

    def _runner(
        self, evaluation_id: str, plan: EvaluationPlan, *, stored, spent: UsageTotals, fresh_budget: bool = False
    ) -> EvaluationRunner:
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
            fresh_budget=fresh_budget,
            ledger_enabled=self._settings.ledger_enabled,
            poll_s=self._settings.watch_poll_s,
            on_event=self._hub.notify,
        )

    def _launch(self, runner: EvaluationRunner) -> asyncio.Task:
        evaluation_id = runner.evaluation_id
        task = asyncio.get_running_loop().create_task(self._execute(runner), name=f"evaluation-{evaluation_id}")
        self._running[evaluation_id] = (runner, task)
        task.add_done_callback(lambda _: self._running.pop(evaluation_id, None))
        return task

    async def _execute(self, runner: EvaluationRunner) -> None:
        """Run the evaluation to its end and store that end with its `finished` event (or hand it on)."""
        evaluation_id, tenant = runner.evaluation_id, runner.plan.tenant_id
        status, reason = await runner.execute()
        if status == HANDED_ON:
            with contextlib.suppress(SQLAlchemyError):
                await asyncio.shield(asyncio.to_thread(self._store.release, evaluation_id, self.owner))
            log.info("%s: handed on to the next gateway", evaluation_id)
            return
        final = self._final_event(evaluation_id, tenant, status, reason)
        try:
            if status == STATUS_COMPLETE and runner.plan.fit_thresholds:
                # Fitted and stored before the end, so the `finished` event and every read of it hold them.
                [fitted_on] = runner.plan.sets
                fitted = thresholds.fits(runner.plan.checker_models, fitted_on.name, runner.answers)
                saved = await asyncio.shield(
                    asyncio.to_thread(self._store.save_thresholds, evaluation_id, self.owner, fitted)
                )
                if not saved:
                    log.info("%s: ended elsewhere before its thresholds could be stored", evaluation_id)
                    return
            ended = await asyncio.shield(
                asyncio.to_thread(self._store.finish, evaluation_id, self.owner, status, reason, final)
            )
        except SQLAlchemyError:
            log.exception("%s: could not store its end (%s); a gateway's recovery resumes it", evaluation_id, status)
            return
        if not ended:
            log.info("%s: ended elsewhere before it could store %s", evaluation_id, status)
        self._hub.notify(evaluation_id)

    def _final_event(self, evaluation_id: str, tenant: str, status: str, reason: str | None) -> Callable[[], Any]:
        """What builds the `finished` event: the evaluation as GetEvaluation will return it, ended so."""

        def build() -> evaluation_pb2.EvaluationEvent:
            record = self._store.get(evaluation_id, tenant)
            assert record is not None  # (evaluations are never deleted)
            ended = dataclasses.replace(record, status=status, error_message=reason, owner=None)
            return event_of(evaluation_id, "finished", self._evaluation(ended))

        return build

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
                reason=Reason.EVALUATION_ALREADY_FINISHED,
                metadata={"status": record.status},
            )
        local = self._running.get(evaluation_id)
        if local is not None:
            runner, task = local
            runner.cancel_reason = CANCELLED_BY_CALLER
            task.cancel()
            await asyncio.wait([task], timeout=CANCEL_WAIT_S)
        # Another gateway's (or a stopped gateway's) evaluation: ended in the store, with its final event;
        # its runner stops at its next write or check.
        final = self._final_event(evaluation_id, tenant, "CANCELLED", CANCELLED_BY_CALLER)
        if await call_store(
            EVALUATIONS_UNAVAILABLE, self._store.cancel, evaluation_id, tenant, CANCELLED_BY_CALLER, final
        ):
            self._hub.notify(evaluation_id)
        record = await self._existing(evaluation_id, tenant)
        return evaluation_pb2.CancelEvaluationResponse(status=STATUS[record.status])

    def start(self, database_ready: Callable[[], Awaitable[None]]) -> None:
        """The recovery loop: resume evaluations handed on at a shutdown, or whose gateway died."""
        self._loops = [
            asyncio.get_running_loop().create_task(
                recover_periodically(
                    self.recover_once,
                    database_ready,
                    self._settings.recovery_interval_s,
                    what="evaluation recovery pass",
                    log=log,
                ),
                name="eval-recovery",
            )
        ]

    async def stop(self) -> None:
        """Shutdown: stop the recovery loop, and hand this gateway's evaluations on (RUNNING, owned by none:
        the next gateway's recovery pass resumes each with the items it has no answer for)."""
        for task in self._loops:
            task.cancel()
        running = list(self._running.values())
        for runner, task in running:
            runner.cancel_reason = HANDED_ON
            task.cancel()
        await asyncio.gather(*self._loops, *(task for _, task in running), return_exceptions=True)

    async def recover_once(self) -> int:
        """Claim the evaluations no gateway works on and resume (or end) each; how many were claimed."""
        found = await asyncio.to_thread(
            self._store.abandoned, self._stale_before(), list(self._running), RECOVERY_BATCH
        )
        claimed = 0
        for record in found:
            recoveries = int(record.config.get("recoveries", 0)) + 1
            config = {**record.config, "recoveries": recoveries}
            taken = await asyncio.to_thread(
                self._store.claim, record.id, record.tenant_id, self.owner, self._stale_before(), config
            )
            if taken is None:
                continue  # another gateway was quicker
            claimed += 1
            limit = self._settings.max_run_resumes
            if recoveries > limit:
                await self._end_claimed(taken, TOO_MANY_RECOVERIES.format(count=recoveries, limit=limit))
                continue
            try:
                plan = await asyncio.to_thread(
                    plan_from_record, taken.config, taken.custom_items, taken.tenant_id, self._settings,
                    stored_budget(taken.config),
                )  # fmt: skip
            except NotResumable as error:
                await self._end_claimed(taken, NOT_RESUMABLE.format(reason=error))
                continue
            log.info("%s: resuming an evaluation its gateway left (recovery %d)", taken.id, recoveries)
            await self._start_claimed(taken, plan, fresh_budget=False)
        return claimed

    async def _end_claimed(self, record: EvaluationRecord, reason: str) -> None:
        log.warning("%s: ending as FAILED: %s", record.id, reason)
        final = self._final_event(record.id, record.tenant_id, STATUS_FAILED, reason)
        await asyncio.to_thread(self._store.finish, record.id, self.owner, STATUS_FAILED, reason, final)
        self._hub.notify(record.id)

    # --- reading ------------------------------------------------------------------------------------

    async def GetEvaluation(
        self, request: evaluation_pb2.GetEvaluationRequest, context: grpc.aio.ServicerContext
    ) -> evaluation_pb2.GetEvaluationResponse:
        record = await self._existing(resource_id("evaluation_id", request.evaluation_id), caller_tenant())
        evaluation = await call_store(EVALUATIONS_UNAVAILABLE, self._evaluation, record)
        return evaluation_pb2.GetEvaluationResponse(evaluation=evaluation)

    async def ListEvaluations(
        self, request: evaluation_pb2.ListEvaluationsRequest, context: grpc.aio.ServicerContext
    ) -> evaluation_pb2.ListEvaluationsResponse:
        size, token = page_size(request.page_size), request.page_token or None
        records, next_token = await call_store(
            EVALUATIONS_UNAVAILABLE, self._store.list_evaluations, caller_tenant(), size, token
        )
        ids = [record.id for record in records]
        counts = await call_store(EVALUATIONS_UNAVAILABLE, self._store.answer_counts, ids)
        usage = await call_store(EVALUATIONS_UNAVAILABLE, self._store.usage, ids)
        fitted = await call_store(EVALUATIONS_UNAVAILABLE, self._store.thresholds, ids)
        evaluations = []
        for record in records:
            answered = counts.get(record.id, [])
            done = sum(row[-1] for row in answered if not row[5])
            found = headlines(record.config["checkerModels"], drawn_sets(record), answered)
            evaluations.append(evaluation_summary(record, done, usage.get(record.id), found, fitted.get(record.id, [])))
        return evaluation_pb2.ListEvaluationsResponse(evaluations=evaluations, next_page_token=next_token or "")

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
                    dev_items=info.dev_items,
                    test_items=info.items - info.dev_items,
                )
                for info in sorted(SHIPPED_SETS.values(), key=lambda info: info.name)
            ]
        )

    async def ListEvaluationItems(
        self, request: evaluation_pb2.ListEvaluationItemsRequest, context: grpc.aio.ServicerContext
    ) -> evaluation_pb2.ListEvaluationItemsResponse:
        tenant = caller_tenant()
        record = await self._existing(resource_id("evaluation_id", request.evaluation_id), tenant)
        size, token = page_size(request.page_size), request.page_token or None
        where = _item_filter(request)
        answers, next_token = await call_store(
            EVALUATIONS_UNAVAILABLE, self._store.page_items, record.id, tenant, where, size, token
        )
        claims = await asyncio.to_thread(
            drawn_items, record.config, record.custom_items, {stored.result.set_name for stored in answers}
        )
        return evaluation_pb2.ListEvaluationItemsResponse(
            items=[
                evaluation_item(stored, claims.get((stored.result.set_name, stored.result.item_id)))
                for stored in answers
            ],
            next_page_token=next_token or "",
        )

    async def CompareEvaluations(
        self, request: evaluation_pb2.CompareEvaluationsRequest, context: grpc.aio.ServicerContext
    ) -> evaluation_pb2.CompareEvaluationsResponse:
        tenant = caller_tenant()
        first = await self._existing(resource_id("evaluation_id", request.evaluation_id), tenant)
        other = await self._existing(resource_id("other_evaluation_id", request.other_evaluation_id), tenant)
        wanted = DEFAULT_DISAGREEMENTS
        if request.HasField("max_disagreements"):
            check_argument(
                0 <= request.max_disagreements <= MAX_DISAGREEMENTS,
                "max_disagreements",
                f"max_disagreements must be between 0 and {MAX_DISAGREEMENTS} (got {request.max_disagreements})",
            )
            wanted = request.max_disagreements
        models = [m for m in first.config["checkerModels"] if m in other.config["checkerModels"]]
        other_sets = {name for name, _ in drawn_sets(other)}
        sets = [name for name, _ in drawn_sets(first) if name in other_sets]
        if not models or not sets:
            raise FailedPrecondition(
                "The two evaluations share no checker model and set: there is nothing to compare.",
                reason=Reason.NOTHING_TO_COMPARE,
            )
        answers = await call_store(EVALUATIONS_UNAVAILABLE, self._store.items, first.id)
        other_answers = await call_store(EVALUATIONS_UNAVAILABLE, self._store.items, other.id)
        comparisons = await asyncio.to_thread(compare, answers, other_answers, models, sets)
        claims = await asyncio.to_thread(drawn_items, first.config, first.custom_items, sets)
        response = evaluation_pb2.CompareEvaluationsResponse(
            evaluation_id=first.id, other_evaluation_id=other.id, resamples=RESAMPLES
        )
        for found in comparisons:
            response.comparisons.append(
                evaluation_pb2.ScoreComparison(
                    checker_model=found.checker_model,
                    set=found.set_name,
                    shared_items=found.shared,
                    balanced_accuracy=found.balanced_accuracy,
                    other_balanced_accuracy=found.other_balanced_accuracy,
                    difference=found.difference,
                    difference_low=found.low,
                    difference_high=found.high,
                    disagreements=len(found.disagreements),
                )
            )
            for item in found.disagreements:
                if len(response.disagreements) >= wanted:
                    break
                claim = claims.get((item.set_name, item.item_id))
                response.disagreements.append(
                    evaluation_pb2.ItemDisagreement(
                        checker_model=item.checker_model,
                        set=item.set_name,
                        item_id=item.item_id,
                        claim=claim.claim if claim is not None else "",
                        label=verdict_to_proto(item.label),
                        verdict=_verdict_of(item.answer),
                        other_verdict=_verdict_of(item.other),
                    )
                )
        return response

    async def _existing(self, evaluation_id: str, tenant: str) -> EvaluationRecord:
        record = await call_store(EVALUATIONS_UNAVAILABLE, self._store.get, evaluation_id, tenant)
        if record is None:
            raise _not_found(evaluation_id)
        return record

    def _evaluation(self, record: EvaluationRecord) -> evaluation_pb2.Evaluation:
        """The stored evaluation with its scores, computed from its stored answers (in a worker thread)."""
        answers = self._store.items(record.id)
        usage = self._store.usage([record.id]).get(record.id)
        fitted = self._store.thresholds([record.id])[record.id]
        done = sum(1 for answer in answers if not answer.failed)
        by_pair: dict[tuple[str, str], list] = {}
        for answer in answers:
            by_pair.setdefault((answer.checker_model, answer.set_name), []).append(answer)
        scores = [
            checker_score(model, name, total, by_pair.get((model, name), []))
            for model in record.config["checkerModels"]
            for name, total in drawn_sets(record)
        ]
        evaluation = evaluation_summary(record, done, usage, [headline(score) for score in scores], fitted)
        evaluation.scores.extend(scores)
        return evaluation


def _with_budget(config: dict[str, Any], budget: Budget) -> dict[str, Any]:
    return {**config, "budget": {"maxCostUsd": budget.max_cost_usd, "maxTokens": budget.max_tokens}}


def _verdict_of(answer) -> common_pb2.Verdict:
    if answer.unreadable or answer.failed or not answer.verdict:
        return common_pb2.VERDICT_UNSPECIFIED
    return verdict_to_proto(answer.verdict)


def _item_filter(request: evaluation_pb2.ListEvaluationItemsRequest) -> ItemFilter:
    check_argument(
        not (request.wrong_only and request.failed_only),
        "failed_only",
        "wrong_only and failed_only exclude each other: a failed call is not a wrong answer (ask for one or the other)",
    )
    label = None
    if request.label != common_pb2.VERDICT_UNSPECIFIED:
        check_argument(
            is_known_enum(common_pb2.Verdict, request.label),
            "label",
            "label must be VERDICT_VERIFIED, VERDICT_DISPUTED or VERDICT_UNVERIFIABLE (or unset: every label)",
        )
        label = verdict_from_proto(request.label)
    for field, value in (("checker_model", request.checker_model), ("set", request.set)):
        check_argument(len(value) <= 255, field, f"{field} must be at most 255 characters")
    return ItemFilter(
        checker_model=request.checker_model or None,
        set_name=request.set or None,
        label=label,
        wrong_only=request.wrong_only,
        failed_only=request.failed_only,
    )
