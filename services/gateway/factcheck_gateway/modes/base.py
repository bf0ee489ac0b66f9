"""What a mode declares: how it plans a request, the run it executes, its
steps and how its stored rows become its result. Everything else (validation of the shared
fields, events, leases, Watch, Cancel, request_id, tenants, deadlines) is the gateway's, once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message
from sqlalchemy.engine import Engine

from factcheck.kit.settings import Settings
from factcheck.v1 import factcheck_pb2
from factcheck_gateway.request_validation import RunBasics
from factcheck_gateway.runs.plan import Plan
from factcheck_gateway.runs.run import Run, Step
from factcheck_gateway.store.records import MessageRecord, StageRecord

PlanT = TypeVar("PlanT", bound=Plan)
RunT = TypeVar("RunT", bound=Run)


@dataclass(frozen=True)
class Mode(Generic[PlanT, RunT]):
    """A mode's declaration, typed by its plan and run classes (`Mode` alone: any mode's)."""

    name: str  # stored as request_config["mode"]
    value: factcheck_pb2.Mode
    config_field: str  # the RunRequest field holding the mode's config
    plan: Callable[[factcheck_pb2.RunRequest, Settings, RunBasics], PlanT]
    # The mode's config (RunRequest.<config_field>) rebuilt from a stored run's request_config: the plan's
    # resolved values, so a resumed run plans the same on any replica (mode_dispatch.resume_request).
    request_from_config: Callable[[dict[str, Any]], Message]
    run_class: type[RunT]
    # Emits factcheck_start (every run's first event).
    start: Callable[[RunT], Awaitable[None]]
    # The steps after start, decided as the run goes.
    stages: Callable[[RunT], AsyncIterator[Step]]
    # Fills the mode's sections of a stored run's result from its stage rows.
    fill_result: Callable[[factcheck_pb2.FactCheckResult, MessageRecord, list[StageRecord]], None]
    # The plan's checker models, each with its request field: a grounding model among them is confirmed
    # with the checker before the run starts (grounding_checkers.py). None: the mode has no checker models.
    checker_fields: Callable[[PlanT], tuple[tuple[str, str], ...]] | None = None
    # What the plan names in the store (an evaluation whose thresholds it uses), checked before the run starts
    # (ValidationError; run in a worker thread). None: the mode names nothing stored.
    check_stored: Callable[[PlanT, Engine], None] | None = None
    # Fields of the mode's config that the plan does not resolve, stored in request_config as the caller set
    # them (protobuf's JSON names): resume needs them (mode_dispatch.stored_config).
    caller_fields: tuple[str, ...] = ()
