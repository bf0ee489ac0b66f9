"""Following a run from any gateway: stored events first, then new ones as they are stored.

The database is the one source of truth for what a watcher sees: `watch_events` reads the
stored events after the last one it delivered, and sleeps until something wakes it. What
wakes it: this process's own runs (`EventHub.notify` after each commit); on PostgreSQL,
`LISTEN` notifications that every gateway's commits send (so a run executing on another
replica is followed live); and, whatever the backend, a poll every `watch_poll_s` in case
a notification was missed (another replica on SQLite, a listener reconnecting).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator

import psycopg
from sqlalchemy.engine import make_url

from factcheck.v1 import factcheck_pb2
from factcheck_gateway.runs.events import TERMINAL_EVENTS
from factcheck_gateway.store.stage_store import ANY_TENANT, CANCEL_CHANNEL, EVENTS_CHANNEL, StageStore

log = logging.getLogger("factcheck.gateway.watch")

LISTEN_RETRY_FIRST_S, LISTEN_RETRY_MAX_S = 0.5, 10.0


class EventHub:
    """In-process wake-ups: one asyncio.Event per watcher, set when its run has new events."""

    def __init__(self) -> None:
        self._watchers: dict[str, set[asyncio.Event]] = defaultdict(set)

    @contextlib.contextmanager
    def subscription(self, message_id: str) -> Iterator[asyncio.Event]:
        wake = asyncio.Event()
        self._watchers[message_id].add(wake)
        try:
            yield wake
        finally:
            watchers = self._watchers.get(message_id)
            if watchers is not None:
                watchers.discard(wake)
                if not watchers:
                    del self._watchers[message_id]

    def notify(self, message_id: str) -> None:
        for wake in self._watchers.get(message_id, ()):
            wake.set()


async def watch_events(
    store: StageStore, hub: EventHub, message_id: str, after_seq: int, poll_s: float
) -> AsyncIterator[factcheck_pb2.FactCheckEvent]:
    """The run's events with seq > after_seq, in order, until its final event (or it is over)."""
    last = after_seq
    with hub.subscription(message_id) as wake:
        while True:
            wake.clear()
            batch = await asyncio.to_thread(store.events_after, message_id, last)
            for stored in batch:
                yield factcheck_pb2.FactCheckEvent.FromString(stored.payload)
                last = stored.seq
                if stored.event_type in TERMINAL_EVENTS:
                    return
            if batch:
                continue  # there may be more than one batch
            record = await asyncio.to_thread(store.get_message, message_id, tenant_id=ANY_TENANT)
            if record is None or (record.finished and record.last_seq <= last):
                return  # gone, or ended without a stored final event (a run from before events were stored)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), poll_s)


class PostgresNotifications:
    """LISTENs for other gateways' commits and cancel requests (PostgreSQL only).

    One connection per gateway; reconnects with backoff; while it is down, watchers still
    poll, so a missed notification costs at most `watch_poll_s`.
    """

    def __init__(self, database_url: str, on_events: Callable[[str], None], on_cancel: Callable[[str], None]) -> None:
        self._conninfo = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)
        self._handlers = {EVENTS_CHANNEL: on_events, CANCEL_CHANNEL: on_cancel}
        self._task: asyncio.Task | None = None

    @staticmethod
    def supported(database_url: str) -> bool:
        return make_url(database_url).get_backend_name() == "postgresql"

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._listen_forever(), name="pg-notifications")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _listen_forever(self) -> None:
        delay = LISTEN_RETRY_FIRST_S
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self._conninfo, autocommit=True, connect_timeout=10
                ) as connection:
                    for channel in self._handlers:
                        await connection.execute(f"LISTEN {channel}")
                    delay = LISTEN_RETRY_FIRST_S
                    async for notification in connection.notifies():
                        handler = self._handlers.get(notification.channel)
                        if handler is not None:
                            handler(notification.payload)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the database restarting, a network blip
                log.warning("notification listener lost its connection (%s); retrying in %.1fs", error, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, LISTEN_RETRY_MAX_S)
