"""One run of any mode: its events, its writes, its title and its end.

Every mode's steps (services/gateway/factcheck_gateway/modes/) run on a `Run`: a step emits its events,
calls one downstream service within the per-stage deadline and stores its stage row the
moment it has a result, so a later failure loses nothing already done. `execute` chains
the mode's steps and ends the run (complete, error or cancelled) the same way for every mode.

Runs are durable: every event is stored with the stage row it reports (one fenced
commit, `StageStore.commit_run`), and a run resumed on another gateway starts with
`Run.stored` holding the stages already done: each step then takes its result from
the stored row instead of calling its model again, and the events it already sent are
not sent twice (`RunEvents`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import grpc
from sqlalchemy.exc import InterfaceError, OperationalError

from factcheck.core.title_subject import title_question
from factcheck.kit.observability import metrics
from factcheck.text.text_safety import excerpt, first_line
from factcheck.v1 import checker_pb2_grpc, extractor_pb2_grpc, factcheck_pb2, reporter_pb2, reporter_pb2_grpc
from factcheck_gateway.knowledge.retrieval import Retriever
from factcheck_gateway.ledger.budget import BudgetExceeded
from factcheck_gateway.ledger.run_ledger import RunLedger
from factcheck_gateway.runs.events import RunEvents
from factcheck_gateway.store import STATUS_CANCELLED, STATUS_COMPLETE, STATUS_FAILED, STATUS_PARTIAL, StageStore
from factcheck_gateway.store.stage_store import (
    LEASE_CANCEL_REQUESTED,
    LEASE_HELD,
    FinalState,
    LeaseLost,
    RunCommit,
    StageRecord,
    StageRow,
    StoredEvent,
)
from factcheck_gateway.store.writer import StoreWriter
from factcheck_gateway.stored_results import status_proto

if TYPE_CHECKING:
    from factcheck_gateway.modes import Mode, Plan

log = logging.getLogger("factcheck.gateway.run")

PlanT = TypeVar("PlanT", bound="Plan")
T = TypeVar("T")

INTERNAL_ERROR = "The fact-check failed unexpectedly; the stages completed so far are stored."
STORE_FAILED = "The results database stayed unavailable, so the run was stopped; stages stored before are kept."
CANCELLED_BY_CALLER = "Cancelled by the caller."
# How long a write may keep failing (database restarting, SQLite lock held) before the run gives up
# (FACTCHECK_STORE_RETRY_BUDGET_S).
STORE_RETRY_BUDGET_S = 20.0
STORE_RETRY_FIRST_DELAY_S, STORE_RETRY_MAX_DELAY_S = 0.1, 2.0
# A run's last word (FAILED after a database outage) is retried until the database is back.
FINAL_WRITE_MAX_DELAY_S = 5.0
# Lease checks before one call, when each answer comes back older than the term it guarantees.
LEASE_CHECKS = 3
# Causes quoted in failures stay short: they travel in events, statuses and table cells.
MAX_CAUSE_CHARS = 300


class RunFailed(Exception):
    """A failure the spec treats as fatal: the message goes to the caller as an `error` event."""


def stage_failure(stage: str, model: str | None, code: str, message: str) -> dict[str, str]:
    """One failed stage's cause, as stored in messages.failures and sent in StageFailure."""
    return {
        "stage": stage,
        "model": excerpt(model or "", 200),
        "code": code,
        "message": excerpt(message, MAX_CAUSE_CHARS),
    }


def rpc_failure(stage: str, model: str | None, error: grpc.aio.AioRpcError) -> dict[str, str]:
    return stage_failure(stage, model, error.code().name, error.details() or "")


@dataclass
class Downstream:
    """Stubs for the three stateless services."""

    extractor: extractor_pb2_grpc.ExtractorServiceStub
    checker: checker_pb2_grpc.CheckerServiceStub
    reporter: reporter_pb2_grpc.ReporterServiceStub


