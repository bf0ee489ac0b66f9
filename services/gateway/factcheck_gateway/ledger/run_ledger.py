"""The model-call ledger of one run, and the stubs through which every call of the run goes.

`RunRegistry.new_run` wraps the run's downstream stubs (`ledgered`), whatever its mode: each
call is checked against the run's budget before it starts (`BudgetExceeded` once it is spent)
and, when it ends, every model call the service reports in its `x-factcheck-model-calls-bin`
trailer (failures included) becomes a ledger row, priced now. A call that ends without the
trailer (the service was unreachable, the deadline passed) is one row with its status as the
outcome and no tokens. A call the run cuts short (Cancel, a spent budget, the run's end: the
trailer never comes) is one `cancelled` row with estimated usage, marked `usage_estimated`; a
run's ending settles every call still under way first (`RunLedger.settle_calls`). Rows wait in
the ledger until the run's next commit stores them (`take_rows`), so they are as durable as the
stage rows.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from collections.abc import Sequence
from typing import Any

import grpc

from factcheck.kit.observability import metrics
from factcheck.models.calls import calls_from_metadata
from factcheck.v1 import usage_pb2
from factcheck_gateway.ledger.budget import UNLIMITED, Budget, BudgetExceeded
from factcheck_gateway.ledger.pricing import Pricing
from factcheck_gateway.ledger.totals import OUTCOME_CACHE_HIT, OUTCOME_CANCELLED, UsageTotals

# The ledger's `stage` of a call: what kind of work it paid for, from the RPC's name.
_STAGE_OF_METHOD = {"ExtractStream": "extract"}
_WORDS = re.compile(r"(?<!^)(?=[A-Z])")
# Calls that pay for no stage row (the title lives in the messages row).
_NO_ROW_STAGES = frozenset({"title"})
# How long a stage row waits for its model's call still ending (a stream's trailer follows its last message).
ROW_WAITS_FOR_CALL_S = 1.0


def stage_of(method: str) -> str:
    """ "Verify" → "verify", "CouncilCheck" → "council_check", "ExtractStream" → "extract"."""
    return _STAGE_OF_METHOD.get(method) or _WORDS.sub("_", method).lower()


class RunLedger:
    """A run's ledger rows not yet stored, what the run has spent so far, and its budget."""

    def __init__(
        self,
        *,
        tenant_id: str = "",
        mode: str = "",
        pricing: Pricing | None = None,
        budget: Budget = UNLIMITED,
        spent: UsageTotals | None = None,
    ) -> None:
        self.tenant_id = tenant_id
        self.mode = mode
        self.pricing = pricing or Pricing({})
        self.budget = budget
        # Everything the run spent, earlier attempts of a resumed run included.
        self.spent = spent or UsageTotals()
        self._pending: list[dict[str, Any]] = []
        # Rows not yet claimed by a stage row (for its promptVersions), and the last versions per model.
        self._unclaimed: list[dict[str, Any]] = []
        self._last_versions: dict[str, list[str]] = {}
        # Calls under way that will pay for a stage row, by model (see prompt_versions_for).
        self._in_flight: dict[str, set[asyncio.Future]] = {}
        # Prompt versions the services reported, by (model, stage): what the cache may key by.
        self._versions: dict[tuple[str, str], set[str]] = {}
        # Why the budget refused a call, once it has.
        self.stop_reason: str | None = None
        # Every call started and not yet ledgered (`StartedCall`): what `settle_calls` ends.
        self.under_way: set[StartedCall] = set()

    # --- budget ----------------------------------------------------------------------------------------

    def check(self) -> None:
        """Before a call: raise BudgetExceeded once the run's budget is spent."""
        reason = self.stop_reason or self.budget.exceeded_by(self.spent)
        if reason is not None:
            self.stop_reason = reason
            raise BudgetExceeded(reason)

    # --- recording -------------------------------------------------------------------------------------

    def record_call(self, method: str, call: usage_pb2.ModelCall) -> None:
        price = self.pricing.price_of(call.model)
        cost = price.cost(call.prompt_tokens, call.completion_tokens, call.cached_tokens) if price else 0.0
        self._add(
            {
                "tenant_id": self.tenant_id,
                "mode": self.mode,
                "stage": stage_of(method),
                "method": method,
                "model": call.model[:255],
                "provider": (call.provider or call.model.split("/", 1)[0])[:64],
                "prompt_tokens": call.prompt_tokens,
                "completion_tokens": call.completion_tokens,
                "cached_tokens": call.cached_tokens,
                "total_tokens": call.prompt_tokens + call.completion_tokens,
                "attempts": call.attempts,
                "latency_ms": call.latency_ms,
                "outcome": call.outcome[:64] or "ok",
                "prompt_version": call.prompt_version[:64],
                "usage_estimated": call.usage_estimated,
                "input_price_per_million": price.input if price else None,
                "output_price_per_million": price.output if price else None,
                "cached_input_price_per_million": price.cached_input if price else None,
                "cost_usd": cost,
            }
        )

    def record_unreported(self, method: str, model: str, outcome: str, latency_ms: int) -> None:
        """A call that ended without the service's report (no tokens known)."""
        self.record_call(
            method,
            usage_pb2.ModelCall(model=model or "unknown", attempts=1, latency_ms=latency_ms, outcome=outcome),
        )

    async def settle_calls(self, wait_s: float = ROW_WAITS_FOR_CALL_S) -> None:
        """Before a run's last commit: cancel every call still under way and wait (at most `wait_s`)
        until each is ledgered, so that the last commit stores every call the run started. A call
        that ended as the run stopped keeps what its service reported; the others are `cancelled`
        rows with estimated usage (`StartedCall.record_cancelled`), also when no one awaits them."""
        calls = list(self.under_way)
        if not calls:
            return
        for call in calls:
            if hasattr(call.grpc_call, "cancel") and not call.claimed:
                call.grpc_call.cancel()
        await asyncio.wait([asyncio.shield(call.recorded) for call in calls], timeout=wait_s)
        for call in calls:
            call.record_cancelled()  # no one was awaiting it (a claimed call records itself)

    def record_cache_hits(self, stage: str, model: str, prompt_version: str, count: int) -> None:
        """`count` answers reused from the cache: rows that cost nothing, counted as cache hits."""
        for _ in range(count):
            self._add(
                {
                    "tenant_id": self.tenant_id,
                    "mode": self.mode,
                    "stage": stage,
                    "method": "cache",
                    "model": model[:255],
                    "provider": model.split("/", 1)[0][:64],
                    "prompt_tokens": 0,
                    "completion_tokens": 0,
                    "cached_tokens": 0,
                    "total_tokens": 0,
                    "attempts": 0,
                    "latency_ms": 0,
                    "outcome": OUTCOME_CACHE_HIT,
                    "prompt_version": prompt_version[:64],
                    "usage_estimated": False,
                    "input_price_per_million": None,
                    "output_price_per_million": None,
                    "cached_input_price_per_million": None,
                    "cost_usd": 0.0,
                }
            )

    def _add(self, row: dict[str, Any]) -> None:
        self._pending.append(row)
        self.spent.add_row(row)
        if row["outcome"] != OUTCOME_CACHE_HIT:
            metrics.record_ledger_call(row["model"], row["stage"], row["total_tokens"], row["cost_usd"])
            self._versions.setdefault((row["model"], row["stage"]), set()).add(row["prompt_version"])
            if row["stage"] not in _NO_ROW_STAGES:
                self._unclaimed.append(row)

    def reported_versions(self, model: str, stage: str) -> set[str]:
        """The prompt versions the services reported for the run's calls of this model and stage."""
        return self._versions.get((model, stage), set())

    def take_rows(self) -> tuple[dict[str, Any], ...]:
        """The rows to store with the run's next commit (each is handed out once)."""
        rows, self._pending = tuple(self._pending), []
        return rows

    def return_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        """Rows taken for a commit that was refused: pending again, to be stored another way."""
        self._pending[:0] = rows

    def call_started(self, method: str, model: str) -> asyncio.Future | None:
        """Note a call under way (resolve the future when it is ledgered)."""
        if stage_of(method) in _NO_ROW_STAGES:
            return None
        ended = asyncio.get_running_loop().create_future()
        calls = self._in_flight.setdefault(model, set())
        calls.add(ended)
        ended.add_done_callback(calls.discard)
        return ended

    async def prompt_versions_for(self, model: str | None) -> list[str]:
        """The prompt versions of the calls a stage row of `model` reports: the calls of that model
        not yet claimed by a row (several, for a stage of several calls), else the model's last ones.
        A call of the model still ending (a stream whose trailer is on its way) is waited for, briefly."""
        if not model:
            return []
        if under_way := self._in_flight.get(model):
            await asyncio.wait([asyncio.shield(call) for call in under_way], timeout=ROW_WAITS_FOR_CALL_S)
        claimed = [row for row in self._unclaimed if row["model"] == model]
        if claimed:
            self._unclaimed = [row for row in self._unclaimed if row["model"] != model]
            versions = sorted({row["prompt_version"] for row in claimed if row["prompt_version"]})
            self._last_versions[model] = versions
            return versions
        return self._last_versions.get(model, [])


