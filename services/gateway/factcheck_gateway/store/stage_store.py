"""The gateway's stage store: messages and their deliberation_stages rows.

Synchronous SQLAlchemy on purpose: the gateway calls it through `asyncio.to_thread`,
which keeps one simple code path for SQLite and PostgreSQL.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import bindparam, func, insert, or_, select, text, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import sessionmaker

from factcheck_gateway.store.engine import create_db_engine
from factcheck_gateway.store.models import STATUS_RUNNING, STATUSES, DeliberationStage, Message, RunEvent, utc_now
from factcheck_gateway.store.paging import Listing, newest_first_page
from factcheck_gateway.store.records import (
    LEASE_CANCEL_REQUESTED,
    LEASE_ENDED,
    LEASE_HELD,
    LEASE_LOST,
    FinalState,
    LeaseLost,
    LedgerWrites,
    MessageRecord,
    NewRun,
    RequestIdTaken,
    RunCommit,
    StageRecord,
    StageRow,
    StoredEvent,
    new_run_row,
    storable,
)

# `get_message(..., tenant_id=ANY_TENANT)`: the gateway's own bookkeeping (e.g. resuming a run from
# its stored row), never on behalf of a caller, who must only ever see its own tenant's rows.
ANY_TENANT = None


# --- the store ----------------------------------------------------------------------------------------


class StageStore:
    """Reads and writes messages and their stage rows. Every write commits before returning."""

    def __init__(self, database_url: str) -> None:
        self.engine = create_db_engine(database_url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def close(self) -> None:
        self.engine.dispose()

    # --- messages -----------------------------------------------------------------------------------

    def create_message(self, *args: Any, **kwargs: Any) -> None:
        """Record a new RUNNING run: `new_run_row`'s arguments, then `insert_run`."""
        self.insert_run(new_run_row(*args, **kwargs))

    def insert_run(self, row: dict[str, Any]) -> None:
        """Insert a new run's row (`new_run_row`). A request_id that another run of the tenant already
        has raises RequestIdTaken (checked by the database's unique index, so two concurrent Runs
        with one id cannot both start)."""
        try:
            with self.engine.begin() as connection:
                connection.execute(_INSERT_MESSAGE, row)
        except IntegrityError as exc:
            request_id, tenant_id, message_id = row["request_id"], row["tenant_id"], row["id"]
            if request_id is not None:
                existing = self.find_by_request_id(request_id, tenant_id=tenant_id)
                if existing is not None:
                    raise RequestIdTaken(existing.id) from exc
            raise ValueError(f"message {message_id!r} already exists") from exc

    def find_by_request_id(self, request_id: str, *, tenant_id: str) -> MessageRecord | None:
        """The tenant's run started with this idempotency key, if any."""
        with self._sessions() as session:
            row = session.scalar(
                select(Message).where(Message.tenant_id == tenant_id, Message.request_id == request_id)
            )
            return _message_record(row) if row is not None else None

    def set_status(self, message_id: str, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}; expected one of {', '.join(STATUSES)}")
        self._update_message(message_id, status=status)

    def set_title(self, message_id: str, title: str) -> None:
        self._update_message(message_id, title=storable(title))

    def _update_message(self, message_id: str, **values: Any) -> None:
        with self._sessions.begin() as session:
            row = session.get(Message, message_id)
            if row is None:
                raise LookupError(f"no message {message_id!r}")
            for name, value in values.items():
                setattr(row, name, value)
            row.updated_at = utc_now()

    def get_message(self, message_id: str, *, tenant_id: str | None) -> MessageRecord | None:
        """The run, if it exists and belongs to `tenant_id` (another tenant's run is None, as an unknown one).

        `tenant_id=ANY_TENANT` skips the check: only for the gateway's own bookkeeping.
        """
        with self._sessions() as session:
            row = session.get(Message, message_id)
            if row is None or (tenant_id is not ANY_TENANT and row.tenant_id != tenant_id):
                return None
            return _message_record(row)

    def list_messages(
        self,
        page_size: int,
        page_token: str | None,
        *,
        tenant_id: str,
        status: str | None = None,
        modes: Sequence[str | None] | None = None,
    ) -> tuple[list[MessageRecord], str | None]:
        """One tenant's runs, newest first, keyset-paged on (created_at, id) so pages stay stable while rows
        are added; only those with `status` (e.g. "COMPLETE") and one of `modes` when given (stored mode
        names, request_config["mode"]; None stands for runs stored without one)."""
        conditions: list[Any] = [Message.tenant_id == tenant_id]
        if status is not None:
            conditions.append(Message.status == status)
        if modes is not None:
            stored_mode = Message.request_config["mode"].as_string()
            matches = [stored_mode.in_([mode for mode in modes if mode is not None])]
            if None in modes:
                matches.append(stored_mode.is_(None))
            conditions.append(or_(*matches))
        listing = Listing("ListResults", tenant_id, {"status": status, "modes": modes})
        with self._sessions() as session:
            rows, next_token = newest_first_page(session, Message, page_size, page_token, *conditions, listing=listing)
            return [_message_record(row) for row in rows], next_token

    # --- stages -------------------------------------------------------------------------------------

    def save_stage(
        self,
        message_id: str,
        stage_type: str,
        stage_order: int,
        model: str | None,
        role: str,
        content: str | None,
        parsed_data: dict[str, Any],
        response_time_ms: int | None,
    ) -> str:
        """Store one completed stage and return its id; saving the same stage again returns the first row's id."""
        existing = self._stage_id(message_id, stage_type)
        if existing is not None:
            return existing
        row = DeliberationStage(
            id=str(uuid.uuid4()),
            message_id=message_id,
            stage_type=stage_type,
            stage_order=stage_order,
            model=storable(model),
            role=role,
            content=storable(content),
            parsed_data=storable(parsed_data),
            response_time_ms=response_time_ms,
            created_at=utc_now(),
        )
        try:
            with self._sessions.begin() as session:
                session.add(row)
        except IntegrityError:
            # Lost a race with a concurrent save of the same stage: theirs is the row.
            # Anything else (e.g. an unknown message id) finds no row and re-raises.
            existing = self._stage_id(message_id, stage_type)
            if existing is None:
                raise
            return existing
        return row.id

    def _stage_id(self, message_id: str, stage_type: str) -> str | None:
        query = select(DeliberationStage.id).where(
            DeliberationStage.message_id == message_id, DeliberationStage.stage_type == stage_type
        )
        with self._sessions() as session:
            return session.scalar(query)

    def get_stages(self, message_id: str) -> list[StageRecord]:
        query = (
            select(DeliberationStage)
            .where(DeliberationStage.message_id == message_id)
            .order_by(DeliberationStage.stage_order, DeliberationStage.created_at)
        )
        with self._sessions() as session:
            return [_stage_record(row) for row in session.scalars(query)]

    # --- durable runs: events, leases, cancellation ---------------------------------------------------

    def commit_run(
        self,
        message_id: str,
        owner: str,
        lease_s: float,
        *,
        events: Sequence[StoredEvent] = (),
        stage: StageRow | None = None,
        title: str | None = None,
        final: FinalState | None = None,
    ) -> None:
        """Store what a run just did in one transaction, fenced by its lease (see `commit_runs`)."""
        [outcome] = self.commit_runs([RunCommit(message_id, owner, lease_s, tuple(events), stage, title, final)])
        if outcome is not None:
            raise outcome

    def commit_runs(self, commits: list[RunCommit | NewRun]) -> list[LeaseLost | None]:
        """Store what many runs just did, in one transaction (group commit); per commit, None or LeaseLost.

        New runs' rows (`NewRun`) are inserted first, in one multi-row INSERT.

        Each run's messages row is updated only while its `owner` holds the lease, the run is
        still RUNNING and the events continue its sequence exactly; that update also renews
        the lease. Consecutive commits of one run in the batch share one such UPDATE
        (`_merged_runs`; if its fence fails, each is tried on its own). A commit that fails its
        fence stores nothing and is LeaseLost, unless this very commit already landed (a retry
        after a lost connection): every commit is idempotent. Events and stage rows go in as one multi-row INSERT each; a run's
        commits must be given in order (a later one's fence expects the earlier one's seq).
        An error of the database itself (outage, lock) raises, and nothing of the batch is stored.
        """
        now = utc_now()
        fenced_out: list[int] = []
        event_rows: list[dict[str, Any]] = []
        stage_rows: list[dict[str, Any]] = []
        other_rows: list[Any] = []
        # Per writer (in practice one: runs/run.py's), its model_calls rows and model_cache rows.
        ledger_rows: dict[LedgerWrites, tuple[list, list]] = {}
        notify: list[str] = []
        with self.engine.begin() as session:
            new_rows = [commit.row for commit in commits if isinstance(commit, NewRun)]
            if new_rows:
                session.execute(_INSERT_MESSAGE, new_rows)
            for group in _merged_runs(commits):
                if len(group) > 1:
                    statement, parameters = _fenced_update(_merged(commits, group), now)
                    if session.execute(statement, parameters).rowcount == 1:
                        for index in group:
                            _rows_of(
                                _run_commit(commits, index),
                                now,
                                event_rows,
                                stage_rows,
                                notify,
                                other_rows,
                                ledger_rows,
                            )
                        continue
                    # Each on its own fence: one of them may have landed already (a retry), or none may.
                for index in group:
                    commit = _run_commit(commits, index)
                    statement, parameters = _fenced_update(commit, now)
                    if session.execute(statement, parameters).rowcount != 1:
                        fenced_out.append(index)
                        continue
                    _rows_of(commit, now, event_rows, stage_rows, notify, other_rows, ledger_rows)
            if event_rows:
                session.execute(_INSERT_EVENTS, event_rows)
            if stage_rows:
                session.execute(_INSERT_STAGES, stage_rows)
            for rows in other_rows:
                rows.apply(session)
            for writes, (call_rows, cache_rows) in ledger_rows.items():
                writes.write(session, call_rows, cache_rows)
            if notify and session.dialect.name == "postgresql":
                # Wakes watchers on every replica once this commits (LISTEN in services/gateway/factcheck_gateway/runs/watch.py).
                session.execute(
                    text("SELECT pg_notify(:channel, :id)"),
                    [{"channel": EVENTS_CHANNEL, "id": message_id} for message_id in dict.fromkeys(notify)],
                )
        outcomes: list[LeaseLost | None] = [None] * len(commits)
        for index in fenced_out:
            commit = _run_commit(commits, index)
            if not self._already_committed(commit.message_id, commit.events, commit.final):
                outcomes[index] = LeaseLost(commit.message_id)
        return outcomes

    def _already_committed(self, message_id: str, events, final: FinalState | None) -> bool:
        with self._sessions() as session:
            row = session.get(Message, message_id)
            if row is None:
                return False
            if events:
                stored = session.get(RunEvent, (message_id, events[-1].seq))
                return stored is not None and stored.payload == events[-1].payload
            return final is not None and row.status == final.status

    def renew_leases(self, owner: str, lease_s: float, message_ids: list[str]) -> tuple[set[str], set[str]]:
        """Extend the leases `owner` holds on these runs (the ones it executes); return (those another
        gateway took over, those asked to cancel). A run that has just ended is in neither: its final
        commit released the lease, and stopping it now would cut off its own last events. A run it holds
        but does not execute is left to lapse, so that recovery resumes it (a Run whose caller left
        while its row was being created is never started)."""
        if not message_ids:
            return set(), set()
        now = utc_now()
        running = [Message.id.in_(list(message_ids)), Message.status == STATUS_RUNNING]
        with self._sessions.begin() as session:
            session.execute(
                update(Message)
                .where(*running, Message.lease_owner == owner)
                .values(lease_expires_at=now + timedelta(seconds=lease_s))
            )
            query = select(Message.id, Message.lease_owner, Message.cancel_requested).where(*running)
            rows = session.execute(query).all()
        lost = {row.id for row in rows if row.lease_owner != owner}
        return lost, {row.id for row in rows if row.lease_owner == owner and row.cancel_requested}

    def check_lease(self, message_id: str, owner: str, token: int, lease_s: float) -> str:
        """Whether `owner` still holds the run under fencing token `token` (the run's resume_count when
        this owner got it): LEASE_HELD, LEASE_CANCEL_REQUESTED (held, but a Cancel asked it to stop) or
        LEASE_LOST (another gateway claimed it, or the run has ended). A gateway asks before every model
        call it would pay for. A lease with less than half its term left is renewed by the same
        conditional UPDATE a claim races with, so a held answer means no other gateway can hold it now."""
        now = utc_now()
        fresh = (Message.lease_expires_at > now + timedelta(seconds=lease_s / 2)).label("fresh")
        query = select(Message.status, Message.lease_owner, Message.resume_count, Message.cancel_requested, fresh)
        with self._sessions() as session:
            row = session.execute(query.where(Message.id == message_id)).one_or_none()
        if row is None or row.status != STATUS_RUNNING or row.lease_owner != owner or (row.resume_count or 0) != token:
            return LEASE_LOST
        if row.cancel_requested:
            return LEASE_CANCEL_REQUESTED
        if row.fresh:
            return LEASE_HELD
        with self._sessions.begin() as session:
            renewed = cast(
                CursorResult,
                session.execute(
                    update(Message)
                    .where(
                        Message.id == message_id,
                        Message.lease_owner == owner,
                        Message.resume_count == token,
                        Message.status == STATUS_RUNNING,
                    )
                    .values(lease_expires_at=now + timedelta(seconds=lease_s))
                ),
            ).rowcount
        return LEASE_HELD if renewed == 1 else LEASE_LOST

    def lease_states(self, owner: str, message_ids: list[str]) -> dict[str, str]:
        """For runs `owner` executes, those it should stop now (a read, no renewal): LEASE_LOST (another
        gateway holds it), LEASE_ENDED (no longer RUNNING: it ended itself, or a Cancel ended it) or
        LEASE_CANCEL_REQUESTED. Runs it still holds undisturbed are left out."""
        if not message_ids:
            return {}
        query = select(Message.id, Message.status, Message.lease_owner, Message.cancel_requested).where(
            Message.id.in_(list(message_ids))
        )
        with self._sessions() as session:
            rows = session.execute(query).all()
        states: dict[str, str] = {}
        for row in rows:
            if row.status != STATUS_RUNNING:
                states[row.id] = LEASE_ENDED
            elif row.lease_owner != owner:
                states[row.id] = LEASE_LOST
            elif row.cancel_requested:
                states[row.id] = LEASE_CANCEL_REQUESTED
        return states

    def end_unattended(
        self, message_id: str, expected_seq: int, events: Sequence[StoredEvent], final: FinalState
    ) -> bool:
        """End a RUNNING run whichever gateway holds its lease, if its last stored event is still
        `expected_seq` (Cancel of a run whose gateway does not act on the request: it died, or is
        paused). One conditional UPDATE, so it either lands before the owner's next commit (which then
        finds the run ended and stores nothing) or stores nothing itself. Returns whether it landed."""
        now = utc_now()
        with self.engine.begin() as session:
            ended = session.execute(
                update(_MESSAGES)
                .where(
                    _MESSAGES.c.id == message_id,
                    _MESSAGES.c.status == STATUS_RUNNING,
                    _MESSAGES.c.last_seq == expected_seq,
                )
                .values(
                    status=final.status,
                    error_message=storable(final.error_message),
                    failures=storable(list(final.failures)) or None,
                    lease_owner=None,
                    lease_expires_at=None,
                    last_seq=events[-1].seq if events else expected_seq,
                    updated_at=now,
                )
            ).rowcount
            if ended != 1:
                return False
            if events:
                session.execute(
                    _INSERT_EVENTS,
                    [
                        {
                            "message_id": message_id,
                            "seq": e.seq,
                            "event_type": e.event_type,
                            "payload": e.payload,
                            "created_at": now,
                        }
                        for e in events
                    ],
                )
            if session.dialect.name == "postgresql":
                session.execute(text("SELECT pg_notify(:channel, :id)"), {"channel": EVENTS_CHANNEL, "id": message_id})
        return True

    def release_leases(self, owner: str, message_ids: list[str]) -> None:
        """Let other gateways resume these runs now (this one is shutting down without finishing them)."""
        if not message_ids:
            return
        with self._sessions.begin() as session:
            session.execute(
                update(Message)
                .where(Message.id.in_(message_ids), Message.lease_owner == owner, Message.status == STATUS_RUNNING)
                .values(lease_expires_at=utc_now())
            )

    def claim_abandoned(
        self, owner: str, lease_s: float, limit: int, exclude: Sequence[str] = ()
    ) -> list[MessageRecord]:
        """Take over up to `limit` RUNNING runs whose lease lapsed (or that never had one).

        Each claim is one conditional UPDATE, so two gateways never both win the same run.
        `exclude`: runs the caller is executing itself (their lease may have lapsed while the
        database was down; the heartbeat renews them).
        """
        now = utc_now()
        lapsed = or_(Message.lease_expires_at.is_(None), Message.lease_expires_at < now)
        query = select(Message.id).where(Message.status == STATUS_RUNNING, lapsed)
        if exclude:
            query = query.where(Message.id.not_in(list(exclude)))
        with self._sessions() as session:
            candidates = session.scalars(query.order_by(Message.created_at).limit(limit)).all()
        claimed = []
        for message_id in candidates:
            with self._sessions.begin() as session:
                won = cast(
                    CursorResult,
                    session.execute(
                        update(Message)
                        .where(Message.id == message_id, Message.status == STATUS_RUNNING, lapsed)
                        .values(
                            lease_owner=owner,
                            lease_expires_at=now + timedelta(seconds=lease_s),
                            resume_count=Message.resume_count + 1,
                            updated_at=now,
                        )
                    ),
                ).rowcount  # (Session.execute is typed to return a Result; an UPDATE's is a CursorResult)
            if won == 1:
                record = self.get_message(message_id, tenant_id=ANY_TENANT)
                if record is not None:
                    claimed.append(record)
        return claimed

    def request_cancel(self, message_id: str) -> MessageRecord | None:
        """Flag a RUNNING run for cancellation (its gateway stops it); returns the run as it is now."""
        with self._sessions.begin() as session:
            session.execute(
                update(Message)
                .where(Message.id == message_id, Message.status == STATUS_RUNNING)
                .values(cancel_requested=True)
            )
            if session.get_bind().dialect.name == "postgresql":
                session.execute(text("SELECT pg_notify(:channel, :id)"), {"channel": CANCEL_CHANNEL, "id": message_id})
        return self.get_message(message_id, tenant_id=ANY_TENANT)

    def events_after(self, message_id: str, after_seq: int, limit: int = 1000) -> list[StoredEvent]:
        query = (
            select(RunEvent.seq, RunEvent.event_type, RunEvent.payload)
            .where(RunEvent.message_id == message_id, RunEvent.seq > after_seq)
            .order_by(RunEvent.seq)
            .limit(limit)
        )
        with self._sessions() as session:
            return [StoredEvent(row.seq, row.event_type, bytes(row.payload)) for row in session.execute(query)]

    def event_count(self, message_id: str) -> int:
        with self._sessions() as session:
            count = session.scalar(select(func.count()).select_from(RunEvent).where(RunEvent.message_id == message_id))
            return count or 0