@dataclass
class Run(Generic[PlanT]):
    """What every run knows, whatever its mode; a mode's own run class adds what its steps fill in
    (and names its plan's class: `Run` alone is any mode's run)."""

    plan: PlanT
    mode: Mode
    message_id: str
    conversation_id: str
    store: StageStore
    downstream: Downstream
    events: RunEvents
    deadline: float  # time.monotonic() at which the global budget ends
    owner: str  # the gateway holding the run's lease; every write is fenced by it
    lease_s: float
    writer: StoreWriter  # group-commits the run's events and rows with other runs'
    retriever: Retriever | None = None
    # A resumed run: the stages an earlier attempt stored (by stage_type), and its title.
    stored: dict[str, StageRecord] = field(default_factory=dict)
    stored_title: str | None = None
    # Every failed stage's cause (a degraded run has some too); stored with the final status.
    failures: list[dict[str, str]] = field(default_factory=list)
    store_retry_budget_s: float = STORE_RETRY_BUDGET_S
    # Set by Cancel before the run's task is cancelled; None means the task was stopped for
    # another reason (lease lost, shutdown) and another gateway will finish the run.
    cancel_reason: str | None = None
    # The run's newest queued commit; each waits for the one before (see `emit`).
    _last_commit: asyncio.Future | None = field(default=None, repr=False)
    # The title call, started as soon as the content is known (its event still follows the report).
    title_call: asyncio.Task | None = field(default=None, repr=False)
    # Every model call of the run, its spending and its budget (services/gateway/factcheck_gateway/ledger/run_ledger.py);
    # `downstream` goes through it (RunRegistry.new_run).
    ledger: RunLedger = field(default_factory=RunLedger)
    # Verification-cache entries the run paid for, stored with its next commit.
    cache_entries: list[dict[str, Any]] = field(default_factory=list)
    # The lease's fencing token: the run's resume_count when this gateway got it (0: it started it).
    lease_token: int = 0
    # The run's task (RunRegistry.launch); stopped when the run turns out to be no longer this gateway's.
    task: asyncio.Task | None = field(default=None, repr=False)
    # Set once the run queued its own final commit: a finished row is then its own doing, not a Cancel's.
    ending: bool = False
    # The lease check under way, shared by the calls that start meanwhile.
    _proving: asyncio.Future | None = field(default=None, repr=False)
    # The write of a new run's messages row (`store_after`), while it is under way.
    _recording: asyncio.Future | None = field(default=None, repr=False)

    @property
    def tenant_id(self) -> str:
        """The run's tenant, from its plan (never from the calling RPC's context: a run outlives it)."""
        return self.plan.tenant_id

    @property
    def stage_timeout_s(self) -> float:
        return self.plan.timeout_ms / 1000

    def out_of_time(self) -> bool:
        return time.monotonic() >= self.deadline

    async def emit(self, field_name: str, payload, **parts) -> None:
        """Store the event (with `stage`, `title` or `final`, in one commit); it is seen once stored.

        Returns at once: the commit is queued behind the run's earlier ones (group-committed
        with other runs' by the StoreWriter), so the next model call never waits for the
        database. `flush` waits for the commits and raises what stopped them.
        """
        event = self.events.build(field_name, payload)
        if event is None:  # an earlier attempt of this run stored it
            return
        if parts.get("final") is not None:
            self.ending = True
        self.events.reserve(event)
        stored = (StoredEvent(event.seq, field_name, event.SerializeToString()),)
        commit = RunCommit(self.message_id, self.owner, self.lease_s, stored, **parts, **self.take_ledger())
        previous = self._last_commit
        # Queued at once, not after the previous commit lands: consecutive commits of the run then
        # share a batch and one UPDATE. It stores nothing unless it continues what is stored.
        first_attempt = self.writer.submit(commit)
        self._last_commit = asyncio.ensure_future(self._store_after(previous, commit, event, first_attempt))

    async def _store_after(
        self, previous: asyncio.Future | None, commit: RunCommit, event, first_attempt: asyncio.Future
    ) -> None:
        try:
            if previous is not None:
                await previous  # the run's commits land in order; an earlier failure stops the later ones
            if await first_attempt is not None:
                await self.write(commit)  # retried (or its LeaseLost raised) now that the previous one landed
        except LeaseLost:
            # The calls it paid for happened all the same: they are ledgered when the run stops here.
            self.ledger.return_rows(commit.model_calls)
            self.stop_here("its commit was refused")  # its calls in flight stop now, not at its next flush
            raise
        self.events.confirm(event)

    async def commits_settled(self, timeout_s: float = 5.0) -> None:
        """Wait (at most `timeout_s`) until the run's queued commits have landed or been refused, without
        raising what stopped them."""
        if self._last_commit is not None:
            await asyncio.wait([self._last_commit], timeout=timeout_s)

    def take_ledger(self) -> dict[str, Any]:
        """The ledger rows and cache entries to store with the next commit."""
        entries, self.cache_entries = tuple(self.cache_entries), []
        return {"model_calls": self.ledger.take_rows(), "cache_entries": entries}

    def store_after(self, first: asyncio.Future) -> None:
        """Store nothing of the run before `first` (the write of its messages row) has landed."""
        self._last_commit = first
        self._recording = first

    async def flush(self) -> None:
        """Wait until everything emitted is stored; raises RunFailed or LeaseLost if it cannot be."""
        if self._last_commit is not None:
            await asyncio.shield(self._last_commit)

    async def settle(self) -> None:
        """Wait for the commits under way, whatever their outcome; forget the events they did not store."""
        if self._last_commit is not None:
            await asyncio.gather(asyncio.shield(self._last_commit), return_exceptions=True)
            self._last_commit = None
        self.events.rewind()

    async def prove_lease(self) -> None:
        """Before a call the run pays for: prove it is still this gateway's to run (lease and fencing
        token, StageStore.check_lease). If it is not, or a Cancel asked it to stop, the run stops here
        (asyncio.CancelledError): the call is never made, and the run's other calls are cancelled."""
        if self._recording is not None and not self._recording.done():
            return  # its row, leased to this gateway, is being written: no other gateway can hold it yet
        for attempt in range(LEASE_CHECKS):
            if self._proving is None or self._proving.done():
                self._proving = asyncio.ensure_future(self._check_lease())
            state, checked_at = await asyncio.shield(self._proving)
            if state != LEASE_HELD:
                break
            # A held answer guarantees the lease for half its term from the check. One older than that
            # (the process was paused, e.g. SIGSTOP, after the check) proves nothing now: ask again
            # (a few times: on a database that slow, checks that always come back late are accepted).
            if time.monotonic() - checked_at < self.lease_s / 2 or attempt == LEASE_CHECKS - 1:
                return
        if state == LEASE_CANCEL_REQUESTED:
            if self.cancel_reason is None:
                self.cancel_reason = CANCELLED_BY_CALLER
            log.info("%s: cancel requested; stopping before the next model call", self.message_id)
        else:
            log.warning("%s: no longer this gateway's run; stopping before the next model call", self.message_id)
        self.stop_here(state)
        raise asyncio.CancelledError

    async def _check_lease(self) -> tuple[str, float]:
        """The lease's state and the time.monotonic() its check started; retried while the database is
        unreachable (as writes are), then RunFailed."""

        async def check() -> tuple[str, float]:
            started = time.monotonic()
            state = await asyncio.to_thread(
                self.store.check_lease, self.message_id, self.owner, self.lease_token, self.lease_s
            )
            return state, started

        return await self._retrying("lease check", check)

    def stop_here(self, why: str) -> None:
        """Cancel the run's task (and so every call it has in flight), unless this is that task itself,
        which stops by the exception it raises next."""
        task = self.task
        if task is not None and not task.done() and task is not asyncio.current_task():
            log.info("%s: stopping the run here (%s)", self.message_id, why)
            task.cancel()

    async def save_stage(
        self,
        stage: tuple[str, int],
        role: str,
        model: str | None,
        content: str | None,
        parsed_data: dict[str, Any],
        response_time_ms: int,
        event: tuple[str, Any],
    ) -> None:
        """Store one stage row with the event that reports it, the moment its result is known."""
        stage_type, stage_order = stage
        if versions := await self.ledger.prompt_versions_for(model):
            # How the row was produced: the prompt templates (and versions) its model calls used.
            parsed_data = {**parsed_data, "promptVersions": versions}
        row = StageRow(stage_type, stage_order, model, role, content, parsed_data, response_time_ms)
        await self.emit(*event, stage=row)

    async def write(self, commit: RunCommit, *, until_stored: bool = False) -> None:
        """One commit, retried while the database is unreachable or locked, for the run's
        store_retry_budget_s (`until_stored`: until it lands, however long the database is away).

        Every commit is idempotent (`commit_runs` recognises a commit that already landed),
        so a retry after a commit that did land never duplicates anything.
        """
        await self._retrying("database write", lambda: self.writer.commit(commit), until_stored=until_stored)

    async def _retrying(self, what: str, operation: Callable[[], Awaitable[T]], *, until_stored: bool = False) -> T:
        """`operation`, retried with backoff while the database is unreachable or locked, for the run's
        store_retry_budget_s (then RunFailed, the cause among its failures), or forever `until_stored`."""
        deadline = None if until_stored else time.monotonic() + self.store_retry_budget_s
        delay = STORE_RETRY_FIRST_DELAY_S
        max_delay = FINAL_WRITE_MAX_DELAY_S if until_stored else STORE_RETRY_MAX_DELAY_S
        while True:
            try:
                return await operation()
            except (OperationalError, InterfaceError) as error:
                if deadline is not None and time.monotonic() + delay > deadline:
                    self.failures.append(stage_failure("store", None, "UNAVAILABLE", first_line(error)))
                    raise RunFailed(STORE_FAILED) from error
                log.warning("%s: %s failed, retrying in %.1fs: %s", self.message_id, what, delay, error)
                await asyncio.sleep(delay)
                delay = min(delay * 2, max_delay)


