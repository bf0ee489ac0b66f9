"""One execution of an evaluation (its start, or a resume): every item it has no answer for yet is sent
to every checker through CheckerService.Verify exactly as a run sends its claims (the same request,
the verification cache, the ledger and the budget), and each answer is stored, with its progress
event, the moment it exists.

Items go to each checker `concurrency` at a time, the checkers side by side. The evaluation ends
COMPLETE when every checker answered every item; PARTIAL when the budget ran out or some calls failed
(a resume asks those again); CANCELLED when CancelEvaluation stopped it; FAILED when the database stayed
unavailable. A gateway shutting down hands it on instead (HANDED_ON): another gateway resumes it.
Whoever called RunEvaluation has nothing to do with it: the evaluation runs in a task of the gateway.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp

from factcheck.core.claim_typing import claim_type
from factcheck.core.domain import (
    claim_type_to_proto,
    confidence_from_proto,
    is_not_addressed,
    verdict_from_proto,
    verdict_to_proto,
)
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
from factcheck_gateway.store.models import STATUS_CANCELLED, STATUS_COMPLETE, STATUS_FAILED, STATUS_PARTIAL
from factcheck_gateway.verification_cache import cached

log = logging.getLogger("factcheck.gateway.evaluations")

MODE = "evaluation"  # the ledger's mode of an evaluation's calls
CLAIM_ID = "claim_1"
# What an execution that stopped for a gateway's shutdown returns instead of a status: the evaluation stays
# RUNNING, handed on to the next gateway's recovery pass.
HANDED_ON = "HANDED_ON"
CANCELLED_BY_CALLER = "Cancelled by the caller; resuming the evaluation asks only the items it has no answer for."
TAKEN_OVER = "The evaluation was cancelled or taken over by another gateway."
STORE_FAILED = "The database stayed unavailable, so the evaluation stopped; what it stored is kept."
# The most of a checker's answer stored with it (its evidence, or what it said when it could not be read).
MAX_ANSWER_CHARS = 2_000
# Why checker calls fail, in words (the details of each failure are stored with its item).
FAILURE_WORDS = {
    grpc.StatusCode.UNAVAILABLE: "the checker or its model could not be reached",
    grpc.StatusCode.DEADLINE_EXCEEDED: "the call took longer than the stage timeout",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "the model refused the call (rate limit or quota)",
    grpc.StatusCode.FAILED_PRECONDITION: "the model cannot take the request",
    grpc.StatusCode.INVALID_ARGUMENT: "the checker refused the request",
}

Emit = Callable[[str, Any], Awaitable[None]]


@dataclass
class _Checker:
    """The one downstream stub an evaluation calls (ledgered per item)."""

    checker: checker_pb2_grpc.CheckerServiceStub


@dataclass
class _VerifyCall:
    """What the verification cache needs from its caller (verification_cache/cached.py reads these)."""

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


class BudgetSpent(Exception):
    """The budget refused a worker's next call: the evaluation stops PARTIAL once the calls under way
    have brought their answers."""


def verify_request(model: str, item: LabelledItem, threshold: float | None = None) -> checker_pb2.VerifyRequest:
    """The request a run would send for this one claim: the claim (typed as the built-in extractor types
    claims) and its evidence as passages P1, P2, ... (none: the checker's own knowledge); with the threshold
    a binary checker is to use instead of its own, when the evaluation names one."""
    claim = common_pb2.Claim(
        id=CLAIM_ID, claim=item.claim, context=item.claim, type=claim_type_to_proto(claim_type(item.claim))
    )
    request = checker_pb2.VerifyRequest(model=model, content=item.claim, claims=[claim])
    if threshold is not None:
        request.support_threshold = threshold
    if item.evidence:
        ids = [f"P{number}" for number in range(1, len(item.evidence) + 1)]
        request.passages.extend(
            common_pb2.Passage(id=pid, source_id=f"{item.id}#{pid}", source_title=e.title, text=e.text)
            for pid, e in zip(ids, item.evidence)
        )
        request.evidence.append(common_pb2.ClaimEvidence(claim_id=CLAIM_ID, passage_ids=ids))
    return request


def _answer(model: str, set_name: str, item: LabelledItem, response: checker_pb2.VerifyResponse, rows) -> ItemResult:
    """The checker's answer as stored: an unreadable one has no verdict and no confidence, and keeps the
    start of what the model said instead of its evidence."""
    verification = next((v for v in response.verifications if v.claim_id == CLAIM_ID), None)
    unreadable = verification is None or is_not_addressed(verification.evidence)
    if unreadable:
        said = response.raw_text.strip() or (verification.evidence if verification is not None else "")
        verdict, confidence, answer, correction = None, None, said, None
    else:
        assert verification is not None  # (unreadable otherwise)
        verdict = verdict_from_proto(verification.verdict)
        confidence = confidence_from_proto(verification.confidence)
        answer = verification.evidence
        correction = verification.correction if verification.HasField("correction") else None
    cached = verification is not None and verification.cached
    readable = verification if verification is not None and not unreadable else None
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
        answer=_bounded(answer),
        correction=_bounded(correction) if correction else None,
        support_probability=_optional(readable, "support_probability"),
        support_threshold=_optional(readable, "support_threshold"),
        **_spent(rows),
    )


def _optional(verification: common_pb2.ClaimVerification | None, name: str) -> float | None:
    return getattr(verification, name) if verification is not None and verification.HasField(name) else None


def _bounded(text: str | None) -> str | None:
    if not text:
        return None
    return text if len(text) <= MAX_ANSWER_CHARS else text[: MAX_ANSWER_CHARS - 1] + "…"


def _spent(rows) -> dict[str, Any]:
    return {
        "prompt_tokens": sum(row["prompt_tokens"] for row in rows),
        "completion_tokens": sum(row["completion_tokens"] for row in rows),
        "cached_tokens": sum(row["cached_tokens"] for row in rows),
        "cost_usd": sum(row["cost_usd"] for row in rows),
    }


def failure_words(error: grpc.aio.AioRpcError) -> str:
    return FAILURE_WORDS.get(error.code(), "the call failed")


def failure_summary(stored_error: str | None) -> str:
    """A failed item's error in words, without the checker's details (stored as "words (CODE: details)")."""
    return (stored_error or "the call failed").split(" (", 1)[0]


def now_timestamp() -> Timestamp:
    stamp = Timestamp()
    stamp.GetCurrentTime()
    return stamp


def event_of(evaluation_id: str, kind: str, payload) -> evaluation_pb2.EvaluationEvent:
    """An event with its payload (the store gives it its seq)."""
    event = evaluation_pb2.EvaluationEvent(evaluation_id=evaluation_id, timestamp=now_timestamp())
    getattr(event, kind).CopyFrom(payload)
    return event


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
        fresh_budget: bool = False,
        ledger_enabled: bool = True,
        poll_s: float = 1.0,
        on_event: Callable[[str], None] = lambda evaluation_id: None,
    ) -> None:
        self.evaluation_id = evaluation_id
        self.plan = plan
        self.store = store
        self.checker = checker
        self.pricing = pricing
        self.owner = owner
        self.lease_s = lease_s
        self.poll_s = poll_s
        self.ledger_enabled = ledger_enabled
        # Told after each stored event (wakes this gateway's watchers at once).
        self.on_event = on_event
        # Everything the evaluation spent so far (shared by every item's ledger: the budget's measure);
        # `fresh_budget`: a resume with a new budget counts from zero.
        self.spent = spent
        self.fresh_budget = fresh_budget
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
        # Why the run is cancelled when its task is (set before cancelling it): CANCELLED_BY_CALLER, or
        # HANDED_ON for a shutdown.
        self.cancel_reason: str | None = None
        # Writes of calls that brought no answer, still under way (awaited before the evaluation ends).
        self._writes: set[asyncio.Future] = set()

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

    async def emit(self, kind: str, payload) -> None:
        """Store one event of this evaluation (Stop once it is no longer this gateway's)."""
        stored = await asyncio.to_thread(
            self.store.append_event, self.evaluation_id, self.owner, event_of(self.evaluation_id, kind, payload)
        )
        if not stored:
            raise Stop(STATUS_CANCELLED, TAKEN_OVER)
        self.on_event(self.evaluation_id)

    async def execute(self) -> tuple[str, str | None]:
        """Judge what is left, storing progress and each finished (checker, set)'s score as events; returns
        the final status and its reason (HANDED_ON: a shutdown stopped it, and it is to go on elsewhere)."""
        status, reason = STATUS_COMPLETE, None
        heartbeat: asyncio.Task | None = None
        workers: list[asyncio.Task] = []
        try:
            await self.emit(
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
                    await self.emit("score", self.score(model, set_name))
            heartbeat = asyncio.create_task(self._heartbeat())
            workers = [
                asyncio.create_task(self._checker_worker(model, queue))
                for model in self.plan.checker_models
                for queue in [self._queue(model)]
                for _ in range(self.plan.concurrency)
            ]
            working, budget_spent = set(workers), False
            while working:  # (the heartbeat only ends by raising Stop)
                done, _ = await asyncio.wait(working | {heartbeat}, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    error = task.exception()
                    # A spent budget ends the worker that met it; the others finish the item they are on
                    # (their calls are paid for) and meet it at their next.
                    if isinstance(error, BudgetSpent):
                        budget_spent = True
                    elif error is not None:
                        raise error
                working -= done
            if budget_spent:
                status = STATUS_PARTIAL
        except Stop as stop:
            status, reason = stop.status, stop.reason
        except asyncio.CancelledError:
            if self.cancel_reason == HANDED_ON:
                status = HANDED_ON
            else:
                status, reason = STATUS_CANCELLED, self.cancel_reason or CANCELLED_BY_CALLER
        except Exception as error:  # the database, beyond its retries
            log.exception("%s: evaluation failed", self.evaluation_id)
            status, reason = STATUS_FAILED, STORE_FAILED  # its own words: the error is logged above, not shown
        finally:
            tasks = [*workers, *([heartbeat] if heartbeat is not None else [])]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # Every call paid for is in the ledger before the evaluation ends (its usage is read from it).
            await asyncio.gather(*self._writes, return_exceptions=True)
        if status == STATUS_PARTIAL and reason is None:
            reason = self._budget_reason()
        if status == STATUS_COMPLETE:
            failed = [a for answers in self.answers.values() for a in answers.values() if a.failed]
            if failed:
                status = STATUS_PARTIAL
                first = failed[0]
                reason = (
                    f"{len(failed)} checker call(s) failed (the first: {first.checker_model} on "
                    f"{first.set_name}/{first.item_id}: {failure_summary(first.error)}); resuming the evaluation "
                    "asks them again."
                )
        return status, reason

    def _budget_reason(self) -> str:
        """Why the budget stopped the evaluation, with what its calls used in all (every call settled)."""
        budget = self.plan.budget
        since = " since the resume gave it a new budget" if self.fresh_budget else ""
        if budget.max_cost_usd is not None and self.spent.cost_usd >= budget.max_cost_usd:
            spent = f"${self.spent.cost_usd:,.4f} of ${budget.max_cost_usd:,.4f} (max_cost_usd)"
        else:
            spent = f"{self.spent.total_tokens:,} of {budget.max_tokens or 0:,} tokens (max_tokens)"
        return (
            f"The evaluation's budget is spent: its model calls used {spent}{since}, so it stopped calling "
            "models; what it judged is stored, and resuming it with a larger budget continues it."
        )

    def _queue(self, model: str) -> asyncio.Queue:
        queue: asyncio.Queue = asyncio.Queue()
        for job in self.todo[model]:
            queue.put_nowait(job)
        return queue

    async def _heartbeat(self) -> None:
        """Keep the evaluation this gateway's while slow calls run, and stop soon after it no longer is
        (a Cancel on another gateway ends it in the store)."""
        renewed = time.monotonic()
        while True:
            await asyncio.sleep(min(self.poll_s, self.lease_s / 3))
            if time.monotonic() - renewed >= self.lease_s / 3:
                ours = await asyncio.to_thread(self.store.heartbeat, self.evaluation_id, self.owner)
                renewed = time.monotonic()
            else:
                ours = await asyncio.to_thread(self.store.still_owned, self.evaluation_id, self.owner)
            if not ours:
                raise Stop(STATUS_CANCELLED, TAKEN_OVER)

    async def _checker_worker(self, model: str, queue: asyncio.Queue) -> None:
        while not queue.empty():
            set_name, item = queue.get_nowait()
            await self._judge(model, set_name, item)
            self.pending[(model, set_name)] -= 1
            if self.pending[(model, set_name)] == 0:  # every item of the set has its answer of this attempt
                await self.emit("score", self.score(model, set_name))

    def _progress(self, answer: ItemResult, item: LabelledItem) -> evaluation_pb2.EvaluationEvent:
        verdict = common_pb2.VERDICT_UNSPECIFIED
        if answer.verdict and not answer.unreadable and not answer.failed:
            verdict = verdict_to_proto(answer.verdict)
        return event_of(
            self.evaluation_id,
            "progress",
            evaluation_pb2.EvaluationProgressPayload(
                done=self.done,
                total=self.plan.total,
                checker_model=answer.checker_model,
                set=answer.set_name,
                item_id=item.id,
                verdict=verdict,
                label=verdict_to_proto(item.label),
                cached=answer.cached,
                unreadable=answer.unreadable,
                failed=answer.failed,
            ),
        )

    async def _judge(self, model: str, set_name: str, item: LabelledItem) -> None:
        """One checker's answer on one item, stored with what it cost and its progress event."""
        ledger = RunLedger(
            tenant_id=self.plan.tenant_id, mode=MODE, pricing=self.pricing, budget=self.plan.budget, spent=self.spent
        )
        stub = ledgered(_Checker(self.checker), ledger) if self.ledger_enabled else _Checker(self.checker)
        call = _VerifyCall(self.plan, self.plan.tenant_id, stub, ledger, self.store, self.plan.timeout_ms / 1000)
        try:
            chosen = self.plan.checker_thresholds.get(model)
            request = verify_request(model, item, chosen.threshold if chosen is not None else None)
            response = await cached.verify(call, request)
        except BudgetExceeded:
            await self._store_calls(ledger)
            raise BudgetSpent() from None
        except grpc.aio.AioRpcError as error:
            rows = ledger.take_rows()
            answer = ItemResult(
                checker_model=model,
                set_name=set_name,
                item_id=item.id,
                label=item.label,
                failed=True,
                error=excerpt(f"{failure_words(error)} ({error.code().name}: {error.details()})", 300),
                **_spent(rows),
            )
            await self._save(answer, item, rows, [])
            return
        except asyncio.CancelledError:
            write = asyncio.ensure_future(self._store_calls(ledger))
            self._writes.add(write)
            write.add_done_callback(self._writes.discard)
            raise
        rows = ledger.take_rows()
        answer = _answer(model, set_name, item, response, rows)
        await self._save(answer, item, rows, call.cache_entries)

    async def _save(self, answer: ItemResult, item: LabelledItem, rows, cache_rows) -> None:
        self.answers[(answer.checker_model, answer.set_name)][item.id] = answer
        if not answer.failed:
            self.done += 1
        event = self._progress(answer, item)
        write = asyncio.ensure_future(
            asyncio.to_thread(
                self.store.save_item, self.evaluation_id, self.owner, answer, list(rows), list(cache_rows), event
            )
        )
        # The answer is stored even when the evaluation is cancelled while it is written (it was paid for).
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)
        still_ours = await asyncio.shield(write)
        if not still_ours:
            raise Stop(STATUS_CANCELLED, TAKEN_OVER)
        self.on_event(self.evaluation_id)

    async def _store_calls(self, ledger: RunLedger) -> None:
        """The calls an item paid for without an answer (cut short, or refused by the budget)."""
        if rows := ledger.take_rows():
            await asyncio.to_thread(self.store.record_calls, self.evaluation_id, list(rows))
