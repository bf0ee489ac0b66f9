"""What the `Run` RPC streams: a run's live events, then (when its task stopped early) the stored rest."""

from __future__ import annotations

from collections.abc import AsyncIterator

from factcheck.v1 import factcheck_pb2
from factcheck_gateway.runs.events import RunEvents, live_then_stored

MESSAGE_ID = "00000000-0000-4000-8000-000000000001"
KINDS = ["factcheck_start", "extract_start", "report_start", "complete"]


def built(events: RunEvents, kind: str) -> factcheck_pb2.FactCheckEvent:
    event = events.build(kind, getattr(factcheck_pb2.FactCheckEvent(), kind))  # an empty payload of its type
    assert event is not None
    events.reserve(event)
    return event


class StoredRest:
    """The events a store holds for the run; records where each follow started."""

    def __init__(self, stored: list[factcheck_pb2.FactCheckEvent]) -> None:
        self.stored = stored
        self.followed_from: list[int] = []

    async def __call__(self, after_seq: int) -> AsyncIterator[factcheck_pb2.FactCheckEvent]:
        self.followed_from.append(after_seq)
        for event in self.stored:
            if event.seq > after_seq:
                yield event


async def streamed(events: RunEvents, follow: StoredRest) -> list[tuple[int, str]]:
    return [(event.seq, event.WhichOneof("event") or "") async for event in live_then_stored(events, follow)]


async def test_a_run_that_ends_here_is_streamed_live_only():
    events = RunEvents(MESSAGE_ID)
    all_events = [built(events, kind) for kind in KINDS]
    for event in all_events:
        events.confirm(event)
    events.close()
    follow = StoredRest(all_events)
    assert await streamed(events, follow) == list(enumerate(KINDS, start=1))
    assert follow.followed_from == []


async def test_a_run_taken_over_elsewhere_is_followed_from_the_last_event_delivered():
    events = RunEvents(MESSAGE_ID)
    all_events = [built(events, kind) for kind in KINDS]
    events.confirm(all_events[0])
    events.confirm(all_events[1])
    events.close()  # the task stopped: another gateway stores the rest
    follow = StoredRest(all_events)
    assert await streamed(events, follow) == list(enumerate(KINDS, start=1))
    assert follow.followed_from == [2]


async def test_events_confirmed_after_the_task_stopped_are_not_lost():
    """The task was stopped while its last commit was landing: that commit confirms the final
    events behind the end of the live queue, so they come from the store."""
    events = RunEvents(MESSAGE_ID)
    all_events = [built(events, kind) for kind in KINDS]
    events.confirm(all_events[0])
    events.close()
    for event in all_events[1:]:
        events.confirm(event)
    follow = StoredRest(all_events)
    assert await streamed(events, follow) == list(enumerate(KINDS, start=1))
    assert follow.followed_from == [1]


async def test_a_run_that_stopped_before_its_first_event_is_followed_from_the_start():
    events = RunEvents(MESSAGE_ID)
    all_events = [built(events, kind) for kind in KINDS]
    events.close()
    events.confirm(all_events[0])  # confirmed, but after the end of the live queue
    follow = StoredRest(all_events)
    assert await streamed(events, follow) == list(enumerate(KINDS, start=1))
    assert follow.followed_from == [0]
