"""The numbered events of one run, and the order in which they become visible.

An event is numbered when it is built (and reserved: the next one gets the next number),
stored (with its stage row, if any) by the pipeline, and only then confirmed: put on the live queue that the `Run` RPC streams, and announced
to watchers. A stored event is never numbered twice, so a run resumed on another gateway
continues the same sequence; and an event that a resumed run would repeat (its key was
already stored) is not built at all, so watchers see one gap-free, duplicate-free sequence.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable

from google.protobuf.message import Message

from factcheck.v1 import factcheck_pb2

# Events after which a run has nothing more to say.
TERMINAL_EVENTS = frozenset({"complete", "error", "cancelled"})


# Kinds a run emits more than once, with the payload fields that tell one from another. Every
# other kind occurs at most once per run. A mode that adds a repeated event adds it here.
REPEATED_EVENTS: dict[str, tuple[str, ...]] = {
    "checker_complete": ("checker_index",),
    # pipelined fact-check runs
    "claims_extracted": ("batch",),
    "checker_batch_complete": ("checker_index", "batch"),
    # fact-check runs with `investigate`; review_decided comes after the run ended, once per claim. A claim
    # whose status a resolved contradiction changes is reported again, with its new status.
    "claim_investigated": ("claim_id", "status"),
    "review_decided": ("claim_id",),
    # council runs
    "response_complete": ("label",),
    "response_failed": ("label",),
    "council_check_complete": ("checker_index",),
    "council_check_failed": ("checker_index",),
    # entailment runs: per item and agent, per item
    "entailment_agent_complete": ("item_index", "agent"),
    "entailment_agent_failed": ("item_index", "agent"),
    "entailment_item_complete": ("item_index",),
    "entailment_item_failed": ("item_index",),
    # fact-check runs with claim-level citations
    "claim_verified": ("claim_key",),
    "numeric_claim_detected": ("claim_id",),
    "citation_corrected": ("index",),
}


def event_key(event: factcheck_pb2.FactCheckEvent) -> str:
    """What makes an event unique within a run: its kind, and for a repeated kind the fields that tell
    its occurrences apart. A resumed run skips the events whose keys were stored."""
    kind = event.WhichOneof("event") or ""
    fields = REPEATED_EVENTS.get(kind)
    if not fields:
        return kind
    payload = getattr(event, kind)
    return ":".join([kind, *(str(getattr(payload, name)) for name in fields)])


class RunEvents:
    def __init__(
        self,
        message_id: str,
        *,
        last_seq: int = 0,
        emitted_keys: Iterable[str] = (),
        on_confirmed: Callable[[str], None] | None = None,
    ) -> None:
        self.message_id = message_id
        self.start_seq = last_seq  # stored before this attempt of the run began
        self.last_seq = last_seq  # of the newest confirmed (stored) event
        self._reserved_seq = last_seq  # of the newest event built and queued for storing
        self._unconfirmed: dict[int, str] = {}  # seq → key of events queued but not stored yet
        self._emitted = set(emitted_keys)
        self._on_confirmed = on_confirmed
        self._queue: asyncio.Queue[factcheck_pb2.FactCheckEvent | None] = asyncio.Queue()

    def build(self, field: str, payload: Message) -> factcheck_pb2.FactCheckEvent | None:
        """The next event (oneof member `field`), or None when a previous attempt of this run stored it."""
        event = factcheck_pb2.FactCheckEvent(message_id=self.message_id, seq=self._reserved_seq + 1)
        getattr(event, field).CopyFrom(payload)
        if event_key(event) in self._emitted:
            return None
        event.timestamp.FromNanoseconds(time.time_ns())
        return event

    def reserve(self, event: factcheck_pb2.FactCheckEvent) -> None:
        """The event is queued for storing: the next one built follows it."""
        key = event_key(event)
        self._reserved_seq = event.seq
        self._unconfirmed[event.seq] = key
        self._emitted.add(key)

    def rewind(self) -> None:
        """Forget the events queued but never stored (their commit failed): numbering resumes after the last stored."""
        for key in self._unconfirmed.values():
            self._emitted.discard(key)
        self._unconfirmed.clear()
        self._reserved_seq = self.last_seq

    def confirm(self, event: factcheck_pb2.FactCheckEvent) -> None:
        """The event is stored (or, for a run's last word while its database is down, must be told now)."""
        self.last_seq = event.seq
        self._reserved_seq = max(self._reserved_seq, event.seq)
        self._unconfirmed.pop(event.seq, None)
        self._emitted.add(event_key(event))
        self._queue.put_nowait(event)
        if self._on_confirmed is not None:
            self._on_confirmed(self.message_id)

    def emitted(self, key: str) -> bool:
        """Whether the event with this key (`event_key`) was stored, by this attempt of the run or an earlier one."""
        return key in self._emitted

    def close(self) -> None:
        self._queue.put_nowait(None)

    async def __aiter__(self) -> AsyncIterator[factcheck_pb2.FactCheckEvent]:
        """The confirmed events, up to the final one (or until the run stops without one)."""
        while (event := await self._queue.get()) is not None:
            yield event
            if event.WhichOneof("event") in TERMINAL_EVENTS:
                return


async def live_then_stored(
    live: RunEvents, follow: Callable[[int], AsyncIterator[factcheck_pb2.FactCheckEvent]]
) -> AsyncIterator[factcheck_pb2.FactCheckEvent]:
    """A run's events as this gateway confirms them; if its task stops before the final one (its lease
    was lost, the gateway is stopping), the rest as stored, by whichever gateway finishes it
    (`follow(after_seq)`). Judged by what was delivered: a commit that lands after the task stopped
    confirms its events behind the end of the live queue, where nobody reads them."""
    last_seq, last_kind = live.start_seq, None
    async for event in live:
        last_seq, last_kind = event.seq, event.WhichOneof("event")
        yield event
    if last_kind not in TERMINAL_EVENTS:
        async for event in follow(last_seq):
            yield event
