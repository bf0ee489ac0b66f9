"""The stage store's durable-run operations, on SQLite and PostgreSQL.

Fenced commits (an event, its stage row and the lease renewal in one transaction, only
while the writer holds the lease), idempotent retries, lease claims that exactly one
gateway wins, cancellation flags, and an upgrade of a database from before durable runs.
"""

from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from alembic import command
from sqlalchemy import create_engine, text

from factcheck_gateway.store import StageStore, upgrade_database
from factcheck_gateway.store.migrate import alembic_config
from factcheck_gateway.store.records import (
    LEASE_CANCEL_REQUESTED,
    LEASE_ENDED,
    LEASE_HELD,
    LEASE_LOST,
    FinalState,
    LeaseLost,
    RequestIdTaken,
    RunCommit,
    StageRow,
    StoredEvent,
)
from factcheck_gateway.store.stage_store import ANY_TENANT


@pytest.fixture
def store(database_url):
    s = StageStore(database_url)
    yield s
    s.close()


def new_run(
    store: StageStore, owner: str | None = "gw-a", lease_s: float = 30.0, tenant_id: str = "default", **kwargs
) -> str:
    message_id = str(uuid.uuid4())
    store.create_message(
        message_id,
        "conv",
        "q?",
        {"contentSource": "user_provided"},
        tenant_id=tenant_id,
        lease_owner=owner,
        lease_s=lease_s,
        **kwargs,
    )
    return message_id


def event(seq: int, kind: str = "extract_start") -> StoredEvent:
    return StoredEvent(seq, kind, f"{kind}:{seq}".encode())


STAGE = StageRow("extract", 1, "fake/extractor", "extractor", "raw", {"claims": []}, 12)


def test_a_commit_stores_events_and_its_stage_row_together(store):
    run = new_run(store)
    store.commit_run(run, "gw-a", 30, events=[event(1), event(2)])
    store.commit_run(run, "gw-a", 30, events=[event(3, "extract_complete")], stage=STAGE)
    assert [(e.seq, e.event_type) for e in store.events_after(run, 0)] == [
        (1, "extract_start"),
        (2, "extract_start"),
        (3, "extract_complete"),
    ]
    assert [e.seq for e in store.events_after(run, 2)] == [3]
    assert [s.stage_type for s in store.get_stages(run)] == ["extract"]
    assert store.get_message(run, tenant_id=ANY_TENANT).last_seq == 3


def test_a_retried_commit_that_already_landed_is_a_no_op(store):
    run = new_run(store)
    store.commit_run(run, "gw-a", 30, events=[event(1, "extract_complete")], stage=STAGE)
    store.commit_run(run, "gw-a", 30, events=[event(1, "extract_complete")], stage=STAGE)  # the retry
    assert store.event_count(run) == 1 and len(store.get_stages(run)) == 1


def test_a_runs_consecutive_commits_in_one_batch_all_land(store):
    """They share one fenced UPDATE; the rows, title and final state are each commit's."""
    run, other = new_run(store), new_run(store)
    report = StageRow("report", 4, "fake/reporter", "reporter", "text", {"reliabilityScore": 80}, 5)
    outcomes = store.commit_runs(
        [
            RunCommit(run, "gw-a", 30, (event(1), event(2, "extract_complete")), stage=STAGE),
            RunCommit(other, "gw-a", 30, (event(1),)),
            RunCommit(run, "gw-a", 30, (event(3, "report_complete"),), stage=report),
            RunCommit(run, "gw-a", 30, (event(4, "title_complete"),), title="A title"),
            RunCommit(run, "gw-a", 30, (event(5, "complete"),), final=FinalState("COMPLETE")),
        ]
    )
    assert outcomes == [None] * 5
    assert [e.seq for e in store.events_after(run, 0)] == [1, 2, 3, 4, 5]
    assert [s.stage_type for s in store.get_stages(run)] == ["extract", "report"]
    record = store.get_message(run, tenant_id=ANY_TENANT)
    assert (record.last_seq, record.title, record.status, record.lease_owner) == (5, "A title", "COMPLETE", None)
    assert store.get_message(other, tenant_id=ANY_TENANT).last_seq == 1


