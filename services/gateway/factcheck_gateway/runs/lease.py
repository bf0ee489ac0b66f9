"""A run's downstream calls, each started only once the gateway has proven it still holds the run.

Fencing its writes (StageStore.commit_runs) keeps a gateway that lost its run from storing
anything, but a model call is paid for when it is made, not when its result is stored. So
every call of a run goes through `fenced` stubs: before the call starts, `prove` checks the
run's lease with its fencing token (StageStore.check_lease). A gateway that was paused past
its lease, or whose run a Cancel ended, stops there instead of paying for a call whose
answer it could not store. Calls of one run that start together share one check.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

# Proves the run is still this gateway's, or raises (asyncio.CancelledError: the run stops here).
Prove = Callable[[], Awaitable[None]]


class FencedStub:
    """A downstream stub whose every call waits for `prove` before it starts."""

    def __init__(self, stub: object, prove: Prove) -> None:
        self._stub = stub
        self._prove = prove

    def __getattr__(self, method: str):
        target = getattr(self._stub, method)
        prove = self._prove
        if method.endswith("Stream"):  # server streaming: iterated, never awaited

            def stream(request, *args, **kwargs):
                return _FencedStream(prove, lambda: target(request, *args, **kwargs))

            return stream

        async def call(request, *args, **kwargs):
            await prove()
            return await target(request, *args, **kwargs)

        return call


class _FencedStream:
    """A server-streaming call that starts (after the proof) when it is first iterated."""

    def __init__(self, prove: Prove, start: Callable[[], Any]) -> None:
        self._prove = prove
        self._start = start
        self._call: Any = None

    def __getattr__(self, name: str):
        if self._call is None:
            raise AttributeError(f"{name}: the call has not started yet (it starts when iterated)")
        return getattr(self._call, name)

    async def __aiter__(self):
        await self._prove()
        self._call = self._start()
        async for message in self._call:
            yield message


def fenced(downstream, prove: Prove):
    """A copy of a `Downstream` (any dataclass of stubs) whose calls all wait for `prove`."""
    return dataclasses.replace(
        downstream, **{f.name: FencedStub(getattr(downstream, f.name), prove) for f in dataclasses.fields(downstream)}
    )
