"""A run from its first event to its end: its mode's steps in order, then complete, error or cancelled,
the same way for every mode (the run's state and writes are run.py's)."""

from __future__ import annotations

import asyncio
import logging
import time

from factcheck.kit.observability import metrics
from factcheck.v1 import factcheck_pb2
from factcheck_gateway.ledger.budget import BudgetExceeded
from factcheck_gateway.ledger.queries import record_model_calls
from factcheck_gateway.runs.run import CANCELLED_BY_CALLER, Run, RunFailed, stage_failure
from factcheck_gateway.store import STATUS_CANCELLED, STATUS_COMPLETE, STATUS_FAILED, STATUS_PARTIAL
from factcheck_gateway.store.records import FinalState, LeaseLost, RunCommit, StoredEvent
from factcheck_gateway.stored_results import status_proto

log = logging.getLogger("factcheck.gateway.run")

INTERNAL_ERROR = "The fact-check failed unexpectedly; the stages completed so far are stored."


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
    """End the run with its `error` event, carrying every failed stage's cause.

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
            await asyncio.to_thread(record_model_calls, run.store.engine, run.message_id, rows)
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
