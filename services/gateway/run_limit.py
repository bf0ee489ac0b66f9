"""The gateway's cap on runs carried out at once (FACTCHECK_MAX_CONCURRENT_RUNS).

A run holds its slot from the moment Run admits it until its pipeline task ends, since a
run goes on after its caller disconnects. A slot whose RPC ends before the run's task
exists (invalid request, database down, caller gone) is released with the RPC.
"""

from __future__ import annotations

import asyncio

import grpc

from factcheck.errors import Reason, ResourceExhausted

# When a refused caller should try again: runs take seconds to minutes.
BUSY_RETRY_AFTER_S = 5.0


def busy_message(limit: int) -> str:
    return (
        f"The gateway is already running its maximum of {limit} fact-checks at once "
        "(FACTCHECK_MAX_CONCURRENT_RUNS). Try again when one has finished."
    )


class RunSlot:
    """One admitted run's place; released once, by its task or by its RPC."""

    def __init__(self, limit: RunLimit) -> None:
        self._limit = limit
        self._task: asyncio.Task | None = None
        self._released = False

    def hold_until_done(self, task: asyncio.Task) -> None:
        self._task = task
        task.add_done_callback(lambda _: self.release())

    def _rpc_done(self, _context: object) -> None:
        if self._task is None:
            self.release()

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._limit.in_flight -= 1


class RunLimit:
    """At most `limit` runs at once (0: no limit, but runs are still counted)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_flight = 0

    async def admit(self, context: grpc.aio.ServicerContext) -> RunSlot:
        """A slot for a new run; ResourceExhausted (RUN_LIMIT_REACHED) when every slot is taken."""
        if self.limit and self.in_flight >= self.limit:
            raise ResourceExhausted(
                busy_message(self.limit),
                reason=Reason.RUN_LIMIT_REACHED,
                metadata={"limit": str(self.limit)},
                retry_after_s=BUSY_RETRY_AFTER_S,
            )
        self.in_flight += 1
        slot = RunSlot(self)
        context.add_done_callback(slot._rpc_done)
        return slot
