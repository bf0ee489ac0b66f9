"""FactCheckService: Run (streamed pipeline), Watch, Cancel, GetResult and ListResults.

Each call works for the caller's tenant (`caller_tenant()`, set by the auth interceptor): a
run is stored as the tenant's, and every other call sees only the tenant's runs (another
tenant's run is NOT_FOUND, exactly as an unknown one).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections.abc import AsyncIterator
from functools import partial

import grpc

from factcheck.core.domain import is_known_enum
from factcheck.kit.errors import (
    Aborted,
    AlreadyExists,
    FailedPrecondition,
    NotFound,
    Reason,
    Unavailable,
    check_argument,
)
from factcheck.kit.observability.context import bind_message_id
from factcheck.kit.security.tenants import caller_tenant
from factcheck.kit.settings import Settings
from factcheck.text.text_safety import excerpt
from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc
from factcheck_gateway.grounding_checkers import confirm_grounding_checkers
from factcheck_gateway.ledger.budget import run_budget
from factcheck_gateway.mode_dispatch import (
    check_stored,
    checker_fields,
    list_results,
    load_result,
    mode_of,
    validate_run_request,
)
from factcheck_gateway.modes import Plan
from factcheck_gateway.request_validation import checking_against
from factcheck_gateway.runs.concurrency_limit import RunLimit, RunSlot
from factcheck_gateway.runs.database_calls import (
    DATABASE_RETRY_AFTER_S,
    OUTAGES,
    call_store,
    page_size,
    resource_id,
)
from factcheck_gateway.runs.database_gate import DatabaseGate
from factcheck_gateway.runs.events import live_then_stored
from factcheck_gateway.runs.registry import RunRegistry
from factcheck_gateway.runs.run import CANCELLED_BY_CALLER
from factcheck_gateway.runs.run import Run as ModeRun
from factcheck_gateway.runs.watch import EventHub, watch_events
from factcheck_gateway.store.records import MessageRecord, NewRun, RequestIdTaken, new_run_row
from factcheck_gateway.store.stage_store import ANY_TENANT, StageStore
from factcheck_gateway.stored_results import status_proto

log = logging.getLogger("factcheck.gateway")

DATABASE_UNAVAILABLE = "The results database is unavailable, so nothing was run. Try again shortly."
RESULTS_UNAVAILABLE = "The results database is unavailable. Try again shortly."
REQUEST_ID_REUSED = (
    "request_id {request_id} was already used for a different request (run {message_id}); "
    "send the same request to attach to that run, or a new request_id to start another."
)
# How long Cancel waits for a run of this gateway to store its CANCELLED status.
CANCEL_WAIT_S = 10.0
# How long Cancel waits for another gateway executing the run to store CANCELLED (it hears of the request
# at once on PostgreSQL, within FACTCHECK_WATCH_POLL_S on SQLite) before ending the run in the store itself:
# that gateway may have died or be paused, and its lease may have most of its term left.
CANCEL_OWNER_GRACE_S = 1.0
CANCEL_POLL_S = 0.1
STILL_STOPPING = "The run kept storing events while it was being cancelled; send Cancel again."


def request_fingerprint(request: factcheck_pb2.RunRequest) -> str:
    """What makes two Runs with one request_id the same request: every field but the id."""
    copy = factcheck_pb2.RunRequest()
    copy.CopyFrom(request)
    copy.ClearField("request_id")
    return hashlib.sha256(copy.SerializeToString(deterministic=True)).hexdigest()


def _not_found(message_id: str) -> NotFound:
    return NotFound(
        f"No fact-check with message_id '{excerpt(message_id)}'",
        reason=Reason.RESULT_NOT_FOUND,
        resource_type="factcheck.v1.FactCheckResult",
        resource_name=message_id,
    )


def _valid_request_id(request_id: str) -> bool:
    try:
        return str(uuid.UUID(request_id)) == request_id.lower()
    except ValueError:
        return False


class FactCheckService(factcheck_pb2_grpc.FactCheckServiceServicer):
    def __init__(
        self,
        settings: Settings,
        store: StageStore,
        registry: RunRegistry,
        hub: EventHub,
        run_limit: RunLimit,
        database: DatabaseGate,
    ) -> None:
        self._settings = settings
        self._database = database
        self._store = store
        self._registry = registry
        self._hub = hub
        self.run_limit = run_limit
        # Runs being recorded and launched (each outlives a caller that leaves meanwhile).
        self._starting: set[asyncio.Future] = set()

    @property
    def hub(self) -> EventHub:
        """Wakes this gateway's watchers of a run (ReviewService appends events to finished runs)."""
        return self._hub

    async def Run(
        self, request: factcheck_pb2.RunRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[factcheck_pb2.RunResponse]:
        tenant_id = caller_tenant()
        if self.run_limit.refusal(tenant_id) is not None and request.HasField("request_id"):
            # A retried Run at the limit: attaching to the run its request_id started counts against no limit.
            existing = await self._run_of_request_id(request, tenant_id)
            if existing is not None:
                async for response in self._attach(request, existing):
                    yield response
                return
        # Concurrent-run limits: RESOURCE_EXHAUSTED beyond FACTCHECK_MAX_CONCURRENT_RUNS or, for this
        # tenant, FACTCHECK_MAX_CONCURRENT_RUNS_PER_TENANT (runs/concurrency_limit.py).
        slot = await self.run_limit.admit(context, tenant_id)

        with checking_against(await self._registry.servable_models.get()):
            plan = validate_run_request(request, self._settings, tenant_id=tenant_id)
        await confirm_grounding_checkers(checker_fields(plan), self._registry.checker, self._settings)
        await call_store(DATABASE_UNAVAILABLE, check_stored, plan, self._store.engine)
        request_id = request.request_id if request.HasField("request_id") else None
        check_argument(
            request_id is None or _valid_request_id(request_id),
            "request_id",
            "request_id must be a UUID in its canonical form, e.g. 123e4567-e89b-12d3-a456-426614174000",
        )

        if not self._database.ready:
            raise Unavailable(
                DATABASE_UNAVAILABLE, reason=Reason.DATABASE_UNAVAILABLE, retry_after_s=DATABASE_RETRY_AFTER_S
            )
        fingerprint = request_fingerprint(request) if request_id is not None else None
        # Recording the run and launching it is one step the caller cannot interrupt: a caller that
        # leaves mid-way must not leave a stored RUNNING run that nobody executes.
        slot.hand_to_starter()
        starting = asyncio.ensure_future(self._start_run(slot, request, plan, request_id, fingerprint))
        self._starting.add(starting)
        starting.add_done_callback(self._starting.discard)
        try:
            run = await asyncio.shield(starting)
        except RequestIdTaken as taken:
            # A retried Run: follow the run that request_id started (never a second one).
            existing = await asyncio.to_thread(self._store.get_message, taken.message_id, tenant_id=tenant_id)
            if existing is None:
                raise AlreadyExists(
                    REQUEST_ID_REUSED.format(request_id=request_id, message_id=taken.message_id),
                    reason=Reason.REQUEST_ID_REUSED,
                    resource_type="factcheck.v1.FactCheckResult",
                    resource_name=taken.message_id,
                ) from None
            async for response in self._attach(request, existing):
                yield response
            return

        bind_message_id(run.message_id)  # log lines of this call and of its run carry it
        async for event in live_then_stored(run.events, partial(self._follow, run.message_id)):
            yield factcheck_pb2.RunResponse(event=event)

    async def _run_of_request_id(self, request: factcheck_pb2.RunRequest, tenant_id: str) -> MessageRecord | None:
        """The tenant's run that this request's request_id started, if there is one (None for an id that
        is not a canonical UUID: Run refuses it later)."""
        if not _valid_request_id(request.request_id):
            return None
        return await call_store(
            DATABASE_UNAVAILABLE, self._store.find_by_request_id, request.request_id, tenant_id=tenant_id
        )

    async def _attach(
        self, request: factcheck_pb2.RunRequest, existing: MessageRecord
    ) -> AsyncIterator[factcheck_pb2.RunResponse]:
        """A retried Run: the events of the run its request_id started, from the first (ALREADY_EXISTS when
        that run was started by a different request)."""
        if existing.request_sha256 != request_fingerprint(request):
            raise AlreadyExists(
                REQUEST_ID_REUSED.format(request_id=request.request_id, message_id=existing.id),
                reason=Reason.REQUEST_ID_REUSED,
                resource_type="factcheck.v1.FactCheckResult",
                resource_name=existing.id,
            )
        bind_message_id(existing.id)
        async for event in self._follow(existing.id, 0):
            yield factcheck_pb2.RunResponse(event=event)

    async def _start_run(
        self, slot: RunSlot, request: factcheck_pb2.RunRequest, plan: Plan, request_id, fingerprint
    ) -> ModeRun:  # (run.Run: in this class, `Run` is the RPC)
        """Store the new run and launch it; the slot goes to the run's task (or back, on failure).

        Without a request_id the first model call starts while the run's row is written (its
        first event is stored after the row); with one, the row comes first, so that a retried
        Run finds the first run before anything of a second one has run.
        """
        message_id = str(uuid.uuid4())
        conversation_id = plan.conversation_id or str(uuid.uuid4())
        row = new_run_row(
            message_id,
            conversation_id,
            plan.question,
            plan.request_config(),
            tenant_id=plan.tenant_id,
            request_id=request_id,
            request_sha256=fingerprint,
            request_proto=mode_of(plan).resolved_request(request, plan).SerializeToString(deterministic=True),
            lease_owner=self._registry.owner,
            lease_s=self._settings.run_lease_s,
        )
        budget = run_budget(request, self._settings, plan.tenant_id)
        run = self._registry.new_run(plan, message_id, conversation_id, budget=budget)
        if request_id is not None:
            try:
                await call_store(DATABASE_UNAVAILABLE, self._store.insert_run, row)
            except BaseException:
                slot.release()
                raise
            slot.hold_until_done(self._registry.launch(run))
            return run
        recording = asyncio.ensure_future(self._record_with_others(row))
        run.store_after(recording)
        task = self._registry.launch(run)
        slot.hold_until_done(task)
        try:
            await recording
        except BaseException:
            task.cancel()  # nothing of it is stored: the run stops here, silently
            raise
        return run

    async def _record_with_others(self, row: dict) -> None:
        """The new run's row, group-committed with other runs' writes."""
        try:
            await self._registry.writer.commit(NewRun(row))
        except OUTAGES as error:
            raise Unavailable(
                DATABASE_UNAVAILABLE, reason=Reason.DATABASE_UNAVAILABLE, retry_after_s=DATABASE_RETRY_AFTER_S
            ) from error

    def _follow(self, message_id: str, after_seq: int) -> AsyncIterator[factcheck_pb2.FactCheckEvent]:
        return watch_events(self._store, self._hub, message_id, after_seq, self._settings.watch_poll_s)

    async def Watch(
        self, request: factcheck_pb2.WatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[factcheck_pb2.WatchResponse]:
        check_argument(request.after_seq >= 0, "after_seq", f"after_seq must not be negative (got {request.after_seq})")
        await self._existing_run(request.message_id)
        bind_message_id(request.message_id)
        async for event in self._follow(request.message_id, request.after_seq):
            yield factcheck_pb2.WatchResponse(event=event)

    async def Cancel(
        self, request: factcheck_pb2.CancelRequest, context: grpc.aio.ServicerContext
    ) -> factcheck_pb2.CancelResponse:
        record = await self._existing_run(request.message_id)
        if record.finished:
            raise FailedPrecondition(
                f"The run already finished with status {record.status}; only a running run can be cancelled.",
                reason=Reason.RUN_ALREADY_FINISHED,
                metadata={"status": record.status},
            )
        bind_message_id(record.id)
        await call_store(RESULTS_UNAVAILABLE, self._store.request_cancel, record.id)
        task = self._registry.cancel_local(record.id, CANCELLED_BY_CALLER)
        if task is not None:
            await asyncio.wait([task], timeout=CANCEL_WAIT_S)
        finished = await self._wait_until_finished(record.id, CANCEL_OWNER_GRACE_S)
        if finished is not None and not finished.finished:
            # Its gateway did not act on the request (dead, or paused): end it in the store now rather
            # than when its lease lapses, so that the caller and every watcher learn it at once.
            try:
                finished = await self._registry.end_unattended(record.id)
            except OUTAGES as error:
                raise Unavailable(
                    RESULTS_UNAVAILABLE, reason=Reason.DATABASE_UNAVAILABLE, retry_after_s=DATABASE_RETRY_AFTER_S
                ) from error
        assert finished is not None  # runs are never deleted
        if not finished.finished:
            raise Aborted(STILL_STOPPING, retry_after_s=CANCEL_POLL_S)
        return factcheck_pb2.CancelResponse(status=status_proto(finished.status))

    async def _wait_until_finished(self, message_id: str, wait_s: float) -> MessageRecord | None:
        """The run once it has stored a final status, or as it is after `wait_s`."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + wait_s
        while True:
            record = await asyncio.to_thread(self._store.get_message, message_id, tenant_id=ANY_TENANT)
            if record is None or record.finished or loop.time() >= give_up:
                return record
            await asyncio.sleep(CANCEL_POLL_S)

    async def _existing_run(self, message_id: str) -> MessageRecord:
        """The caller's run; NOT_FOUND for an unknown id and for another tenant's alike."""
        message_id = resource_id("message_id", message_id)
        record = await call_store(RESULTS_UNAVAILABLE, self._store.get_message, message_id, tenant_id=caller_tenant())
        if record is None:
            raise _not_found(message_id)
        return record

    async def GetResult(
        self, request: factcheck_pb2.GetResultRequest, context: grpc.aio.ServicerContext
    ) -> factcheck_pb2.GetResultResponse:
        message_id = resource_id("message_id", request.message_id)
        result = await call_store(RESULTS_UNAVAILABLE, load_result, self._store, message_id, caller_tenant())
        if result is None:  # unknown, or another tenant's: the same answer, so ids of others cannot be probed
            raise _not_found(message_id)
        return factcheck_pb2.GetResultResponse(result=result)

    async def ListResults(
        self, request: factcheck_pb2.ListResultsRequest, context: grpc.aio.ServicerContext
    ) -> factcheck_pb2.ListResultsResponse:
        for field, enum_type, value in (
            ("status", factcheck_pb2.MessageStatus, request.status),
            ("mode", factcheck_pb2.Mode, request.mode),
        ):
            names = ", ".join(name for name in enum_type.keys() if not name.endswith("_UNSPECIFIED"))
            check_argument(not value or is_known_enum(enum_type, value), field, f"{field} must be one of {names}")
        results, next_token = await call_store(
            RESULTS_UNAVAILABLE,
            list_results,
            self._store,
            page_size(request.page_size),
            request.page_token or None,
            caller_tenant(),
            request.status,
            request.mode,
        )
        return factcheck_pb2.ListResultsResponse(results=results, next_page_token=next_token or "")

    async def drain(self, timeout_s: float) -> None:
        """Give in-flight runs up to timeout_s to finish (graceful shutdown)."""
        await self._registry.drain(timeout_s)
