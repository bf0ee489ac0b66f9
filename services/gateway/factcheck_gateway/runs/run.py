"""One run of any mode: its state, its events and its writes; its title is title.py's.

Every mode's steps (services/gateway/factcheck_gateway/modes/) run on a `Run`: a step emits its events,
calls one downstream service within the per-stage deadline and stores its stage row the
moment it has a result, so a later failure loses nothing already done. `execute` (flow.py)
chains the mode's steps and ends the run (complete, error or cancelled) the same way for every mode.

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
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import grpc
from sqlalchemy.exc import InterfaceError, OperationalError

from factcheck.text.text_safety import excerpt, first_line
from factcheck.v1 import checker_pb2_grpc, extractor_pb2_grpc, reporter_pb2_grpc
from factcheck_gateway.knowledge.retrieval import Retriever
from factcheck_gateway.ledger.queries import INSERT_MODEL_CALLS
from factcheck_gateway.ledger.run_ledger import RunLedger
from factcheck_gateway.runs.events import RunEvents
from factcheck_gateway.runs.plan import Plan
from factcheck_gateway.store import StageStore
from factcheck_gateway.store.records import (
    LEASE_CANCEL_REQUESTED,
    LEASE_HELD,
    LeaseLost,
    RunCommit,
    StageRecord,
    StageRow,
    StoredEvent,
)
from factcheck_gateway.store.writer import StoreWriter
from factcheck_gateway.verification_cache.entries import upsert_cache_entries

log = logging.getLogger("factcheck.gateway.run")

PlanT = TypeVar("PlanT", bound=Plan)
T = TypeVar("T")


class _LedgerWrites:
    """Stores the model calls and cache entries of a group commit's runs in its transaction: one INSERT of
    every ledger row (ledger/), one upsert of every cache entry (verification_cache/). The store writes
    them through this (RunCommit.ledger), so that it imports neither feature."""

    def write(self, session: Any, model_calls: list[dict[str, Any]], cache_entries: list[dict[str, Any]]) -> None:
        if model_calls:
            session.execute(INSERT_MODEL_CALLS, model_calls)
        if cache_entries:
            upsert_cache_entries(session, cache_entries)


LEDGER_WRITES = _LedgerWrites()

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
    """A fatal failure (docs/api.md#what-happens-when-things-fail): the message goes to the caller as an `error`
    event."""


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


# A step of a run: one stage (or a group of parallel calls), awaited in order.
Step = Callable[[Any], Awaitable[None]]


class RunMode(Protocol):
    """What the run machinery needs from a run's mode (modes/base.py declares the rest)."""

    # Read-only properties: the modes are frozen dataclasses.
    @property
    def run_class(self) -> type[Run]: ...
    @property
    def start(self) -> Callable[[Any], Awaitable[None]]:  # emits factcheck_start (every run's first event)
        ...
    @property
    def stages(self) -> Callable[[Any], AsyncIterator[Step]]:  # the steps after start, decided as the run goes
        ...


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
    mode: RunMode
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
        return {"model_calls": self.ledger.take_rows(), "cache_entries": entries, "ledger": LEDGER_WRITES}

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

    async def read(self, what: str, operation: Callable[[], T]) -> T:
        """A database read (`operation`, run in a worker thread), retried as writes are while the database
        is unreachable or locked."""
        return await self._retrying(what, lambda: asyncio.to_thread(operation))

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
