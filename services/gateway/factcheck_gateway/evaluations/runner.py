"""One execution of an evaluation (its start, or a resume): every item it has no answer for yet is sent
to every checker through CheckerService.Verify exactly as a run sends its claims (the same request,
the verification cache, the ledger and the budget), and each answer is stored the moment it exists.

Items go to each checker `concurrency` at a time, the checkers side by side. The evaluation ends
COMPLETE when every checker answered every item; PARTIAL when the budget ran out or some calls failed
(ResumeEvaluation asks those again); CANCELLED when the caller went away or Cancel stopped it; FAILED
when the database stayed unavailable.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from factcheck.core.domain import (
    claim_type_to_proto,
    confidence_from_proto,
    is_not_addressed,
    verdict_from_proto,
    verdict_to_proto,
)
from factcheck.engines.extractor import claim_type
from factcheck.evaluation.sets import LabelledItem
from factcheck.text.text_safety import excerpt
from factcheck.v1 import checker_pb2, checker_pb2_grpc, common_pb2, evaluation_pb2
from factcheck_gateway.evaluations.plan import EvaluationPlan
from factcheck_gateway.evaluations.scores import checker_score
from factcheck_gateway.evaluations.store import EvaluationStore, ItemResult
from factcheck_gateway.ledger.budget import BudgetExceeded
from factcheck_gateway.ledger.pricing import Pricing
from factcheck_gateway.ledger.run_ledger import RunLedger, ledgered
from factcheck_gateway.ledger.totals import UsageTotals
from factcheck_gateway.modes.fact_check import cache
from factcheck_gateway.store.models import STATUS_CANCELLED, STATUS_COMPLETE, STATUS_FAILED, STATUS_PARTIAL

log = logging.getLogger("factcheck.gateway.evaluations")

MODE = "evaluation"  # the ledger's mode of an evaluation's calls
CLAIM_ID = "claim_1"
CANCELLED_BY_CALLER = "Cancelled by the caller; ResumeEvaluation continues it."
SHUTTING_DOWN = "The gateway shut down; ResumeEvaluation continues it."
TAKEN_OVER = "The evaluation was cancelled or taken over by another gateway."
STORE_FAILED = "The database stayed unavailable, so the evaluation stopped; what it stored is kept."

Emit = Callable[[str, Any], Awaitable[None]]


@dataclass
class _Checker:
    """The one downstream stub an evaluation calls (ledgered per item)."""

    checker: checker_pb2_grpc.CheckerServiceStub


@dataclass
class _VerifyCall:
    """What the verification cache needs from its caller (modes/fact_check/cache.py reads these)."""

    plan: EvaluationPlan
    tenant_id: str
    downstream: _Checker
    ledger: RunLedger
    store: EvaluationStore
    stage_timeout_s: float
    cache_entries: list[dict[str, Any]] = field(default_factory=list)


class Stop(Exception):
    """The evaluation stops here: its final status and why."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def verify_request(model: str, item: LabelledItem) -> checker_pb2.VerifyRequest:
    """The request a run would send for this one claim: the claim (typed as the built-in extractor types
    claims) and its evidence as passages P1, P2, ... (none: the checker's own knowledge)."""
    claim = common_pb2.Claim(
        id=CLAIM_ID, claim=item.claim, context=item.claim, type=claim_type_to_proto(claim_type(item.claim))
    )
    request = checker_pb2.VerifyRequest(model=model, content=item.claim, claims=[claim])
    if item.evidence:
        ids = [f"P{number}" for number in range(1, len(item.evidence) + 1)]
        request.passages.extend(
            common_pb2.Passage(id=pid, source_id=f"{item.id}#{pid}", source_title=e.title, text=e.text)
            for pid, e in zip(ids, item.evidence)
        )
        request.evidence.append(common_pb2.ClaimEvidence(claim_id=CLAIM_ID, passage_ids=ids))
    return request


def _answer(model: str, set_name: str, item: LabelledItem, response: checker_pb2.VerifyResponse, rows) -> ItemResult:
    verification = next((v for v in response.verifications if v.claim_id == CLAIM_ID), None)
    if verification is None:  # (the checker answers every claim; this guards a broken one)
        verdict, confidence, unreadable, cached = "UNVERIFIABLE", "LOW", True, False
    else:
        verdict = verdict_from_proto(verification.verdict)
        confidence = confidence_from_proto(verification.confidence)
        unreadable, cached = is_not_addressed(verification.evidence), verification.cached
    return ItemResult(
        checker_model=model,
        set_name=set_name,
        item_id=item.id,
        label=item.label,
        verdict=verdict,
        confidence=confidence,
        unreadable=unreadable,
        cached=cached,
        latency_ms=None if cached else int(response.response_time_ms),
        **_spent(rows),
    )