# Notification channels on PostgreSQL (payload: the message id).
EVENTS_CHANNEL = "factcheck_run_events"
CANCEL_CHANNEL = "factcheck_run_cancel"


def _stage_values(message_id: str, stage: StageRow, now: datetime) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "message_id": message_id,
        "stage_type": stage.stage_type,
        "stage_order": stage.stage_order,
        "model": storable(stage.model),
        "role": stage.role,
        "content": storable(stage.content),
        "parsed_data": storable(stage.parsed_data),
        "response_time_ms": stage.response_time_ms,
        "created_at": now,
    }


# Statements built once (the gateway runs them for every event of every run): Core, not the
# ORM, with bound parameters, so each execution skips expression building and unit-of-work.
_MESSAGES = Message.__table__
_INSERT_MESSAGE = insert(_MESSAGES)
_INSERT_EVENTS = insert(RunEvent.__table__)
_INSERT_STAGES = insert(DeliberationStage.__table__)
_FENCED_UPDATES: dict[tuple[bool, bool, bool], Any] = {}


def _rows_of(
    commit: RunCommit,
    now: datetime,
    event_rows: list,
    stage_rows: list,
    notify: list,
    other_rows: list,
    ledger_rows: dict[LedgerWrites, tuple[list, list]],
) -> None:
    """Collect the event, stage, ledger and cache rows (and other rows: claim-level citations) of a commit
    whose fence held."""
    if commit.model_calls or commit.cache_entries:
        if commit.ledger is None:
            raise ValueError("a commit with ledger rows or cache entries names no LedgerWrites to store them")
        call_rows, cache_rows = ledger_rows.setdefault(commit.ledger, ([], []))
        call_rows.extend({**row, "message_id": commit.message_id, "created_at": now} for row in commit.model_calls)
        cache_rows.extend({**row, "message_id": commit.message_id, "created_at": now} for row in commit.cache_entries)
    event_rows.extend(
        {
            "message_id": commit.message_id,
            "seq": e.seq,
            "event_type": e.event_type,
            "payload": e.payload,
            "created_at": now,
        }
        for e in commit.events
    )
    if commit.stage is not None:
        stage_rows.append(_stage_values(commit.message_id, commit.stage, now))
    other_rows.extend(commit.rows)
    if commit.events:
        notify.append(commit.message_id)