def test_a_batch_with_a_retry_that_landed_and_the_next_commit_stores_the_next_one(store):
    run = new_run(store)
    first = RunCommit(run, "gw-a", 30, (event(1, "extract_complete"),), stage=STAGE)
    store.commit_runs([first])
    outcomes = store.commit_runs([first, RunCommit(run, "gw-a", 30, (event(2, "report_start"),))])
    assert outcomes == [None, None]
    assert [e.seq for e in store.events_after(run, 0)] == [1, 2] and len(store.get_stages(run)) == 1


def test_a_commit_queued_after_one_that_failed_stores_nothing(store):
    """A run queues its next commit before the previous lands: if that one did not land, the next
    does not continue the stored sequence and is refused by its fence."""
    run = new_run(store)
    [outcome] = store.commit_runs([RunCommit(run, "gw-a", 30, (event(2, "report_start"),))])
    assert isinstance(outcome, LeaseLost)
    assert store.event_count(run) == 0 and store.get_message(run, tenant_id=ANY_TENANT).last_seq == 0


def test_commits_are_fenced_by_the_lease_and_the_sequence(store):
    run = new_run(store)
    store.commit_run(run, "gw-a", 30, events=[event(1)])
    with pytest.raises(LeaseLost):  # not the owner
        store.commit_run(run, "gw-b", 30, events=[event(2)])
    with pytest.raises(LeaseLost):  # a gap in the sequence
        store.commit_run(run, "gw-a", 30, events=[event(3)])
    with pytest.raises(LeaseLost):  # the same seq with other content: someone else wrote it
        store.commit_run(run, "gw-a", 30, events=[StoredEvent(1, "extract_start", b"other")])
    store.commit_run(run, "gw-a", 30, events=[event(2, "complete")], final=FinalState("COMPLETE"))
    with pytest.raises(LeaseLost):  # a finished run takes no more writes
        store.commit_run(run, "gw-a", 30, events=[event(3)])
    record = store.get_message(run, tenant_id=ANY_TENANT)
    assert (record.status, record.lease_owner, record.last_seq) == ("COMPLETE", None, 2)


def test_the_final_state_keeps_the_reason_and_every_cause(store):
    run = new_run(store)
    failures = ({"stage": "verify_0", "model": "m/a", "code": "UNAVAILABLE", "message": "HTTP 500"},)
    store.commit_run(
        run,
        "gw-a",
        30,
        events=[event(1, "error")],
        final=FinalState("FAILED", "All verification checkers failed.", failures),
    )
    record = store.get_message(run, tenant_id=ANY_TENANT)
    assert record.status == "FAILED" and record.finished
    assert record.error_message == "All verification checkers failed."
    assert record.failures == failures


def test_only_lapsed_leases_are_claimed_and_exactly_one_gateway_wins(store):
    live = new_run(store, lease_s=30)
    lapsed = new_run(store, lease_s=0.01)
    legacy = new_run(store, owner=None)  # a run from before leases
    time.sleep(0.05)

    with ThreadPoolExecutor(4) as pool:
        claims = list(pool.map(lambda owner: store.claim_abandoned(owner, 30, 10), ["gw-1", "gw-2", "gw-3", "gw-4"]))
    claimed = sorted(record.id for batch in claims for record in batch)
    assert claimed == sorted([lapsed, legacy])  # each exactly once, the live one never
    winner = store.get_message(lapsed, tenant_id=ANY_TENANT)
    assert winner.lease_owner in {"gw-1", "gw-2", "gw-3", "gw-4"} and winner.resume_count == 1
    assert store.get_message(live, tenant_id=ANY_TENANT).lease_owner == "gw-a"


def test_a_gateway_does_not_claim_the_runs_it_executes(store):
    mine = new_run(store, lease_s=0.01)
    time.sleep(0.05)
    assert store.claim_abandoned("gw-a", 30, 10, exclude=[mine]) == []


