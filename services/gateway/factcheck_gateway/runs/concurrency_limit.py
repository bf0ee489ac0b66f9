"""The gateway's caps on runs carried out at once: in all (FACTCHECK_MAX_CONCURRENT_RUNS) and per
tenant (FACTCHECK_MAX_CONCURRENT_RUNS_PER_TENANT), so that one busy tenant cannot take every slot.

A run holds its slot from the moment Run admits it until its pipeline task ends, since a
run goes on after its caller disconnects. A slot whose RPC ends before the run's task
exists (invalid request, database down, caller gone) is released with the RPC.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import grpc

from factcheck.kit.errors import Reason, ResourceExhausted

# When a refused caller should try again: runs take seconds to minutes.
BUSY_RETRY_AFTER_S = 5.0


def busy_message(limit: int) -> str:
    return (
        f"The gateway is already running its maximum of {limit} fact-checks at once "
        "(FACTCHECK_MAX_CONCURRENT_RUNS). Try again when one has finished."
    )


def tenant_busy_message(limit: int, tenant_id: str) -> str:
    return (
        f"Tenant {tenant_id!r} is already running its maximum of {limit} fact-checks at once "
        "(FACTCHECK_MAX_CONCURRENT_RUNS_PER_TENANT). Try again when one of them has finished."
    )


class RunSlot:
    """One admitted run's place; released once, by its task or by its RPC."""

    def __init__(self, limit: RunLimit, tenant_id: str) -> None:
        self._limit = limit
        self._tenant_id = tenant_id
        self._task: asyncio.Task | None = None
        self._starting = False
        self._released = False

    def hand_to_starter(self) -> None:
        """From now on the run's start, not its RPC, releases the slot (hold_until_done or release)."""
        self._starting = True

    def hold_until_done(self, task: asyncio.Task) -> None:
        self._task = task
        task.add_done_callback(lambda _: self.release())

    def _rpc_done(self, _context: object) -> None:
        if self._task is None and not self._starting:
            self.release()

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._limit._release(self._tenant_id)


class RunLimit:
    """At most `limit` runs at once, and at most `per_tenant` of one tenant (0: no limit, but runs are still counted)."""

    def __init__(self, limit: int, per_tenant: int = 0) -> None:
        self.limit = limit
        self.per_tenant = per_tenant
        self.in_flight = 0
        self.in_flight_by_tenant: Counter[str] = Counter()

    def refusal(self, tenant_id: str) -> ResourceExhausted | None:
        """Why a new run of `tenant_id` cannot start now, or None when it can."""
        if self.limit and self.in_flight >= self.limit:
            return ResourceExhausted(
                busy_message(self.limit),
                reason=Reason.RUN_LIMIT_REACHED,
                metadata={"limit": str(self.limit)},
                retry_after_s=BUSY_RETRY_AFTER_S,
            )
        if self.per_tenant and self.in_flight_by_tenant[tenant_id] >= self.per_tenant:
            return ResourceExhausted(
                tenant_busy_message(self.per_tenant, tenant_id),
                reason=Reason.TENANT_RUN_LIMIT_REACHED,
                metadata={"limit": str(self.per_tenant), "tenant": tenant_id},
                retry_after_s=BUSY_RETRY_AFTER_S,
            )
        return None

    async def admit(self, context: grpc.aio.ServicerContext, tenant_id: str) -> RunSlot:
        """A slot for a new run of `tenant_id`; ResourceExhausted (RUN_LIMIT_REACHED, TENANT_RUN_LIMIT_REACHED)
        when the gateway's or the tenant's slots are all taken."""
        refusal = self.refusal(tenant_id)
        if refusal is not None:
            raise refusal
        self.in_flight += 1
        self.in_flight_by_tenant[tenant_id] += 1
        slot = RunSlot(self, tenant_id)
        # typeshed (types-grpcio) declares the callback type a plain class, which no function matches.
        context.add_done_callback(slot._rpc_done)  # type: ignore[arg-type]
        return slot

    def _release(self, tenant_id: str) -> None:
        self.in_flight -= 1
        self.in_flight_by_tenant[tenant_id] -= 1
        if self.in_flight_by_tenant[tenant_id] <= 0:
            del self.in_flight_by_tenant[tenant_id]

    def count_resumed(self, task: asyncio.Task, tenant_id: str) -> None:
        """A run resumed from another gateway counts until it ends; it is never refused (it was admitted once)."""
        self.in_flight += 1
        self.in_flight_by_tenant[tenant_id] += 1
        RunSlot(self, tenant_id).hold_until_done(task)
