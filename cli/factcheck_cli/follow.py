"""Following a run's events to its end across broken connections (`check` and `watch`).

A run outlives the connection that follows it: the gateway stores every event with a gap-free
`seq`, and `Watch(message_id, after_seq)` replays what came after a given event, then streams
the rest live, from any gateway replica. So when a stream breaks (the gateway restarting or
killed, a replica gone, a reset connection: anything but a final event) the follower waits for
the gateway with a bounded backoff and resumes with `Watch` after the last event it showed.
Every event is shown once and none is missed. A `Run` that broke before its first event is
sent again with the same `request_id`, which attaches to the run it may have started instead
of starting a second one.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

from factcheck.v1 import factcheck_pb2, factcheck_pb2_grpc

# How long a broken stream is retried (from the moment it broke; each event that arrives
# starts the count again) before the command gives up: `--reconnect-timeout`.
RECONNECT_TIMEOUT_S = 60.0
BACKOFF_FIRST_S, BACKOFF_MAX_S = 0.25, 4.0
# The longest wait for the channel to report whether it ever connected (see Follower._may_retry).
STATE_NEWS_S = 2.0
# GetResult is quick; a gateway that takes longer is stuck.
STATUS_TIMEOUT_S = 30.0

FINAL_EVENTS = ("complete", "error", "cancelled")
# Errors about the call itself rather than the connection: retrying cannot help, they are reported.
FATAL_CODES = frozenset(
    {
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.OUT_OF_RANGE,
    }
)
# A stored status, for a run whose events end without a final one (runs stored before events were).
_ENDING_OF_STATUS = {
    factcheck_pb2.MESSAGE_STATUS_COMPLETE: "complete",
    factcheck_pb2.MESSAGE_STATUS_PARTIAL: "complete",
    factcheck_pb2.MESSAGE_STATUS_FAILED: "error",
    factcheck_pb2.MESSAGE_STATUS_CANCELLED: "cancelled",
}


@dataclass(frozen=True)
class Ending:
    """How a followed run ended: its final event's kind ("complete", "error" or "cancelled"),
    the error message or cancel reason, and the causes of a failure."""

    message_id: str
    kind: str
    message: str = ""
    failures: Sequence[factcheck_pb2.StageFailure] = ()


class ConnectionLost(Exception):
    """The gateway could not be reached again within the reconnect timeout."""

    def __init__(self, resource_id: str | None, waited_s: float, error: grpc.RpcError | None) -> None:
        super().__init__(f"no connection to the gateway for {waited_s:.0f} s")
        # The run's (or evaluation's) id, when it was known.
        self.message_id = resource_id
        self.waited_s = waited_s
        self.error = error


def ending_of(event: factcheck_pb2.FactCheckEvent) -> Ending | None:
    """The Ending a final event announces; None for any other event."""
    kind = event.WhichOneof("event")
    if kind == "error":
        return Ending(event.message_id, kind, event.error.message, tuple(event.error.failures))
    if kind == "cancelled":
        return Ending(event.message_id, kind, event.cancelled.reason)
    if kind == "complete":
        return Ending(event.message_id, kind)
    return None


def follow_hint(message_id: str) -> str:
    return f"follow it with `factcheck watch {message_id}`, stop it with `factcheck cancel {message_id}`"


class StreamFollower:
    """Follows one resource's event stream to its end across broken connections: `_open` starts the
    stream (the first time: the subclass's starting call; after a break: its watch from `last_seq`),
    `_take` shows each event and says whether it ends the stream, `_stored_ending` reads the ending
    from the gateway when the stream closed without one. `note` gets one line per broken connection."""

    def __init__(
        self,
        channel: grpc.Channel,
        note: Callable[[str], None],
        reconnect_timeout_s: float = RECONNECT_TIMEOUT_S,
    ) -> None:
        self._channel = channel
        self._note = note
        self._reconnect_timeout_s = reconnect_timeout_s
        # The followed resource's id once known, and the seq of the last event shown.
        self.resource_id: str | None = None
        self.last_seq = 0
        self.shown = 0  # events shown
        # Once the channel has been connected, a failed call may have reached the gateway: it is
        # retried. A gateway never reached at all is reported at once, as any other command does.
        self._connected_once = threading.Event()
        self._ready = threading.Event()  # connected now
        self._settled = threading.Event()  # connected, or failed to connect, at least once
        self._progressed = False

    # --- what a subclass says ------------------------------------------------------------------------

    def _open(self):
        """The call whose responses carry the next events."""
        raise NotImplementedError

    def _take(self, event) -> Any | None:
        """Show one event (already known to be new); the ending it announces, or None."""
        raise NotImplementedError

    def _stored_ending(self) -> Any | None:
        """The ending as stored, when a stream closed without one (None: still going, follow it on)."""
        raise NotImplementedError

    def _may_restart(self) -> bool:
        """Whether a break before the resource is known may be retried (the starting call is idempotent)."""
        return True

    def _lost_note(self, error: grpc.RpcError | None) -> str:
        raise NotImplementedError

    @staticmethod
    def _why(error: grpc.RpcError | None) -> str:
        return "the stream ended early" if error is None else f"{error.code().name}: {error.details() or 'no details'}"

    # --- following ----------------------------------------------------------------------------------

    def follow(self) -> Any:
        self._channel.subscribe(self._on_connectivity)
        try:
            return self._follow_until_the_end()
        finally:
            self._channel.unsubscribe(self._on_connectivity)

    def _on_connectivity(self, state: grpc.ChannelConnectivity) -> None:
        # Watched without asking the channel to connect: the calls themselves make it connect.
        # (channel_ready_future would, and its pending connect request can outlive the channel.)
        if state == grpc.ChannelConnectivity.READY:
            self._connected_once.set()
            self._ready.set()
        else:
            self._ready.clear()
        if state in (grpc.ChannelConnectivity.READY, grpc.ChannelConnectivity.TRANSIENT_FAILURE):
            self._settled.set()

    def _follow_until_the_end(self) -> Any:
        broken_since: float | None = None
        backoff = BACKOFF_FIRST_S
        while True:
            self._progressed = False
            error: grpc.RpcError | None = None
            try:
                ending = self._stream()
                if ending is None:
                    ending = self._stored_ending()  # the stream ended without a final event
                if ending is not None:
                    return ending
            except grpc.RpcError as rpc_error:
                if not self._may_retry(rpc_error):
                    raise
                error = rpc_error
            now = time.monotonic()
            new_break = broken_since is None or self._progressed
            if new_break:
                broken_since, backoff = now, BACKOFF_FIRST_S
            assert broken_since is not None  # (set at the first break)
            remaining = self._reconnect_timeout_s - (now - broken_since)
            if remaining <= 0:
                raise ConnectionLost(self.resource_id, now - broken_since, error)
            if new_break:
                self._note(self._lost_note(error))
            self._pause(min(backoff, remaining))
            backoff = min(backoff * 2, BACKOFF_MAX_S)

    def _stream(self) -> Any | None:
        """Show the events of one call; the ending once a final event came, None if the stream ended first."""
        call = self._open()
        try:
            for response in call:
                event = response.event
                if event.seq and event.seq <= self.last_seq:
                    continue  # already shown (a retried start replays from the first event)
                self.last_seq = event.seq
                self._progressed = True
                self.shown += 1
                ending = self._take(event)
                if ending is not None:
                    return ending
        finally:
            call.cancel()  # a no-op once the stream has ended
        return None

    def _may_retry(self, error: grpc.RpcError) -> bool:
        if error.code() in FATAL_CODES:
            return False
        if self.resource_id is None and not self._may_restart():
            return False
        if self.last_seq > 0 or self._connected_once.is_set():
            return True
        # The channel's states arrive on another thread, possibly after the call failed: wait
        # until it has connected or failed to (at once, in practice) before deciding.
        self._settled.wait(STATE_NEWS_S)
        return self._connected_once.is_set()

    def _pause(self, seconds: float) -> None:
        """Wait before the next try: the whole pause when the gateway answered (it is there but
        could not serve), else until the channel connects again, at most the pause."""
        if self._ready.is_set():
            time.sleep(seconds)
        else:
            self._ready.wait(seconds)


class Follower(StreamFollower):
    """Shows a run's events through `show`, reconnecting as the module says; `note` gets one
    line per broken connection. Use `run` for a new run, `watch` for a run started elsewhere."""

    def __init__(
        self,
        channel: grpc.Channel,
        show: Callable[[factcheck_pb2.FactCheckEvent], None],
        note: Callable[[str], None],
        reconnect_timeout_s: float = RECONNECT_TIMEOUT_S,
    ) -> None:
        super().__init__(channel, note, reconnect_timeout_s)
        self._stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        self._show = show
        self._request: factcheck_pb2.RunRequest | None = None

    @property
    def message_id(self) -> str | None:
        return self.resource_id

    def run(self, request: factcheck_pb2.RunRequest) -> Ending:
        """Start the run (request.request_id must be set, so that a retry cannot start a second run)."""
        if not request.request_id:
            raise ValueError("a followed Run needs a request_id")
        self._request = request
        return self._follow()

    def watch(self, message_id: str, after_seq: int = 0) -> Ending:
        self.resource_id, self.last_seq = message_id, after_seq
        return self._follow()

    def _follow(self) -> Ending:
        try:
            return self.follow()
        except KeyboardInterrupt:
            if self.resource_id is not None:  # the gateway finishes and stores the run anyway
                print(f"\nThe run goes on without you: {follow_hint(self.resource_id)}", file=sys.stderr)
            raise

    def _open(self):
        if self.resource_id is None:
            return self._stub.Run(self._request)
        return self._stub.Watch(factcheck_pb2.WatchRequest(message_id=self.resource_id, after_seq=self.last_seq))

    def _take(self, event: factcheck_pb2.FactCheckEvent) -> Ending | None:
        self.resource_id = event.message_id
        self._show(event)
        return ending_of(event)

    def _stored_ending(self) -> Ending | None:
        """The run's stored status when its events ended without a final one (None: it is still running)."""
        if self.resource_id is None:
            return None
        request = factcheck_pb2.GetResultRequest(message_id=self.resource_id)
        result = self._stub.GetResult(request, timeout=STATUS_TIMEOUT_S).result
        kind = _ENDING_OF_STATUS.get(result.status)
        if kind is None:
            return None
        return Ending(result.message_id, kind, result.error_message, tuple(result.failures))

    def _lost_note(self, error: grpc.RpcError | None) -> str:
        why = self._why(error)
        if self.resource_id is None:
            return f"connection to the gateway lost ({why}); retrying the run with the same request id…"
        where = f"after event {self.last_seq}" if self.last_seq else "from the start"
        return f"connection to the gateway lost ({why}); resuming {where}…"
