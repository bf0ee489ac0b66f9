"""What a mode declares (DESIGN.md, "Modes"): how it plans a request, the run it executes, its
steps and how its stored rows become its result. Everything else (validation of the shared
fields, events, leases, Watch, Cancel, request_id, tenants, deadlines) is the gateway's, once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from factcheck.services.gateway.run import Run
from factcheck.services.gateway.store.store import MessageRecord, StageRecord
from factcheck.services.gateway.validation import RunBasics
from factcheck.settings import Settings
from factcheck.v1 import factcheck_pb2

# A step of a run: one stage (or a group of parallel calls), awaited in order.
Step = Callable[[Any], Awaitable[None]]


class Plan(Protocol):
    """A validated request of some mode, with every default applied; what its run executes."""

    mode_name: str
    question: str
    conversation_id: str | None
    tenant_id: str
    timeout_ms: int
    reporter_model: str  # writes every run's title

    def request_config(self) -> dict:
        """The run's configuration as stored in messages.request_config (with "mode": mode_name)."""
        ...


@dataclass(frozen=True)
class Mode:
    name: str  # stored as request_config["mode"]
    value: int  # factcheck_pb2.Mode
    config_field: str  # the RunRequest field holding the mode's config
    plan: Callable[[factcheck_pb2.RunRequest, Settings, RunBasics], Plan]
    # The request with every default the plan filled in (stored, so a resumed run plans the same).
    resolved_request: Callable[[factcheck_pb2.RunRequest, Plan], factcheck_pb2.RunRequest]
    run_class: type[Run]
    # Emits factcheck_start (every run's first event).
    start: Callable[[Run], Awaitable[None]]
    # The steps after start, decided as the run goes.
    stages: Callable[[Run], AsyncIterator[Step]]
    # Fills the mode's sections of a stored run's result from its stage rows.
    fill_result: Callable[[factcheck_pb2.FactCheckResult, MessageRecord, list[StageRecord]], None]
