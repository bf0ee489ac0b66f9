"""What the stage store hands out and takes in: stored messages, events and stage rows as plain values, and a
run's commits (a new run's row, events with their stage row and final state), with the store's own errors."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from factcheck_gateway.store.models import FINAL_STATUSES, STATUS_RUNNING, utc_now

# The request_config key a durable run's config holds (True): its request can be rebuilt from it, whole
# (mode_dispatch.stored_config; migration 0017 sets it on the runs stored with the request's bytes).
RESUMABLE = "resumable"

# --- text the databases accept --------------------------------------------------------------------------

# PostgreSQL text and JSONB cannot hold NUL; untrusted content and model output can.
# U+FFFD is one character too, so every offset computed on the original text stays valid.
_NUL, _REPLACEMENT = "\x00", "\ufffd"


def storable(value: Any) -> Any:
    """The value with NUL characters replaced in every string, however deeply nested."""
    if isinstance(value, str):
        return value.replace(_NUL, _REPLACEMENT) if _NUL in value else value
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    return value


@dataclass(frozen=True)
class MessageRecord:
    id: str
    tenant_id: str
    conversation_id: str
    question: str
    request_config: dict[str, Any]
    status: str
    title: str | None
    created_at: datetime
    updated_at: datetime
    request_id: str | None = None
    request_sha256: str | None = None
    lease_owner: str | None = None
    lease_expires_at: datetime | None = None
    resume_count: int = 0
    last_seq: int = 0
    cancel_requested: bool = False
    error_message: str | None = None
    failures: tuple[dict[str, Any], ...] = ()

    @property
    def finished(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def resumable(self) -> bool:
        """Whether the run's request can be rebuilt from request_config (mode_dispatch.resume_request): runs
        stored before runs were durable lack the RESUMABLE key, and end when they are abandoned."""
        return self.request_config.get(RESUMABLE) is True


@dataclass(frozen=True)
class StoredEvent:
    """One stored FactCheckEvent (payload: the serialized protobuf)."""

    seq: int
    event_type: str
    payload: bytes


@dataclass(frozen=True)
class StageRow:
    """A stage row to store (deliberation_stages' columns but id and created_at)."""

    stage_type: str
    stage_order: int
    model: str | None
    role: str
    content: str | None
    parsed_data: dict[str, Any]
    response_time_ms: int | None


@dataclass(frozen=True)
class FinalState:
    """What ends a run: its status, and for a failed or cancelled run why."""

    status: str
    error_message: str | None = None
    failures: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class NewRun:
    """A new run's messages row (see `new_run_row`), to insert in a group commit."""

    row: dict[str, Any]


def new_run_row(
    message_id: str,
    conversation_id: str,
    question: str,
    request_config: dict,
    *,
    tenant_id: str,
    request_id: str | None = None,
    request_sha256: str | None = None,
    lease_owner: str | None = None,
    lease_s: float = 0.0,
) -> dict[str, Any]:
    """The messages row of a new RUNNING run; with `lease_owner`, leased to that gateway for `lease_s`."""
    now = utc_now()
    return {
        "id": message_id,
        "tenant_id": tenant_id,
        "conversation_id": storable(conversation_id),
        "question": storable(question),
        "request_config": storable(request_config),
        "status": STATUS_RUNNING,
        "created_at": now,
        "updated_at": now,
        "request_id": request_id,
        "request_sha256": request_sha256,
        "lease_owner": lease_owner,
        "lease_expires_at": now + timedelta(seconds=lease_s) if lease_owner else None,
        "resume_count": 0,
        "last_seq": 0,
        "cancel_requested": False,
    }


class LedgerWrites(Protocol):
    """Writes the ledger rows and cache entries of the runs a group commit stores, in its transaction.

    Their tables belong to the ledger and the verification cache, which the store does not import: the runs
    machinery hands the writer over with each commit (RunCommit.ledger; runs/run.py).
    """

    def write(self, session: Any, model_calls: list[dict[str, Any]], cache_entries: list[dict[str, Any]]) -> None: ...


@dataclass(frozen=True)
class RunCommit:
    """What one run stores in one go: its next events, with the stage row, title or final state they report."""

    message_id: str
    owner: str
    lease_s: float
    events: tuple[StoredEvent, ...] = ()
    stage: StageRow | None = None
    title: str | None = None
    final: FinalState | None = None
    # Other rows the events report (claim-level citations: services/gateway/factcheck_gateway/claims/writes.py): each has
    # `apply(connection)`, run in the same transaction once the fence has passed.
    rows: tuple[Any, ...] = ()
    # Ledger rows of the run's model calls since its previous commit (model_calls columns, created_at aside).
    model_calls: tuple[dict[str, Any], ...] = ()
    # Verification-cache entries the run paid for (model_cache columns, created_at aside).
    cache_entries: tuple[dict[str, Any], ...] = ()
    # What writes `model_calls` and `cache_entries` (needed when there are any).
    ledger: LedgerWrites | None = None


# What a gateway finds about a run it executes (`StageStore.check_lease`, `StageStore.lease_states`).
LEASE_HELD, LEASE_LOST, LEASE_ENDED, LEASE_CANCEL_REQUESTED = "held", "lost", "ended", "cancel_requested"


class LeaseLost(Exception):
    """The run is no longer this gateway's to write (another one resumed it, or it has ended)."""


class RequestIdTaken(Exception):
    """A run with this request_id exists already (its message id is `message_id`)."""

    def __init__(self, message_id: str) -> None:
        super().__init__(message_id)
        self.message_id = message_id


@dataclass(frozen=True)
class StageRecord:
    id: str
    message_id: str
    stage_type: str
    stage_order: int
    model: str | None
    role: str
    content: str | None
    parsed_data: dict[str, Any]
    response_time_ms: int | None
    created_at: datetime
