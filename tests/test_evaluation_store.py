"""The evaluations' store on SQLite and PostgreSQL: who may run an evaluation, what a takeover, a cancel,
a shutdown and a write that comes too late do, the events' seqs, and the answers' pages and filters."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest
from alembic import command
from sqlalchemy import create_engine, insert, text, update

from factcheck.v1 import evaluation_pb2
from factcheck_gateway.evaluations.plan import DrawnSet, EvaluationPlan
from factcheck_gateway.evaluations.runner import STORE_FAILED, EvaluationRunner
from factcheck_gateway.evaluations.store import EvaluationStore, ItemFilter, ItemResult
from factcheck_gateway.evaluations.tables import EvaluationRow
from factcheck_gateway.ledger.budget import Budget
from factcheck_gateway.ledger.pricing import Pricing
from factcheck_gateway.ledger.totals import UsageTotals
from factcheck_gateway.store import upgrade_database
from factcheck_gateway.store.migrate import alembic_config
from factcheck_gateway.store.models import utc_now
from factcheck_gateway.store.paging import InvalidPageToken

CONFIG = {"checkerModels": ["fake/a"], "sets": [{"name": "s", "custom": True, "available": 1, "itemIds": ["i"]}]}


# The tenant the stored evaluation "e1" belongs to (CONFIG's); page tokens are bound to it.
TENANT = "acme"


def _store(database_url: str) -> EvaluationStore:
    store = EvaluationStore(create_engine(database_url))
    store.create("e1", "acme", "gateway-a", CONFIG, {"s": []}, 1)
    return store


def _age(store: EvaluationStore, seconds: float) -> None:
    with store.engine.begin() as session:
        session.execute(update(EvaluationRow).values(updated_at=utc_now() - timedelta(seconds=seconds)))


def _event(kind: str = "progress") -> evaluation_pb2.EvaluationEvent:
    event = evaluation_pb2.EvaluationEvent(evaluation_id="e1")
    getattr(event, kind).SetInParent()
    return event


def _final():
    return _event("finished")


def _seqs(store: EvaluationStore) -> list[tuple[int, str]]:
    return [(stored.seq, stored.event_type) for stored in store.events_after("e1", 0)]


def test_a_running_evaluation_is_taken_over_only_once_its_gateway_stopped_writing(database_url):
    store = _store(database_url)
    lease = timedelta(seconds=30)
    assert store.claim("e1", "acme", "gateway-b", utc_now() - lease, CONFIG) is None  # its gateway is alive
    _age(store, 60)
    assert store.claim("e1", "globex", "gateway-b", utc_now() - lease, CONFIG) is None  # another tenant's id
    claimed = store.claim("e1", "acme", "gateway-b", utc_now() - lease, CONFIG)
    assert claimed is not None and claimed.owner == "gateway-b"
    # The gateway that lost it learns so at its next write, which is still stored (nothing paid for is lost),
    # but its event is not: the events are the new owner's.
    late = ItemResult("fake/a", "s", "i", "VERIFIED", verdict="VERIFIED", confidence="HIGH")
    assert not store.save_item("e1", "gateway-a", late, [], [], _event())
    assert [item.item_id for item in store.items("e1")] == ["i"]
    assert _seqs(store) == []
    assert not store.heartbeat("e1", "gateway-a") and store.heartbeat("e1", "gateway-b")
    assert not store.still_owned("e1", "gateway-a") and store.still_owned("e1", "gateway-b")
    assert not store.append_event("e1", "gateway-a", _event("started"))
    assert not store.finish("e1", "gateway-a", "COMPLETE", None, _final)
    assert store.finish("e1", "gateway-b", "COMPLETE", None, _final)
    ended = store.get("e1", "acme")
    assert ended is not None and ended.status == "COMPLETE" and ended.last_seq == 1
    assert _seqs(store) == [(1, "finished")]
    assert store.claim("e1", "acme", "gateway-c", utc_now(), CONFIG) is None  # a COMPLETE one is never resumed
    store.engine.dispose()


def test_events_get_gap_free_seqs_across_owners_and_the_end(database_url):
    store = _store(database_url)
    assert store.append_event("e1", "gateway-a", _event("started"))
    answer = ItemResult("fake/a", "s", "i", "VERIFIED", verdict="VERIFIED", confidence="HIGH")
    assert store.save_item("e1", "gateway-a", answer, [], [], _event())
    store.release("e1", "gateway-a")  # a shutdown: still RUNNING, owned by none, at once claimable
    [abandoned] = store.abandoned(utc_now() - timedelta(seconds=30), exclude=[], limit=5)
    assert abandoned.id == "e1" and abandoned.owner is None
    assert store.abandoned(utc_now() - timedelta(seconds=30), exclude=["e1"], limit=5) == []
    claimed = store.claim("e1", "acme", "gateway-b", utc_now() - timedelta(seconds=30), CONFIG)
    assert claimed is not None and claimed.last_seq == 2
    assert store.append_event("e1", "gateway-b", _event("started"))
    assert store.cancel("e1", "acme", "Cancelled by the caller.", _final)
    assert _seqs(store) == [(1, "started"), (2, "progress"), (3, "started"), (4, "finished")]
    payloads = [evaluation_pb2.EvaluationEvent.FromString(stored.payload) for stored in store.events_after("e1", 0)]
    assert [event.seq for event in payloads] == [1, 2, 3, 4]
    assert payloads[-1].finished.last_seq == 4
    assert _seqs(store)[2:] == [(stored.seq, stored.event_type) for stored in store.events_after("e1", 2)]
    store.engine.dispose()


def test_cancel_ends_it_for_whichever_gateway_runs_it(database_url):
    store = _store(database_url)
    assert not store.cancel("e1", "globex", "Cancelled by the caller.", _final)
    assert store.cancel("e1", "acme", "Cancelled by the caller.", _final)
    record = store.get("e1", "acme")
    assert record is not None
    assert record.status == "CANCELLED" and record.owner is None and record.error_message == "Cancelled by the caller."
    assert not store.heartbeat("e1", "gateway-a")  # its runner stops at its next write
    assert not store.cancel("e1", "acme", "again", _final)  # already ended
    assert _seqs(store) == [(1, "finished")]
    assert store.claim("e1", "acme", "gateway-b", utc_now(), CONFIG) is not None  # and it can be resumed at once
    store.engine.dispose()


def test_a_failed_answer_is_replaced_by_the_next_attempts(database_url):
    store = _store(database_url)
    failed = ItemResult("fake/a", "s", "i", "VERIFIED", failed=True, error="UNAVAILABLE: down")
    answered = ItemResult(
        "fake/a", "s", "i", "VERIFIED", verdict="DISPUTED", confidence="LOW", latency_ms=5, cached_tokens=7,
        answer="The passage says otherwise.", correction="It is false.",
    )  # fmt: skip
    assert store.save_item("e1", "gateway-a", failed, [], [])
    assert store.answer_counts(["e1"]) == {"e1": [("fake/a", "s", "VERIFIED", None, False, True, 1)]}
    assert store.save_item("e1", "gateway-a", answered, [], [])
    assert store.items("e1") == [answered]
    assert store.answer_counts(["e1"]) == {"e1": [("fake/a", "s", "VERIFIED", "DISPUTED", False, False, 1)]}
    store.engine.dispose()


def test_answers_are_paged_newest_first_with_filters(database_url):
    store = _store(database_url)
    answers = [
        ItemResult("fake/a", "s", "right", "VERIFIED", verdict="VERIFIED", confidence="HIGH"),
        ItemResult("fake/a", "s", "wrong", "VERIFIED", verdict="DISPUTED", confidence="LOW"),
        ItemResult("fake/a", "t", "unread", "DISPUTED", unreadable=True, answer="Happy to help!"),
        ItemResult("fake/b", "s", "failed", "UNVERIFIABLE", failed=True, error="down"),
        ItemResult("fake/b", "s", "right-b", "UNVERIFIABLE", verdict="UNVERIFIABLE", confidence="MEDIUM"),
    ]
    for answer in answers:
        assert store.save_item("e1", "gateway-a", answer, [], [])

    def ids(where: ItemFilter, size: int = 2) -> list[str]:
        seen, token = [], None
        while True:
            page, token = store.page_items("e1", TENANT, where, size, token)
            assert len(page) <= size
            seen += [stored.result.item_id for stored in page]
            if token is None:
                return seen

    assert ids(ItemFilter()) == ["right-b", "failed", "unread", "wrong", "right"]
    assert ids(ItemFilter(wrong_only=True)) == ["unread", "wrong"]
    assert ids(ItemFilter(failed_only=True)) == ["failed"]
    assert ids(ItemFilter(checker_model="fake/a", set_name="s")) == ["wrong", "right"]
    assert ids(ItemFilter(label="UNVERIFIABLE"), size=1) == ["right-b", "failed"]
    assert ids(ItemFilter(checker_model="nobody")) == []
    with pytest.raises(InvalidPageToken):
        store.page_items("e1", TENANT, ItemFilter(), 2, "not-a-token")
    store.engine.dispose()


def test_the_migration_gives_stored_answers_ids(empty_database_url):
    engine = create_engine(empty_database_url)
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0011")
            now = utc_now()
            connection.execute(
                text(
                    "INSERT INTO evaluations (id, tenant_id, status, config, custom_items, total, created_at, updated_at) "
                    "VALUES ('e1', 'acme', 'COMPLETE', '{}', '{}', 2, :now, :now)"
                ),
                {"now": now},
            )
            for item_id in ("a", "b"):
                connection.execute(
                    text(
                        "INSERT INTO evaluation_items (evaluation_id, checker_model, set_name, item_id, label, verdict, "
                        "unreadable, cached, failed, prompt_tokens, completion_tokens, cost_usd, created_at) "
                        "VALUES ('e1', 'fake/a', 's', :item, 'VERIFIED', 'VERIFIED', false, false, false, 1, 1, 0, :now)"
                    ),
                    {"item": item_id, "now": now},
                )
        upgrade_database(empty_database_url)
        store = EvaluationStore(engine)
        page, _ = store.page_items("e1", TENANT, ItemFilter(), 10, None)
        assert sorted(stored.result.item_id for stored in page) == ["a", "b"]
        with engine.connect() as connection:
            item_ids = connection.execute(text("SELECT id FROM evaluation_items")).scalars().all()
            assert len(set(item_ids)) == 2 and all(len(value) == 36 for value in item_ids)
        record = store.get("e1", "acme")
        assert record is not None and record.last_seq == 0
        with engine.begin() as connection:  # the new columns take their defaults
            connection.execute(insert(EvaluationRow.__table__).values(
                id="e2", tenant_id="acme", status="RUNNING", config={}, custom_items={}, total=0,
                created_at=now, updated_at=now,
            ))  # fmt: skip
        record = store.get("e2", "acme")
        assert record is not None and record.last_seq == 0
    finally:
        engine.dispose()


async def test_a_database_that_stays_unavailable_fails_the_evaluation_in_words_not_its_error(tmp_path):
    """The reason a user reads (the HTML page's banner, `eval show`) says what happened; the database's own
    error text is the gateway's log's, not theirs."""
    path = tmp_path / "locked.db"
    upgrade_database(f"sqlite:///{path}")
    store = EvaluationStore(create_engine(f"sqlite:///{path}", connect_args={"timeout": 0.2}))
    store.create("e1", TENANT, "gateway-a", CONFIG, {"s": []}, 1)
    plan = EvaluationPlan(
        tenant_id=TENANT,
        checker_models=("fake/a",),
        sets=(DrawnSet("s", True, 1, ()),),
        limit=None,
        seed=0,
        budget=Budget(None, None),
        use_cache=False,
        concurrency=1,
        cache_ttl_s=0.0,
        timeout_ms=1_000,
    )
    runner = EvaluationRunner(
        "e1",
        plan,
        store,
        None,  # type: ignore[arg-type]  # (no checker is called: the first event cannot be stored)
        Pricing({}),
        "gateway-a",
        30.0,
        stored=[],
        spent=UsageTotals(),
    )
    locker = sqlite3.connect(path, isolation_level=None)
    try:
        locker.execute("BEGIN EXCLUSIVE")  # every write is refused: "database is locked"
        status, reason = await runner.execute()
    finally:
        locker.close()
    assert (status, reason) == ("FAILED", STORE_FAILED)