def _merged_runs(commits: list[RunCommit | NewRun]) -> list[list[int]]:
    """The RunCommits of a batch (by index), in order, grouped so that each group can be one fenced
    UPDATE: consecutive commits of one run and owner whose events continue each other's sequence,
    none but the last ending the run. Commits without events (no sequence to fence) stay alone."""
    groups: list[list[int]] = []
    open_group: dict[str, list[int]] = {}  # message_id → the group its next commit may join
    for index, commit in enumerate(commits):
        if isinstance(commit, NewRun):
            continue
        group = open_group.get(commit.message_id)
        if group is not None and commit.events:
            last = _run_commit(commits, group[-1])
            if last.owner == commit.owner and last.events[-1].seq + 1 == commit.events[0].seq:
                group.append(index)
                if commit.final is not None:
                    del open_group[commit.message_id]
                continue
        group = [index]
        groups.append(group)
        if commit.events and commit.final is None:
            open_group[commit.message_id] = group
        else:
            open_group.pop(commit.message_id, None)
    return groups


def _run_commit(commits: list[RunCommit | NewRun], index: int) -> RunCommit:
    """The RunCommit at `index` (the groups of `_merged_runs` index only those)."""
    commit = commits[index]
    assert isinstance(commit, RunCommit)
    return commit


