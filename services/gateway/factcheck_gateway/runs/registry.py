"""The runs one gateway executes, and how runs outlive the gateway that started them.

Each running run is leased to one gateway (`owner`): the lease is renewed by every commit
of the run and by a heartbeat every third of `run_lease_s`. A gateway that dies stops
renewing; once the lease lapses, any gateway's recovery pass claims the run (a conditional
UPDATE, so exactly one wins) and resumes it from its stored stages. The heartbeat also
notices runs this gateway lost (another one claimed them after a long pause) and cancel
requests made on other replicas.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Protocol

from sqlalchemy.exc import SQLAlchemyError

from factcheck.kit.observability import metrics
from factcheck.kit.observability.context import open_run_context
from factcheck.kit.settings import Settings
from factcheck.text.text_safety import first_line
from factcheck.v1 import checker_pb2_grpc, factcheck_pb2
from factcheck_gateway.knowledge.retrieval import Retriever
from factcheck_gateway.ledger.budget import UNLIMITED, Budget, run_budget
from factcheck_gateway.ledger.pricing import Pricing
from factcheck_gateway.ledger.queries import LedgerStore
from factcheck_gateway.ledger.run_ledger import RunLedger, ledgered
from factcheck_gateway.ledger.totals import UsageTotals
from factcheck_gateway.request_validation import ValidationError, checking_against
from factcheck_gateway.runs.concurrency_limit import RunLimit
from factcheck_gateway.runs.events import RunEvents, event_key
from factcheck_gateway.runs.flow import execute
from factcheck_gateway.runs.lease import fenced
from factcheck_gateway.runs.plan import Plan
from factcheck_gateway.runs.recovery import recover_periodically
from factcheck_gateway.runs.run import CANCELLED_BY_CALLER, Downstream, Run, RunMode
from factcheck_gateway.runs.watch import EventHub
from factcheck_gateway.servable_models import ServableModelsCache
from factcheck_gateway.store import STATUS_CANCELLED, STATUS_FAILED
from factcheck_gateway.store.records import (
    LEASE_CANCEL_REQUESTED,
    LEASE_ENDED,
    LEASE_LOST,
    FinalState,
    LeaseLost,
    MessageRecord,
    StoredEvent,
)
from factcheck_gateway.store.stage_store import ANY_TENANT, StageStore
from factcheck_gateway.store.writer import StoreWriter

log = logging.getLogger("factcheck.gateway.runs")

# At most this many abandoned runs are claimed in one recovery pass (the rest wait for the next).
RECOVERY_BATCH = 20
NOT_RESUMABLE = "The run could not be resumed after its gateway stopped: {reason}"
TOO_MANY_RESUMES = (
    "The run was stopped: it lost its gateway {count} time(s) and FACTCHECK_MAX_RUN_RESUMES allows {limit} resume(s)."
)
CANCELLED_WHILE_ABANDONED = "Cancelled by the caller while no gateway was running it."
# Tries to end a run whose gateway does not answer a Cancel (each lost to a commit of the run).
UNATTENDED_CANCEL_ATTEMPTS = 5


def gateway_owner_id() -> str:
    """This process's name as a lease owner: readable in the database, unique per start."""
    return f"{socket.gethostname()[:32]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class ModeLookup(Protocol):
    """The per-mode lookups a registry is handed (factcheck_gateway/mode_dispatch.py): runs/ knows no mode."""

    def mode_of(self, plan: Plan) -> RunMode:
        """The mode that made `plan`: its run class and steps."""
        ...

    def validate_run_request(self, request: factcheck_pb2.RunRequest, settings: Settings, *, tenant_id: str) -> Plan:
        """A stored request planned again by its mode (a resumed run); raises ValidationError."""
        ...

    def resume_request(self, record: MessageRecord) -> factcheck_pb2.RunRequest | None:
        """The request a stored run resumes with, from its request_config (None: stored before runs were
        durable); raises ValueError."""
        ...