class LedgeredStub:
    """A downstream stub whose every call is budget-checked and ledgered in the run's `RunLedger`."""

    def __init__(self, stub: object, ledger: RunLedger) -> None:
        self._stub = stub
        self._ledger = ledger

    def __getattr__(self, method: str):
        target = getattr(self._stub, method)
        ledger = self._ledger

        def call(request, *args, **kwargs):
            ledger.check()
            model = getattr(request, "model", "")
            size = request.ByteSize() if hasattr(request, "ByteSize") else 0
            grpc_call = target(request, *args, **kwargs)
            started = StartedCall(ledger, method, model, grpc_call, size)
            if hasattr(grpc_call, "__await__"):
                return _unary(started)
            return _LedgeredStream(started)

        return call


def ledgered(downstream, ledger: RunLedger):
    """A copy of a `Downstream` (any dataclass of stubs) whose stubs all go through `ledger`."""
    return dataclasses.replace(
        downstream,
        **{f.name: LedgeredStub(getattr(downstream, f.name), ledger) for f in dataclasses.fields(downstream)},
    )


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


class StartedCall:
    """One call a run started, ledgered exactly once whatever ends it: its service's report (the
    trailer), its status when the service reported nothing, or, when the run cut it short before
    the trailer came (Cancel, a spent budget, the run's end), a `cancelled` row whose prompt tokens
    are estimated from the request's size and marked `usage_estimated` (no completion is known)."""

    def __init__(self, ledger: RunLedger, method: str, model: str, grpc_call, request_bytes: int) -> None:
        self.ledger, self.method, self.model, self.grpc_call = ledger, method, model, grpc_call
        self.request_bytes = request_bytes
        self.started = time.monotonic()
        self.claimed = False  # a recording has begun: nothing else records this call
        self.recorded = asyncio.get_running_loop().create_future()
        self._row_ended = ledger.call_started(method, model)
        ledger.under_way.add(self)

    def _claim(self) -> bool:
        if self.claimed:
            return False
        self.claimed = True
        return True

    def _done(self) -> None:
        self.ledger.under_way.discard(self)
        _end(self._row_ended)
        if not self.recorded.done():
            self.recorded.set_result(None)

    async def ended(self, error: grpc.aio.AioRpcError | None) -> None:
        """The RPC ended (`error` when it failed): its trailer's calls, or its status."""
        if not self._claim():
            return
        try:
            if error is not None:
                reported = calls_from_metadata(error.trailing_metadata())
            elif hasattr(self.grpc_call, "trailing_metadata"):
                reported = calls_from_metadata(await self.grpc_call.trailing_metadata())
            else:  # a test double: nothing to read
                return
            if reported is None:
                if error is not None:
                    self.ledger.record_unreported(self.method, self.model, error.code().name, _elapsed_ms(self.started))
                return
            for model_call in reported:
                self.ledger.record_call(self.method, model_call)
        finally:
            self._done()

    async def cut_short(self) -> None:
        """The run stopped waiting (cancelled, or the reader left): the trailer if the RPC ended all
        the same, else the RPC is cancelled and recorded as cancelled with estimated usage."""
        call = self.grpc_call
        if not self.claimed and hasattr(call, "done") and call.done() and not call.cancelled():
            await self.ended(None)  # it ended as the run stopped: what the service reported
            return
        if hasattr(call, "cancel"):
            call.cancel()
        self.record_cancelled()

    def record_cancelled(self) -> None:
        if not self._claim():
            return
        try:
            # About four bytes a token (factcheck.models.limits.estimate_tokens): the prompt is built from the request.
            self.ledger.record_call(
                self.method,
                usage_pb2.ModelCall(
                    model=self.model or "unknown",
                    prompt_tokens=max(1, self.request_bytes // 4),
                    attempts=1,
                    latency_ms=_elapsed_ms(self.started),
                    outcome=OUTCOME_CANCELLED,
                    usage_estimated=True,
                ),
            )
        finally:
            self._done()


async def _unary(started: StartedCall):
    try:
        response = await started.grpc_call
    except grpc.aio.AioRpcError as error:
        await started.ended(error)
        raise
    except BaseException:  # cancelled: the run's task, or the call by `settle_calls`
        await started.cut_short()
        raise
    await started.ended(None)
    return response


def _end(ended) -> None:
    if ended is not None and not ended.done():
        ended.set_result(None)


class _LedgeredStream:
    """A server-streaming call, ledgered when its stream ends (the trailer comes last)."""

    def __init__(self, started: StartedCall) -> None:
        self._started = started
        self._call = started.grpc_call

    def __getattr__(self, name: str):
        return getattr(self._call, name)

    async def __aiter__(self):
        try:
            async for message in self._call:
                yield message
        except grpc.aio.AioRpcError as error:
            await self._started.ended(error)
            raise
        except BaseException:  # cancelled, or the reader left
            await self._started.cut_short()
            raise
        await self._started.ended(None)
