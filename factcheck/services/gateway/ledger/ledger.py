"""The model-call ledger of one run, and the stubs through which every call of the run goes.

`RunRegistry.new_run` wraps the run's downstream stubs (`ledgered`), whatever its mode: each
call is checked against the run's budget before it starts (`BudgetExceeded` once it is spent)
and, when it ends, every model call the service reports in its `x-factcheck-model-calls-bin`
trailer (failures included) becomes a ledger row, priced now. A call that ends without the
trailer (the service was unreachable, the deadline passed) is one row with its status as the
outcome and no tokens. Rows wait in the ledger until the run's next commit stores them
(`take_rows`), so they are as durable as the stage rows.
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time
from typing import Any

import grpc

from factcheck.models.calls import calls_from_metadata
from factcheck.observability import metrics
from factcheck.services.gateway.ledger.budget import UNLIMITED, Budget, BudgetExceeded
from factcheck.services.gateway.ledger.pricing import Pricing
from factcheck.services.gateway.ledger.totals import OUTCOME_CACHE_HIT, UsageTotals
from factcheck.v1 import usage_pb2

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
            started = time.monotonic()
            grpc_call = target(request, *args, **kwargs)
            ended = ledger.call_started(method, model)
            if hasattr(grpc_call, "__await__"):
                return _unary(grpc_call, ledger, method, model, started, ended)
            return _LedgeredStream(grpc_call, ledger, method, model, started, ended)

        return call


def ledgered(downstream, ledger: RunLedger):
    """A copy of a `Downstream` (any dataclass of stubs) whose stubs all go through `ledger`."""
    return dataclasses.replace(
        downstream,
        **{f.name: LedgeredStub(getattr(downstream, f.name), ledger) for f in dataclasses.fields(downstream)},
    )


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


async def _record(ledger: RunLedger, method: str, model: str, started: float, grpc_call, error, ended) -> None:
    try:
        await _record_call(ledger, method, model, started, grpc_call, error)
    finally:
        _end(ended)


async def _record_call(ledger: RunLedger, method: str, model: str, started: float, grpc_call, error) -> None:
    if error is not None:
        reported = calls_from_metadata(error.trailing_metadata())
    elif hasattr(grpc_call, "trailing_metadata"):
        reported = calls_from_metadata(await grpc_call.trailing_metadata())
    else:  # a test double: nothing to read
        return
    if reported is None:
        if error is not None:
            ledger.record_unreported(method, model, error.code().name, _elapsed_ms(started))
        return
    for model_call in reported:
        ledger.record_call(method, model_call)


async def _unary(grpc_call, ledger: RunLedger, method: str, model: str, started: float, ended):
    try:
        response = await grpc_call
    except grpc.aio.AioRpcError as error:
        await _record(ledger, method, model, started, grpc_call, error, ended)
        raise
    except BaseException:  # cancelled: nothing reported to ledger
        _end(ended)
        raise
    await _record(ledger, method, model, started, grpc_call, None, ended)
    return response


def _end(ended) -> None:
    if ended is not None and not ended.done():
        ended.set_result(None)


class _LedgeredStream:
    """A server-streaming call, ledgered when its stream ends (the trailer comes last)."""

    def __init__(self, grpc_call, ledger: RunLedger, method: str, model: str, started: float, ended) -> None:
        self._call = grpc_call
        self._ledger = ledger
        self._method, self._model, self._started, self._ended = method, model, started, ended

    def __getattr__(self, name: str):
        return getattr(self._call, name)

    async def __aiter__(self):
        try:
            async for message in self._call:
                yield message
        except grpc.aio.AioRpcError as error:
            await _record(self._ledger, self._method, self._model, self._started, self._call, error, self._ended)
            raise
        except BaseException:  # cancelled, or the reader left: nothing reported to ledger
            _end(self._ended)
            raise
        await _record(self._ledger, self._method, self._model, self._started, self._call, None, self._ended)