def test_heartbeats_renew_leases_and_report_cancel_requests(store):
    first, second = new_run(store, lease_s=0.01), new_run(store, lease_s=0.01)
    new_run(store, owner="gw-b")
    store.request_cancel(second)
    lost, cancelled = store.renew_leases("gw-a", 30, [first, second])
    assert lost == set() and cancelled == {second}
    assert store.get_message(first, tenant_id=ANY_TENANT).lease_expires_at > datetime.now(UTC)
    assert store.claim_abandoned("gw-z", 30, 10) == []  # renewed, so nothing lapsed

    store.release_leases("gw-a", [first])
    assert [record.id for record in store.claim_abandoned("gw-z", 30, 10)] == [first]


def test_heartbeats_renew_only_the_runs_a_gateway_executes(store):
    """A row the gateway leased but never started (its caller left while the row was being
    created) is not kept alive by the heartbeat: it lapses and is resumed elsewhere."""
    executing, never_started, cancelled = (new_run(store, owner="g1", lease_s=0.0) for _ in range(3))
    store.request_cancel(cancelled)
    lost, cancel_requested = store.renew_leases("g1", 60.0, [executing, cancelled, "unknown"])
    assert (lost, cancel_requested) == (set(), {cancelled})
    assert [record.id for record in store.claim_abandoned("g2", 60.0, 10)] == [never_started]
    assert store.renew_leases("g1", 60.0, []) == (set(), set())


def test_heartbeats_tell_runs_taken_over_from_runs_that_just_ended(store):
    """Only a run another gateway claimed counts as lost: one whose final commit landed between the
    heartbeat's snapshot and its query must be left to deliver its last events."""
    taken, ended, kept = (new_run(store, owner="g1", lease_s=0.0) for _ in range(3))
    [claimed] = [record.id for record in store.claim_abandoned("g2", 60.0, 10, exclude=[ended, kept])]
    assert claimed == taken
    store.commit_run(ended, "g1", 30, events=[event(1, "complete")], final=FinalState("COMPLETE"))
    assert store.renew_leases("g1", 60.0, [taken, ended, kept]) == ({taken}, set())
    assert store.get_message(kept, tenant_id=ANY_TENANT).lease_expires_at > datetime.now(UTC)


def test_a_lease_check_proves_owner_and_fencing_token_and_renews_a_lapsing_lease(store):
    """What a gateway checks before every model call it would pay for."""
    held, lapsing, cancelled = new_run(store), new_run(store, lease_s=0.0), new_run(store)
    store.request_cancel(cancelled)
    assert store.check_lease(held, "gw-a", 0, 30) == LEASE_HELD
    assert store.check_lease(held, "gw-b", 0, 30) == LEASE_LOST  # another gateway's name
    assert store.check_lease(held, "gw-a", 1, 30) == LEASE_LOST  # an older claim of the same gateway
    assert store.check_lease(cancelled, "gw-a", 0, 30) == LEASE_CANCEL_REQUESTED
    assert store.check_lease("unknown", "gw-a", 0, 30) == LEASE_LOST
    # A lapsed lease nobody claimed yet is renewed by the check (the same race a claim runs), so no
    # other gateway can claim it right after a held answer.
    assert store.check_lease(lapsing, "gw-a", 0, 30) == LEASE_HELD
    assert store.claim_abandoned("gw-z", 30, 10) == []

    taken = new_run(store, lease_s=0.0)
    [claimed] = store.claim_abandoned("gw-z", 30, 10)
    assert claimed.id == taken and claimed.resume_count == 1
    assert store.check_lease(taken, "gw-a", 0, 30) == LEASE_LOST
    assert store.check_lease(taken, "gw-z", 1, 30) == LEASE_HELD
    store.commit_run(held, "gw-a", 30, events=[event(1, "complete")], final=FinalState("COMPLETE"))
    assert store.check_lease(held, "gw-a", 0, 30) == LEASE_LOST  # ended


def test_lease_states_name_the_runs_a_gateway_must_stop(store):
    mine, taken, ended, cancelled = (new_run(store, owner="g1", lease_s=0.0) for _ in range(4))
    [claimed] = store.claim_abandoned("g2", 30, 10, exclude=[mine, ended, cancelled])
    assert claimed.id == taken
    store.commit_run(ended, "g1", 30, events=[event(1, "complete")], final=FinalState("COMPLETE"))
    store.request_cancel(cancelled)
    assert store.lease_states("g1", [mine, taken, ended, cancelled, "unknown"]) == {
        taken: LEASE_LOST,
        ended: LEASE_ENDED,
        cancelled: LEASE_CANCEL_REQUESTED,
    }
    assert store.lease_states("g1", []) == {}


