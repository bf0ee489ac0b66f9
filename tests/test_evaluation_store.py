"""The evaluations' store on SQLite and PostgreSQL: who may run an evaluation, and what a takeover,
a cancel and a write that comes too late do."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import create_engine, update

from factcheck_gateway.evaluations.store import EvaluationStore, ItemResult
from factcheck_gateway.store.models import EvaluationRow, utc_now

CONFIG = {"checkerModels": ["fake/a"], "sets": [{"name": "s", "custom": True, "available": 1, "itemIds": ["i"]}]}


def _store(database_url: str) -> EvaluationStore:
    store = EvaluationStore(create_engine(database_url))
    store.create("e1", "acme", "gateway-a", CONFIG, {"s": []}, 1)
    return store


def _age(store: EvaluationStore, seconds: float) -> None:
    with store.engine.begin() as session:
        session.execute(update(EvaluationRow).values(updated_at=utc_now() - timedelta(seconds=seconds)))


def test_a_running_evaluation_is_taken_over_only_once_its_gateway_stopped_writing(database_url):
    store = _store(database_url)
    lease = timedelta(seconds=30)
    assert not store.claim("e1", "acme", "gateway-b", utc_now() - lease, CONFIG)  # its gateway is alive
    _age(store, 60)
    assert not store.claim("e1", "globex", "gateway-b", utc_now() - lease, CONFIG)  # another tenant's id
    assert store.claim("e1", "acme", "gateway-b", utc_now() - lease, CONFIG)
    # The gateway that lost it learns so at its next write, which is still stored (nothing paid for is lost).
    late = ItemResult("fake/a", "s", "i", "VERIFIED", verdict="VERIFIED", confidence="HIGH")
    assert not store.save_item("e1", "gateway-a", late, [], [])
    assert [item.item_id for item in store.items("e1")] == ["i"]
    assert not store.heartbeat("e1", "gateway-a") and store.heartbeat("e1", "gateway-b")
    assert not store.finish("e1", "gateway-a", "COMPLETE", None)
    assert store.finish("e1", "gateway-b", "COMPLETE", None)
    ended = store.get("e1", "acme")
    assert ended is not None and ended.status == "COMPLETE"
    assert not store.claim("e1", "acme", "gateway-c", utc_now(), CONFIG)  # a COMPLETE one is never resumed
    store.engine.dispose()


def test_cancel_ends_it_for_whichever_gateway_runs_it(database_url):
    store = _store(database_url)
    assert not store.cancel("e1", "globex", "Cancelled by the caller.")
    assert store.cancel("e1", "acme", "Cancelled by the caller.")
    record = store.get("e1", "acme")
    assert record is not None
    assert record.status == "CANCELLED" and record.owner is None and record.error_message == "Cancelled by the caller."
    assert not store.heartbeat("e1", "gateway-a")  # its runner stops at its next write
    assert not store.cancel("e1", "acme", "again")  # already ended
    assert store.claim("e1", "acme", "gateway-b", utc_now(), CONFIG)  # and it can be resumed at once
    store.engine.dispose()


def test_a_failed_answer_is_replaced_by_the_next_attempts(database_url):
    store = _store(database_url)
    failed = ItemResult("fake/a", "s", "i", "VERIFIED", failed=True, error="UNAVAILABLE: down")
    answered = ItemResult("fake/a", "s", "i", "VERIFIED", verdict="DISPUTED", confidence="LOW", latency_ms=5)
    assert store.save_item("e1", "gateway-a", failed, [], [])
    assert store.counts_done(["e1"]) == {}
    assert store.save_item("e1", "gateway-a", answered, [], [])
    assert store.items("e1") == [answered] and store.counts_done(["e1"]) == {"e1": 1}
    store.engine.dispose()