def _spent(rows) -> dict[str, Any]:
    return {
        "prompt_tokens": sum(row["prompt_tokens"] for row in rows),
        "completion_tokens": sum(row["completion_tokens"] for row in rows),
        "cost_usd": sum(row["cost_usd"] for row in rows),
    }


class EvaluationRunner:
    def __init__(
        self,
        evaluation_id: str,
        plan: EvaluationPlan,
        store: EvaluationStore,
        checker: checker_pb2_grpc.CheckerServiceStub,
        pricing: Pricing,
        owner: str,
        lease_s: float,
        *,
        stored: list[ItemResult],
        spent: UsageTotals,
        ledger_enabled: bool = True,
    ) -> None:
        self.evaluation_id = evaluation_id
        self.plan = plan
        self.store = store
        self.checker = checker
        self.pricing = pricing
        self.owner = owner
        self.lease_s = lease_s
        self.ledger_enabled = ledger_enabled
        # Everything the evaluation spent so far (shared by every item's ledger: the budget's measure).
        self.spent = spent
        # Every answer, stored ones first, by (checker, set): what the scores are computed from.
        self.answers: dict[tuple[str, str], dict[str, ItemResult]] = {
            (model, s.name): {} for model in plan.checker_models for s in plan.sets
        }
        for answer in stored:
            if (answer.checker_model, answer.set_name) in self.answers:
                self.answers[(answer.checker_model, answer.set_name)][answer.item_id] = answer
        self.done = sum(1 for answers in self.answers.values() for a in answers.values() if not a.failed)
        self.todo = {model: self._todo(model) for model in plan.checker_models}
        # Items of each (checker, set) still to be judged in this attempt.
        self.pending = {key: 0 for key in self.answers}
        for model, jobs in self.todo.items():
            for set_name, _ in jobs:
                self.pending[(model, set_name)] += 1
        # Why the run is cancelled when its task is (set before cancelling it; None: the caller went away).
        self.cancel_reason: str | None = None

    # --- what is left -------------------------------------------------------------------------------

    def _todo(self, model: str) -> list[tuple[str, LabelledItem]]:
        return [
            (drawn.name, item)
            for drawn in self.plan.sets
            for item in drawn.items
            if (answer := self.answers[(model, drawn.name)].get(item.id)) is None or answer.failed
        ]

    def score(self, model: str, set_name: str) -> evaluation_pb2.CheckerScore:
        drawn = next(s for s in self.plan.sets if s.name == set_name)
        return checker_score(model, set_name, len(drawn.items), list(self.answers[(model, set_name)].values()))

    # --- running ------------------------------------------------------------------------------------

    async def execute(self, emit: Emit) -> tuple[str, str | None]:
        """Judge what is left, emitting progress and each finished (checker, set)'s score; returns the final
        status and its reason, as stored."""
        await emit(
            "started",
            evaluation_pb2.EvaluationStartedPayload(
                checker_models=list(self.plan.checker_models),
                sets=self.plan.summaries(),
                total=self.plan.total,
                done=self.done,
            ),
        )
        for (model, set_name), left in self.pending.items():
            if left == 0:  # judged whole by an earlier attempt
                await emit("score", self.score(model, set_name))
        heartbeat = asyncio.create_task(self._heartbeat())
        workers = [
            asyncio.create_task(self._checker_worker(model, queue, emit))
            for model in self.plan.checker_models
            for queue in [self._queue(model)]
            for _ in range(self.plan.concurrency)
        ]
        status, reason = STATUS_COMPLETE, None
        try:
            working = set(workers)
            while working:  # (the heartbeat only ends by raising Stop)
                done, _ = await asyncio.wait(working | {heartbeat}, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    if (error := task.exception()) is not None:
                        raise error
                working -= done
        except Stop as stop:
            status, reason = stop.status, stop.reason
        except asyncio.CancelledError:
            status, reason = STATUS_CANCELLED, self.cancel_reason or CANCELLED_BY_CALLER
        except Exception as error:  # the database, beyond its retries
            log.exception("%s: evaluation failed", self.evaluation_id)
            status, reason = STATUS_FAILED, f"{STORE_FAILED} ({excerpt(str(error), 200)})"
        finally:
            for task in [*workers, heartbeat]:
                task.cancel()
            await asyncio.gather(*workers, heartbeat, return_exceptions=True)
        if status == STATUS_COMPLETE:
            failed = [a for answers in self.answers.values() for a in answers.values() if a.failed]
            if failed:
                status = STATUS_PARTIAL
                reason = (
                    f"{len(failed)} checker call(s) failed (first: {failed[0].checker_model} on "
                    f"{failed[0].set_name}/{failed[0].item_id}: {failed[0].error}); ResumeEvaluation asks them again."
                )
        return status, reason

    def _queue(self, model: str) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue()
        for job in self.todo[model]:
            queue.put_nowait(job)
        return queue

    async def _heartbeat(self) -> None:
        """Keep the evaluation this gateway's while slow calls run; stop when it no longer is."""
        while True:
            await asyncio.sleep(self.lease_s / 3)
            if not await asyncio.to_thread(self.store.heartbeat, self.evaluation_id, self.owner):
                raise Stop(STATUS_CANCELLED, TAKEN_OVER)

    async def _checker_worker(self, model: str, queue: asyncio.Queue, emit: Emit) -> None:
        while not queue.empty():
            set_name, item = queue.get_nowait()
            answer = await self._judge(model, set_name, item)
            self.answers[(model, set_name)][item.id] = answer
            if not answer.failed:
                self.done += 1
            await emit(
                "progress",
                evaluation_pb2.EvaluationProgressPayload(
                    done=self.done,
                    total=self.plan.total,
                    checker_model=model,
                    set=set_name,
                    item_id=item.id,
                    verdict=verdict_to_proto(answer.verdict) if answer.verdict else common_pb2.VERDICT_UNSPECIFIED,
                    label=verdict_to_proto(item.label),
                    cached=answer.cached,
                ),
            )
            self.pending[(model, set_name)] -= 1
            if self.pending[(model, set_name)] == 0:  # every item of the set has its answer of this attempt
                await emit("score", self.score(model, set_name))

    async def _judge(self, model: str, set_name: str, item: LabelledItem) -> ItemResult:
        """One checker's answer on one item, stored with what it cost before it is returned."""
        ledger = RunLedger(
            tenant_id=self.plan.tenant_id, mode=MODE, pricing=self.pricing, budget=self.plan.budget, spent=self.spent
        )
        stub = ledgered(_Checker(self.checker), ledger) if self.ledger_enabled else _Checker(self.checker)
        call = _VerifyCall(self.plan, self.plan.tenant_id, stub, ledger, self.store, self.plan.timeout_ms / 1000)
        try:
            response = await cache.verify(call, verify_request(model, item))
        except BudgetExceeded as exceeded:
            await self._store_calls(ledger)
            raise Stop(STATUS_PARTIAL, str(exceeded)) from None
        except grpc.aio.AioRpcError as error:
            rows = ledger.take_rows()
            answer = ItemResult(
                checker_model=model,
                set_name=set_name,
                item_id=item.id,
                label=item.label,
                failed=True,
                error=excerpt(f"{error.code().name}: {error.details()}", 300),
                **_spent(rows),
            )
            await self._save(answer, rows, [])
            return answer
        except asyncio.CancelledError:
            await asyncio.shield(self._store_calls(ledger))
            raise
        rows = ledger.take_rows()
        answer = _answer(model, set_name, item, response, rows)
        await self._save(answer, rows, call.cache_entries)
        return answer

    async def _save(self, answer: ItemResult, rows, cache_rows) -> None:
        still_ours = await asyncio.to_thread(
            self.store.save_item, self.evaluation_id, self.owner, answer, list(rows), list(cache_rows)
        )
        if not still_ours:
            raise Stop(STATUS_CANCELLED, TAKEN_OVER)

    async def _store_calls(self, ledger: RunLedger) -> None:
        """The calls an item paid for without an answer (cut short, or refused by the budget)."""
        if rows := ledger.take_rows():
            await asyncio.to_thread(self.store.record_calls, self.evaluation_id, list(rows))