class RunRegistry:
    def __init__(
        self,
        settings: Settings,
        store: StageStore,
        downstream: Downstream,
        retriever: Retriever,
        hub: EventHub,
        run_limit: RunLimit,
        modes: ModeLookup,
    ) -> None:
        self.owner = gateway_owner_id()
        self._settings = settings
        self._modes = modes
        self._store = store
        self._downstream = downstream
        # What the checker serves, for request validation (asked of it, kept a few seconds).
        self.servable_models = ServableModelsCache(downstream.checker, settings)
        self._pricing = Pricing.from_settings(settings)
        self.ledger_store = LedgerStore(store.engine)
        self._retriever = retriever
        self._hub = hub
        self._run_limit = run_limit
        self._runs: dict[str, tuple[Run, asyncio.Task]] = {}
        # One writer group-commits every run's events and stage rows.
        self.writer = StoreWriter(store)
        self._loops: list[asyncio.Task] = []
        self._recover_now = asyncio.Event()

    # --- starting runs ----------------------------------------------------------------------------------

    def new_run(
        self,
        plan: Plan,
        message_id: str,
        conversation_id: str,
        *,
        last_seq: int = 0,
        emitted_keys: frozenset[str] = frozenset(),
        budget: Budget = UNLIMITED,
        spent: UsageTotals | None = None,
        lease_token: int = 0,
    ) -> Run:
        """The run, its every downstream call ledgered and budget-checked (`spent`: what earlier
        attempts of a resumed run used), and started only once the run's lease is proven
        (`lease_token`: the run's resume_count when this gateway got it)."""
        mode = self._modes.mode_of(plan)
        ledger = RunLedger(
            tenant_id=plan.tenant_id, mode=plan.mode_name, pricing=self._pricing, budget=budget, spent=spent
        )
        run = mode.run_class(
            plan=plan,
            mode=mode,
            message_id=message_id,
            conversation_id=conversation_id,
            store=self._store,
            downstream=ledgered(self._downstream, ledger) if self._settings.ledger_enabled else self._downstream,
            ledger=ledger,
            events=RunEvents(message_id, last_seq=last_seq, emitted_keys=emitted_keys, on_confirmed=self._hub.notify),
            deadline=time.monotonic() + self._settings.global_timeout_s,
            owner=self.owner,
            lease_s=self._settings.run_lease_s,
            writer=self.writer,
            retriever=self._retriever,
            store_retry_budget_s=self._settings.store_retry_budget_s,
            lease_token=lease_token,
        )
        run.downstream = fenced(run.downstream, run.prove_lease)
        return run

    def launch(self, run: Run) -> asyncio.Task:
        # The run's task (and the calls and tasks it starts) carries the run's own log context,
        # whoever launched it: a Run call, or a recovery pass resuming several runs.
        context = contextvars.copy_context()
        context.run(open_run_context, run.message_id)
        task = asyncio.get_running_loop().create_task(execute(run), name=f"run-{run.message_id}", context=context)
        run.task = task
        self._runs[run.message_id] = (run, task)
        task.add_done_callback(lambda _: self._runs.pop(run.message_id, None))
        return task

    # --- cancellation -----------------------------------------------------------------------------------

    def cancel_local(self, message_id: str, reason: str) -> asyncio.Task | None:
        """Stop a run this gateway executes; its pipeline stores CANCELLED. None if it is not here."""
        entry = self._runs.get(message_id)
        if entry is None:
            return None
        run, task = entry
        if run.cancel_reason is None:
            run.cancel_reason = reason
            task.cancel()
        return task

    async def end_unattended(self, message_id: str) -> MessageRecord | None:
        """End a RUNNING run as CANCELLED in the store, whichever gateway holds it (Cancel of a run whose
        gateway did not act on the request: it died, or is paused). Its `cancelled` event continues the
        stored sequence, so watchers on every replica end with it; a gateway still executing the run
        finds it ended at its next lease check or commit and stops. Returns the run as it is then
        (still RUNNING only if it kept storing events faster than this could end it)."""
        record = None
        for _ in range(UNATTENDED_CANCEL_ATTEMPTS):
            record = await asyncio.to_thread(self._store.get_message, message_id, tenant_id=ANY_TENANT)
            if record is None or record.finished:
                return record
            events = RunEvents(record.id, last_seq=record.last_seq)
            event = events.build("cancelled", factcheck_pb2.CancelledPayload(reason=CANCELLED_BY_CALLER))
            assert event is not None  # (built without emitted keys: never None)
            stored = [StoredEvent(event.seq, "cancelled", event.SerializeToString())]
            final = FinalState(STATUS_CANCELLED, error_message=CANCELLED_BY_CALLER, failures=record.failures)
            if await asyncio.to_thread(self._store.end_unattended, record.id, record.last_seq, stored, final):
                log.warning("%s: cancelled in the store; its gateway did not act on the request", record.id)
                metrics.record_run(STATUS_CANCELLED)
                self._hub.notify(record.id)
                self.cancel_local(record.id, CANCELLED_BY_CALLER)  # (a run of this gateway stuck storing its end)
                return await asyncio.to_thread(self._store.get_message, record.id, tenant_id=ANY_TENANT)
        return record

    def on_cancel_notification(self, message_id: str) -> None:
        """Another replica's Cancel flagged a run; stop it if it runs here."""
        self.cancel_local(message_id, CANCELLED_BY_CALLER)

    def recover_soon(self) -> None:
        self._recover_now.set()

    # --- background loops -------------------------------------------------------------------------------

    @property
    def checker(self) -> checker_pb2_grpc.CheckerServiceStub:
        """The checker service's stub (not ledgered: what the gateway asks it outside a run)."""
        return self._downstream.checker

    def start(self, database_ready: Callable[[], Awaitable[None]]) -> None:
        """Heartbeats now; recovery once the database is migrated (`database_ready` returns)."""
        loop = asyncio.get_running_loop()
        self.writer.start()
        self._loops = [
            loop.create_task(self._heartbeat_loop(), name="run-lease-heartbeat"),
            loop.create_task(self._check_loop(), name="run-lease-check"),
            loop.create_task(
                recover_periodically(
                    self.recover_once,
                    database_ready,
                    self._settings.recovery_interval_s,
                    what="recovery pass",
                    log=log,
                    wake=self._recover_now,
                ),
                name="run-recovery",
            ),
        ]

    async def _heartbeat_loop(self) -> None:
        interval = self._settings.run_lease_s / 3
        while True:
            await asyncio.sleep(interval)
            if not self._runs:
                continue
            # Only the runs executing here (a row this gateway leased but never started must lapse), and
            # only those are judged below: a run launched while the renewal ran is not in its answer.
            renewing = dict(self._runs)
            try:
                lost, cancel_requested = await asyncio.to_thread(
                    self._store.renew_leases, self.owner, self._settings.run_lease_s, list(renewing)
                )
            except SQLAlchemyError as error:
                log.warning("could not renew run leases: %s", first_line(error))
                continue
            for message_id, (_run, task) in renewing.items():
                if message_id in cancel_requested:
                    self.cancel_local(message_id, CANCELLED_BY_CALLER)
                elif message_id in lost and not task.done():
                    log.warning("%s: lease lost to another gateway; stopping here", message_id)
                    task.cancel()

    async def _check_loop(self) -> None:
        """Every FACTCHECK_WATCH_POLL_S (a read, far more often than the renewal): stop at once the runs
        executing here that another gateway took over, that ended without this gateway (a Cancel on
        another replica ended a run it thought dead), or that a Cancel asked to stop (on SQLite no
        notification says so). Their calls in flight are cancelled with them."""
        while True:
            await asyncio.sleep(self._settings.watch_poll_s)
            if not self._runs:
                continue
            checking = dict(self._runs)
            try:
                states = await asyncio.to_thread(self._store.lease_states, self.owner, list(checking))
            except SQLAlchemyError as error:
                log.warning("could not check run leases: %s", first_line(error))
                continue
            for message_id, state in states.items():
                run, task = checking[message_id]
                if task.done():
                    continue
                if state == LEASE_CANCEL_REQUESTED:
                    self.cancel_local(message_id, CANCELLED_BY_CALLER)
                elif state == LEASE_LOST or (state == LEASE_ENDED and not run.ending):
                    log.warning("%s: the run is no longer this gateway's (%s); stopping here", message_id, state)
                    task.cancel()

    async def recover_once(self) -> int:
        """Claim abandoned runs and resume (or end) each; returns how many were claimed."""
        claimed = await asyncio.to_thread(
            self._store.claim_abandoned,
            self.owner,
            self._settings.run_lease_s,
            RECOVERY_BATCH,
            exclude=list(self._runs),
        )
        for record in claimed:
            await self._resume(record)
        return len(claimed)

    async def _resume(self, record: MessageRecord) -> None:
        settings = self._settings
        if record.cancel_requested:
            await self._end(record, STATUS_CANCELLED, CANCELLED_WHILE_ABANDONED)
            return
        if record.resume_count > settings.max_run_resumes:
            message = TOO_MANY_RESUMES.format(count=record.resume_count, limit=settings.max_run_resumes)
            await self._end(record, STATUS_FAILED, message)
            return
        if not record.resumable:
            await self._end(
                record, STATUS_FAILED, NOT_RESUMABLE.format(reason="it was stored before runs were durable")
            )
            return
        served = await self.servable_models.get()
        try:
            request = self._modes.resume_request(record)
            assert request is not None  # (resumable)
            with checking_against(served):
                plan = self._modes.validate_run_request(request, settings, tenant_id=record.tenant_id)
        except (ValidationError, ValueError) as error:
            await self._end(
                record, STATUS_FAILED, NOT_RESUMABLE.format(reason=f"its request is not valid here ({error})")
            )
            return
        stages = await asyncio.to_thread(self._store.get_stages, record.id)
        spent = await asyncio.to_thread(self.ledger_store.run_usage, [record.id])
        stored_events = await asyncio.to_thread(self._store.events_after, record.id, 0)
        run = self.new_run(
            plan,
            record.id,
            record.conversation_id,
            last_seq=record.last_seq,
            emitted_keys=frozenset(_keys(stored_events)),
            budget=run_budget(request, settings, record.tenant_id),
            spent=spent.get(record.id),
            lease_token=record.resume_count,
        )
        run.stored = {stage.stage_type: stage for stage in stages}
        run.stored_title = record.title
        log.info(
            "%s: resuming (attempt %d) from %d stored stages after seq %d",
            record.id,
            record.resume_count + 1,
            len(stages),
            record.last_seq,
        )
        self._run_limit.count_resumed(self.launch(run), record.tenant_id)

    async def _end(self, record: MessageRecord, status: str, message: str) -> None:
        """End a claimed run that will not run again, with its final event."""
        events = RunEvents(record.id, last_seq=record.last_seq)
        if status == STATUS_CANCELLED:
            event = events.build("cancelled", factcheck_pb2.CancelledPayload(reason=message))
        else:
            event = events.build("error", factcheck_pb2.ErrorPayload(message=message))
        assert event is not None  # (built without emitted keys: never None)
        stored = [StoredEvent(event.seq, event.WhichOneof("event"), event.SerializeToString())]
        log.warning("%s: ending as %s: %s", record.id, status, message)
        try:
            await asyncio.to_thread(
                self._store.commit_run,
                record.id,
                self.owner,
                self._settings.run_lease_s,
                events=stored,
                final=FinalState(status, error_message=message, failures=record.failures),
            )
        except LeaseLost:
            return
        self._hub.notify(record.id)

    # --- shutdown ---------------------------------------------------------------------------------------

    async def drain(self, timeout_s: float) -> None:
        """Give in-flight runs up to timeout_s to finish (graceful shutdown)."""
        tasks = [task for _, task in self._runs.values()]
        if tasks:
            log.info("waiting up to %.1fs for %d in-flight runs", timeout_s, len(tasks))
            await asyncio.wait(tasks, timeout=timeout_s)

    async def stop(self) -> None:
        """Stop the loops; hand unfinished runs over at once (their lease ends now) and stop them here."""
        for task in self._loops:
            task.cancel()
        unfinished = list(self._runs)
        if unfinished:
            log.info("handing %d unfinished runs over to other gateways", len(unfinished))
            with contextlib.suppress(SQLAlchemyError):
                await asyncio.to_thread(self._store.release_leases, self.owner, unfinished)
            for _, task in list(self._runs.values()):
                task.cancel()
        await asyncio.gather(*self._loops, *(task for _, task in self._runs.values()), return_exceptions=True)
        await self.writer.stop()


def _keys(stored_events: list[StoredEvent]) -> list[str]:
    return [event_key(factcheck_pb2.FactCheckEvent.FromString(event.payload)) for event in stored_events]
