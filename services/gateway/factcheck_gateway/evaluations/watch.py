"""Following an evaluation from any gateway (RunEvaluation, ResumeEvaluation, WatchEvaluation): its
stored events after a seq, then new ones as they are stored, read from the database like a run's
(runs/watch.py): this gateway's own writes wake the watcher at once (the EventHub the runs share), on
PostgreSQL the other gateways' commits do too, and a poll every `poll_s` covers the rest.

The stream ends after a `finished` event that nothing follows yet (a resumed evaluation's earlier
`finished` events are followed by its next attempt's), or when the evaluation has ended without one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from factcheck.v1 import evaluation_pb2
from factcheck_gateway.evaluations.store import EvaluationStore
from factcheck_gateway.runs.watch import EventHub
from factcheck_gateway.store.models import STATUS_RUNNING

FINISHED = "finished"
BATCH = 500


async def watch_evaluation(
    store: EvaluationStore, hub: EventHub, evaluation_id: str, after_seq: int, poll_s: float
) -> AsyncIterator[evaluation_pb2.EvaluationEvent]:
    """The evaluation's events with seq > after_seq, in order, until it has finished."""
    last = after_seq
    with hub.subscription(evaluation_id) as wake:
        while True:
            wake.clear()
            batch = await asyncio.to_thread(store.events_after, evaluation_id, last, BATCH)
            for stored in batch:
                yield evaluation_pb2.EvaluationEvent.FromString(stored.payload)
                last = stored.seq
            if batch and batch[-1].event_type == FINISHED and len(batch) < BATCH:
                return  # the last event stored: the evaluation has ended (for now: a resume starts it again)
            if batch:
                continue  # there may be more than one batch
            record = await asyncio.to_thread(store.get, evaluation_id, None)
            if record is None or (record.status != STATUS_RUNNING and record.last_seq <= last):
                return  # gone, or ended without a final event (stored before evaluations had events)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), poll_s)