def rpc_error_text(error: grpc.aio.AioRpcError) -> str:
    return f"{error.code().name}: {error.details()}"


def stored_data(stage: StageRecord | None) -> dict[str, Any]:
    return stage.parsed_data if stage is not None and stage.parsed_data else {}


# --- the title: every mode's last step ----------------------------------------------------------------


def start_title(run: Run, content: str) -> None:
    """Ask for the title as soon as the content is known: it needs only the question and the
    content, so it overlaps the rest of the run (its event still follows the mode's last stage)."""
    if run.stored_title is None and run.title_call is None:
        run.title_call = asyncio.ensure_future(_call_title(run, content))


async def _call_title(run: Run, content: str) -> str:
    plan = run.plan
    try:
        response = await run.downstream.reporter.Title(
            reporter_pb2.TitleRequest(model=plan.reporter_model, question=plan.question, content=content),
            timeout=run.stage_timeout_s,
        )
        return response.title
    except grpc.aio.AioRpcError as error:
        log.warning("%s: title failed (%s); using the question", run.message_id, rpc_error_text(error))
        run.failures.append(rpc_failure("title", plan.reporter_model, error))
        return " ".join((title_question(plan.question) or content).split())[:80]


async def title(run: Run, content: str) -> None:
    if run.stored_title is not None:
        return
    start_title(run, content)
    assert run.title_call is not None  # (start_title started it)
    text = await run.title_call
    await run.emit("title_complete", factcheck_pb2.TitleCompletePayload(title=text), title=text)


