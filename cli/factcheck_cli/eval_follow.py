"""Following an evaluation's events to its end across broken connections (`eval`, `eval resume`,
`eval watch`), as follow.py follows runs.

An evaluation outlives the call that started it: the gateway stores every event with a gap-free `seq`,
and WatchEvaluation(evaluation_id, after_seq) replays what came after, from any gateway. So when a
stream breaks (the gateway recycling the connection at FACTCHECK_MAX_CONNECTION_AGE_S, a restart, a
reset connection) the follower notes it in one line and follows on from the last event it showed.
RunEvaluation and ResumeEvaluation are not sent twice: one that breaks before its first event (the
evaluation's id unknown) is reported, not retried. The stream ends after the evaluation's last
`finished` event: a resumed evaluation's earlier ones are followed by its next attempt.
"""

from __future__ import annotations

from collections.abc import Callable

import grpc

from factcheck.v1 import evaluation_pb2, evaluation_pb2_grpc
from factcheck_cli.follow import RECONNECT_TIMEOUT_S, STATUS_TIMEOUT_S, StreamFollower


class EndedBeforeStart(Exception):
    """The gateway ended the stream before the evaluation's first event."""


def watch_hint(evaluation_id: str) -> str:
    return f"watch it with `factcheck eval watch {evaluation_id}`, stop it with `factcheck eval cancel {evaluation_id}`"


class EvaluationFollower(StreamFollower):
    """Shows an evaluation's events through `show` and returns the Evaluation it ended as."""

    def __init__(
        self,
        channel: grpc.Channel,
        show: Callable[[evaluation_pb2.EvaluationEvent], None],
        note: Callable[[str], None],
        reconnect_timeout_s: float = RECONNECT_TIMEOUT_S,
    ) -> None:
        super().__init__(channel, note, reconnect_timeout_s)
        self.stub = evaluation_pb2_grpc.EvaluationServiceStub(channel)
        self._show = show
        self._start: Callable[[], object] | None = None
        self._last_kind: str | None = None
        self._finished: evaluation_pb2.Evaluation | None = None

    def run(self, request: evaluation_pb2.RunEvaluationRequest) -> evaluation_pb2.Evaluation:
        self._start = lambda: self.stub.RunEvaluation(request)
        return self.follow()

    def resume(self, request: evaluation_pb2.ResumeEvaluationRequest) -> evaluation_pb2.Evaluation:
        self._start = lambda: self.stub.ResumeEvaluation(request)
        return self.follow()

    def watch(self, evaluation_id: str, after_seq: int = 0) -> evaluation_pb2.Evaluation:
        self.resource_id, self.last_seq = evaluation_id, after_seq
        return self.follow()

    def _open(self):
        if self.resource_id is None:
            assert self._start is not None  # (watch knows its id)
            return self._start()
        request = evaluation_pb2.WatchEvaluationRequest(evaluation_id=self.resource_id, after_seq=self.last_seq)
        return self.stub.WatchEvaluation(request)

    def _may_restart(self) -> bool:
        return False  # RunEvaluation and ResumeEvaluation are not idempotent

    def _take(self, event: evaluation_pb2.EvaluationEvent) -> None:
        self.resource_id = event.evaluation_id
        self._last_kind = event.WhichOneof("event")
        if self._last_kind == "finished":
            self._finished = event.finished
        self._show(event)
        return None  # the stream's end says when the evaluation has ended

    def _stored_ending(self) -> evaluation_pb2.Evaluation | None:
        """The stream closed: the last `finished` event when it was the last event, else the evaluation as
        stored when it has ended (None: still running; it is followed on)."""
        if self.resource_id is None:
            raise EndedBeforeStart()
        if self._last_kind == "finished" and self._finished is not None:
            return self._finished
        request = evaluation_pb2.GetEvaluationRequest(evaluation_id=self.resource_id)
        evaluation = self.stub.GetEvaluation(request, timeout=STATUS_TIMEOUT_S).evaluation
        if evaluation.status == evaluation_pb2.EVALUATION_STATUS_RUNNING:
            return None
        return evaluation

    def _lost_note(self, error: grpc.RpcError | None) -> str:
        where = f"after event {self.last_seq}" if self.last_seq else "from the start"
        return (
            f"connection to the gateway lost ({self._why(error)}); the evaluation goes on: following it again {where}…"
        )
