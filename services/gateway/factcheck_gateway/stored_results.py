"""What a stored run's result is built from, for every mode: its stage rows, models, status and times.

GetResult's result and ListResults' rows are mode_dispatch.py's: the fields every run has come from
its messages row, and its mode fills in its own sections from its stage rows
(services/gateway/factcheck_gateway/modes/*/result.py).
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from google.protobuf.timestamp_pb2 import Timestamp

from factcheck.v1 import factcheck_pb2
from factcheck_gateway.store.records import StageRecord

UNKNOWN_MODEL = "unknown"


def find_stage(stages: list[StageRecord], stage_type: str) -> StageRecord | None:
    return next((s for s in stages if s.stage_type == stage_type), None)


def model_of(stage: StageRecord | None) -> str:
    return (stage.model if stage else None) or UNKNOWN_MODEL


def response_time_of(stage: StageRecord | None) -> int:
    return (stage.response_time_ms if stage else None) or 0


def status_proto(status: str) -> factcheck_pb2.MessageStatus:
    """A stored status (COMPLETE, ...) as the proto enum; UNSPECIFIED for a name it does not know."""
    name = f"MESSAGE_STATUS_{status}"
    if name not in factcheck_pb2.MessageStatus.keys():
        return factcheck_pb2.MESSAGE_STATUS_UNSPECIFIED
    return cast(factcheck_pb2.MessageStatus, factcheck_pb2.MessageStatus.Value(name))  # (Value() is typed int)


def timestamp(value: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(value)
    return stamp