def _merged(commits: list[RunCommit | NewRun], group: list[int]) -> RunCommit:
    """One run's consecutive commits as one, for their single fenced UPDATE (the rows stay each commit's)."""
    parts = [_run_commit(commits, index) for index in group]
    last = parts[-1]
    titles = [part.title for part in parts if part.title is not None]
    return RunCommit(
        last.message_id,
        last.owner,
        last.lease_s,
        tuple(event for part in parts for event in part.events),
        title=titles[-1] if titles else None,
        final=last.final,
    )


def _fenced_update(commit: RunCommit, now: datetime) -> tuple[Any, dict[str, Any]]:
    """The UPDATE of the run's messages row, fenced: still this owner's, still RUNNING and (with
    events) at the seq before them; it renews the lease and sets last seq, title, final state."""
    shape = (bool(commit.events), commit.title is not None, commit.final is not None)
    statement = _FENCED_UPDATES.get(shape)
    if statement is None:
        statement = _FENCED_UPDATES[shape] = _build_fenced_update(*shape)
    parameters: dict[str, Any] = {
        "m_id": commit.message_id,
        "m_owner": commit.owner,
        "m_running": STATUS_RUNNING,
        "m_updated_at": now,
        "m_lease_expires_at": None if commit.final is not None else now + timedelta(seconds=commit.lease_s),
    }
    if commit.events:
        parameters["m_expected_seq"] = commit.events[0].seq - 1
        parameters["m_last_seq"] = commit.events[-1].seq
    if commit.title is not None:
        parameters["m_title"] = storable(commit.title)
    if commit.final is not None:
        final = commit.final
        parameters.update(
            m_status=final.status,
            m_error_message=storable(final.error_message),
            m_failures=storable(list(final.failures)) or None,
        )
    return statement, parameters