# --- endings ------------------------------------------------------------------------------------------


def _failures_proto(failures: list[dict[str, str]]) -> list[factcheck_pb2.StageFailure]:
    return [factcheck_pb2.StageFailure(**failure) for failure in failures]


async def finish(run: Run, status: str, stop_reason: str | None = None) -> None:
    await run.ledger.settle_calls()  # every call the run started is in the last commit (a title still under way)
    payload = factcheck_pb2.CompletePayload(status=status_proto(status))
    if stop_reason is not None:
        payload.stop_reason = stop_reason
    payload.usage.CopyFrom(run.ledger.spent.to_proto())  # the `complete` commit stores the last rows
    await run.emit("complete", payload, final=FinalState(status, failures=tuple(run.failures)))
    await run.flush()  # `complete` only once every row is stored
    metrics.record_run(status)


async def fail(run: Run, message: str) -> None:
    """End the run with the spec's error event, carrying every failed stage's cause.

    FAILED is never lost: when the database is what failed, the caller is told at once and
    the same event (same seq) is stored as soon as the database answers again. Until then
    the run stays this gateway's (its task, and so its lease, lives on).
    """
    await run.ledger.settle_calls()  # the calls still under way are ledgered with the error event
    await run.settle()  # the commits under way land or fail; the error event follows the last stored one
    run.ending = True
    final = FinalState(STATUS_FAILED, error_message=message, failures=tuple(run.failures))
    event = run.events.build(
        "error", factcheck_pb2.ErrorPayload(message=message, failures=_failures_proto(run.failures))
    )
    metrics.record_run(STATUS_FAILED)
    if event is None:
        return
    stored = (StoredEvent(event.seq, "error", event.SerializeToString()),)
    commit = RunCommit(run.message_id, run.owner, run.lease_s, stored, final=final, **run.take_ledger())
    try:
        await run.write(commit)
    except RunFailed:
        log.error(
            "%s: could not store FAILED yet; told the caller, storing it once the database answers", run.message_id
        )
        run.events.confirm(event)
        await run.write(commit, until_stored=True)
        log.info("%s: stored FAILED after the database came back", run.message_id)
        return
    run.events.confirm(event)


async def cancelled(run: Run) -> None:
    await run.ledger.settle_calls()  # the calls Cancel cut short: `cancelled` rows, with estimated usage
    reason = run.cancel_reason or CANCELLED_BY_CALLER
    await run.emit(
        "cancelled",
        factcheck_pb2.CancelledPayload(reason=reason),
        final=FinalState(STATUS_CANCELLED, error_message=reason, failures=tuple(run.failures)),
    )
    await run.flush()
    metrics.record_run(STATUS_CANCELLED)