def test_a_run_is_ended_unattended_only_where_its_sequence_still_stands(store):
    """Cancel of a run whose gateway does not answer: ends it whoever holds the lease, unless the run
    stored an event meanwhile (the caller reads again and retries) or has ended."""
    run = new_run(store, owner="gw-dead")
    store.commit_run(run, "gw-dead", 30, events=[event(1), event(2)])
    cancelled = FinalState("CANCELLED", error_message="Cancelled by the caller.")
    assert not store.end_unattended(run, 1, [event(2, "cancelled")], cancelled)  # stale: seq 2 is stored
    assert store.end_unattended(run, 2, [event(3, "cancelled")], cancelled)
    record = store.get_message(run, tenant_id=ANY_TENANT)
    assert (record.status, record.last_seq, record.lease_owner, record.error_message) == (
        "CANCELLED",
        3,
        None,
        "Cancelled by the caller.",
    )
    assert [e.event_type for e in store.events_after(run, 0)] == ["extract_start", "extract_start", "cancelled"]
    assert not store.end_unattended(run, 3, [event(4, "cancelled")], cancelled)  # already ended
    with pytest.raises(LeaseLost):  # the owner, should it come back, stores nothing more
        store.commit_run(run, "gw-dead", 30, events=[event(4, "complete")], final=FinalState("COMPLETE"))


def test_request_ids_are_unique_per_tenant(store):
    request_id = str(uuid.uuid4())
    first = new_run(store, request_id=request_id, request_sha256="a" * 64)
    with pytest.raises(RequestIdTaken) as taken:
        new_run(store, request_id=request_id, request_sha256="b" * 64)
    assert taken.value.message_id == first
    assert store.find_by_request_id(request_id, tenant_id="default").request_sha256 == "a" * 64
    # Another tenant's key space is its own: the same id starts its own run, invisible to the first.
    other = new_run(store, tenant_id="acme", request_id=request_id, request_sha256="c" * 64)
    assert store.find_by_request_id(request_id, tenant_id="acme").id == other != first


def test_upgrading_a_database_from_before_durable_runs_keeps_its_runs(empty_database_url):
    """A database at revision 0002 with a finished run and a run left RUNNING (its gateway died)."""
    engine = create_engine(empty_database_url)
    try:
        with engine.begin() as connection:
            config = alembic_config(connection)
            command.upgrade(config, "0002")
            now = datetime.now(UTC)
            for message_id, status in (("old-done", "COMPLETE"), ("old-running", "RUNNING")):
                connection.execute(
                    text(
                        "INSERT INTO messages (id, conversation_id, question, request_config, status, title,"
                        " created_at, updated_at) VALUES (:id, 'c', 'q?', '{}', :status, 't', :now, :now)"
                    ),
                    {"id": message_id, "status": status, "now": now},
                )
            connection.execute(
                text(
                    "INSERT INTO deliberation_stages (id, message_id, stage_type, stage_order, model, role, content,"
                    " parsed_data, response_time_ms, created_at)"
                    " VALUES ('s1', 'old-done', 'extract', 1, 'm/x', 'extractor', 'raw', '{}', 5, :now)"
                ),
                {"now": now},
            )
    finally:
        engine.dispose()

    upgrade_database(empty_database_url)
    store = StageStore(empty_database_url)
    try:
        done = store.get_message("old-done", tenant_id=ANY_TENANT)
        assert done is not None
        assert (done.status, done.title, done.last_seq, done.request_id) == ("COMPLETE", "t", 0, None)
        assert done.tenant_id == "default"
        assert [s.stage_type for s in store.get_stages("old-done")] == ["extract"]
        assert store.events_after("old-done", 0) == []
        # The abandoned run has no lease: the first gateway to look claims it (and ends it: no stored request).
        [claimed] = store.claim_abandoned("gw-new", 30, 10)
        assert claimed.id == "old-running" and not claimed.resumable
    finally:
        store.close()