def _build_fenced_update(events: bool, title: bool, final: bool) -> Any:
    columns = _MESSAGES.c
    fence = [
        columns.id == bindparam("m_id"),
        columns.lease_owner == bindparam("m_owner"),
        columns.status == bindparam("m_running"),
    ]
    values: dict[str, Any] = {
        "updated_at": bindparam("m_updated_at"),
        "lease_expires_at": bindparam("m_lease_expires_at"),
    }
    if events:
        fence.append(columns.last_seq == bindparam("m_expected_seq"))
        values["last_seq"] = bindparam("m_last_seq")
    if title:
        values["title"] = bindparam("m_title")
    if final:
        values.update(
            status=bindparam("m_status"),
            error_message=bindparam("m_error_message"),
            failures=bindparam("m_failures", type_=columns.failures.type),
            lease_owner=None,
        )
    return update(_MESSAGES).where(*fence).values(**values)


def _message_record(row: Message) -> MessageRecord:
    return MessageRecord(
        id=row.id,
        tenant_id=row.tenant_id,
        conversation_id=row.conversation_id,
        question=row.question,
        request_config=dict(row.request_config or {}),
        status=row.status,
        title=row.title,
        created_at=row.created_at,
        updated_at=row.updated_at,
        request_id=row.request_id,
        request_sha256=row.request_sha256,
        lease_owner=row.lease_owner,
        lease_expires_at=row.lease_expires_at,
        resume_count=row.resume_count or 0,
        last_seq=row.last_seq or 0,
        cancel_requested=bool(row.cancel_requested),
        error_message=row.error_message,
        failures=tuple(row.failures or ()),
    )


def _stage_record(row: DeliberationStage) -> StageRecord:
    return StageRecord(
        id=row.id,
        message_id=row.message_id,
        stage_type=row.stage_type,
        stage_order=row.stage_order,
        model=row.model,
        role=row.role,
        content=row.content,
        parsed_data=dict(row.parsed_data or {}),
        response_time_ms=row.response_time_ms,
        created_at=row.created_at,
    )