async def execute(run: Run) -> None:
    """The run's mode's steps in order, then its end. Between steps, a spent global budget ends the run as PARTIAL."""
    started = time.monotonic()
    try:
        await run.mode.start(run)
        async for step in run.mode.stages(run):
            if run.ledger.stop_reason is not None:  # a call was refused: no more steps
                await _budget_spent(run, run.ledger.stop_reason)
                return
            if run.out_of_time():
                log.warning("%s: global budget spent before %s; ending as PARTIAL", run.message_id, step.__name__)
                await finish(run, STATUS_PARTIAL)
                return
            step_started = time.monotonic()
            await step(run)
            metrics.record_stage(step.__name__, time.monotonic() - step_started)
        if run.ledger.stop_reason is not None:  # a call was refused, and the step went on without it
            await _budget_spent(run, run.ledger.stop_reason)
            return
        await finish(run, STATUS_COMPLETE)
    except BudgetExceeded as spent:  # a refused call a step did not handle
        await _end_quietly(run, _budget_spent(run, spent.reason))
    except asyncio.CancelledError:
        if run.cancel_reason is None:
            # Lease lost or shutting down: the run is another gateway's (or a later start's) to finish.
            await _ledger_unowned_calls(run)
            raise
        await _end_quietly(run, cancelled(run))
    except LeaseLost:
        log.warning("%s: another gateway took the run over; this one stops", run.message_id)
        await _ledger_unowned_calls(run)
    except RunFailed as failure:
        if run.ledger.stop_reason is not None:  # it failed because its calls were refused: the budget ended it
            await _end_quietly(run, _budget_spent(run, run.ledger.stop_reason))
            return
        await _end_quietly(run, fail(run, str(failure)))
    except Exception:
        log.exception("%s: run failed unexpectedly", run.message_id)
        await _end_quietly(run, fail(run, INTERNAL_ERROR))
    finally:
        if run.title_call is not None and not run.title_call.done():
            run.title_call.cancel()  # the run ended before its title was needed
        metrics.record_stage("run", time.monotonic() - started)
        run.events.close()


async def _ledger_unowned_calls(run: Run) -> None:
    """The run stops on a gateway that no longer holds it: its commits are refused, but every call it
    started reached (or may have reached) a provider and is part of the tenant's spending. Those rows
    are stored without the lease's fence: they record what this gateway paid for, not the run's state,
    and no other gateway has them (each commit hands its rows out once). Shielded: the run's task is
    often cancelled again meanwhile (a refused commit stops it too), and that must not lose the rows."""
    task = asyncio.ensure_future(_store_unowned_calls(run))
    _UNOWNED_LEDGER_WRITES.add(task)
    task.add_done_callback(_UNOWNED_LEDGER_WRITES.discard)
    await asyncio.shield(task)


# The writes `_ledger_unowned_calls` started (referenced until done, so none is collected mid-way).
_UNOWNED_LEDGER_WRITES: set[asyncio.Future] = set()


async def _store_unowned_calls(run: Run) -> None:
    try:
        await run.ledger.settle_calls()
        await run.commits_settled()  # a commit refused after the run stopped hands its rows back
        if rows := run.ledger.take_rows():
            await asyncio.to_thread(run.store.record_model_calls, run.message_id, rows)
            log.info("%s: ledgered %d calls of a run this gateway no longer holds", run.message_id, len(rows))
    except Exception:  # the database is down too: the rows are lost with this process, as before
        log.exception("%s: could not ledger the calls of a run this gateway no longer holds", run.message_id)


async def _budget_spent(run: Run, reason: str) -> None:
    """The run's budget stopped it: PARTIAL, with the reason, keeping every stored row."""
    log.warning("%s: %s", run.message_id, reason)
    run.failures.append(stage_failure("budget", None, "RESOURCE_EXHAUSTED", reason))
    await finish(run, STATUS_PARTIAL, stop_reason=reason)


async def _end_quietly(run: Run, ending) -> None:
    """A run's last write; if even that cannot land, recovery (this gateway's or another's) ends the run later."""
    try:
        await ending
    except LeaseLost:
        log.warning("%s: another gateway took the run over; this one stops", run.message_id)
        await _ledger_unowned_calls(run)
    except RunFailed:
        log.error("%s: could not store the run's end; its lease will lapse and recovery will end it", run.message_id)
