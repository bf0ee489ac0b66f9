"""The verification cache: a claim verified before by the same model, with the same
evidence and prompt version, is not sent to the checker again; nothing else is ever served.
Through the real services and the scripted model server; SQLite and PostgreSQL."""

from __future__ import annotations

import itertools

import grpc
import pytest
from sqlalchemy import text

from factcheck.core import prompt_versions
from factcheck.v1 import common_pb2, factcheck_pb2, factcheck_pb2_grpc, usage_pb2, usage_pb2_grpc
from factcheck_engines import nli_model
from factcheck_gateway.ledger.queries import LedgerStore
from factcheck_gateway.store.stage_store import StageStore
from tests.conftest import CONTENT, content_request, kinds, payload
from tests.fake_model_server import claim_ids_in_verify_prompt
from tests.inprocess import inprocess_settings, serve_everything

CHANGED = CONTENT.replace("Water boils at lower temperatures", "Water freezes at lower temperatures")
SOURCE = common_pb2.Source(id="paris", title="Paris Agreement", text="The Paris Agreement was adopted in 2015.")


def cached_request(content: str = CONTENT, **config) -> factcheck_pb2.RunRequest:
    return content_request(content, use_cache=True, **config)


async def runs(settings, *requests, purge: bool = False):
    """Each request's events, one after the other, on one suite; then (`purge`) PurgeCache's count."""
    results = []
    async with serve_everything(settings) as running, grpc.aio.insecure_channel(running.target) as channel:
        stub = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        for request in requests:
            results.append([r.event async for r in stub.Run(request, timeout=60)])
        purged = None
        if purge:
            purged = (await usage_pb2_grpc.UsageServiceStub(channel).PurgeCache(usage_pb2.PurgeCacheRequest())).purged
    return results, purged


def checked_claims(fake_models, model: str) -> list[list[str]]:
    return [claim_ids_in_verify_prompt(r.prompt) for r in fake_models.requests_for(model)]


def verdicts(events) -> set:
    return {(c.claim_id, c.consensus_verdict) for c in payload(events, "all_checkers_complete").consensus}


async def test_the_same_text_twice_calls_no_model_the_second_time(database_url, fake_models):
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url)
    (first, second), purged = await runs(settings, cached_request(), cached_request(), purge=True)
    assert kinds(second) == kinds(first)
    requests = fake_models.requests
    assert [r.model for r in requests].count("fake/extractor") == 1
    assert [r.model for r in requests].count("fake/checker-a") == 1
    assert [r.model for r in requests].count("fake/checker-b") == 1
    assert verdicts(second) == verdicts(first)
    for checker in (e.checker_complete for e in second if e.WhichOneof("event") == "checker_complete"):
        assert len(checker.verifications) == 3 and all(v.cached for v in checker.verifications)
    for checker in (e.checker_complete for e in first if e.WhichOneof("event") == "checker_complete"):
        assert not any(v.cached for v in checker.verifications)
    assert payload(second, "complete").usage.cache_hits == 7  # one extraction, three claims × two checkers
    assert payload(second, "complete").usage.calls == 2  # the report and the title only

    store = StageStore(database_url)
    try:
        rows = {row.stage_type: row.parsed_data for row in store.get_stages(second[0].message_id)}
        calls = LedgerStore(store.engine).run_calls(second[0].message_id)
    finally:
        store.close()
    assert all(v["cached"] is True for v in rows["verify_0"]["verifications"])
    assert sorted(c["stage"] for c in calls if c["outcome"] == "cache_hit") == ["extract"] + ["verify"] * 6
    assert purged == 7  # the extraction, and three verifications for each of the two checker models


async def test_a_changed_sentence_is_the_only_claim_checked_again(database_url, fake_models):
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url)
    (first, changed), _ = await runs(settings, cached_request(), cached_request(CHANGED))
    assert payload(changed, "extract_complete").total_claims == 3
    # The extraction ran again (other content); each checker saw only the changed claim.
    assert [r.model for r in fake_models.requests].count("fake/extractor") == 2
    assert checked_claims(fake_models, "fake/checker-a") == [["claim_1", "claim_2", "claim_3"], ["claim_3"]]
    assert checked_claims(fake_models, "fake/checker-b") == [["claim_1", "claim_2", "claim_3"], ["claim_3"]]
    for checker in (e.checker_complete for e in changed if e.WhichOneof("event") == "checker_complete"):
        assert [(v.claim_id, v.cached) for v in checker.verifications] == [
            ("claim_1", True),
            ("claim_2", True),
            ("claim_3", False),
        ]
    assert payload(changed, "complete").usage.cache_hits == 4


async def test_another_model_other_evidence_or_no_opt_in_is_never_served(database_url, fake_models):
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url)
    requests = [
        cached_request(),
        cached_request(checker_models=["fake/checker-c"]),  # another model
        cached_request(sources=[SOURCE]),  # other evidence for the first claim
        content_request(),  # the cache not asked for
    ]
    (_, other_model, other_evidence, not_asked), _ = await runs(settings, *requests)
    assert checked_claims(fake_models, "fake/checker-c") == [["claim_1", "claim_2", "claim_3"]]
    assert all(
        not v.cached
        for e in other_model
        if e.WhichOneof("event") == "checker_complete"
        for v in e.checker_complete.verifications
    )
    # With the source, claim 1 has a passage (other evidence): checked again; claims 2 and 3 have none.
    evidence_run = [ids for ids in checked_claims(fake_models, "fake/checker-a")][1]
    assert evidence_run == ["claim_1"]
    assert payload(not_asked, "complete").usage.cache_hits == 0
    assert checked_claims(fake_models, "fake/checker-a")[-1] == ["claim_1", "claim_2", "claim_3"]


async def test_another_prompt_version_is_never_served(database_url, fake_models, monkeypatch):
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url)
    (first,), _ = await runs(settings, cached_request())
    # The gateway now keys by verify@2 (as after an upgrade); the stored entries were made with verify@1.
    monkeypatch.setitem(prompt_versions.PROMPT_VERSIONS, prompt_versions.VERIFY, 2)
    (again,), _ = await runs(settings, cached_request())
    assert len(fake_models.requests_for("fake/checker-a")) == 2
    assert payload(again, "complete").usage.cache_hits == 1  # the extraction only
    # The checkers still report verify@1: nothing is stored as if it had been made with verify@2.
    store = StageStore(database_url)
    try:
        with store.engine.connect() as connection:
            stored = connection.execute(text("SELECT DISTINCT prompt_version FROM model_cache WHERE kind = 'verify'"))
            assert [row[0] for row in stored] == ["verify@1"]
    finally:
        store.close()


def cached_flags(events) -> list[bool]:
    return [
        v.cached
        for e in events
        if e.WhichOneof("event") == "checker_complete"
        for v in e.checker_complete.verifications
    ]


async def test_an_embedded_engine_with_another_model_revision_is_never_served(database_url, fake_models, monkeypatch):
    """local/checker's verdicts are the shipped entailment model's: after a retrained model (another
    revision of its files, as the checker reports it) every claim is checked again, and what that run
    stores is served next."""
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url)
    request = cached_request(checker_models=["local/checker"], sources=[SOURCE])
    (first, again), _ = await runs(settings, request, request)
    assert cached_flags(first) == [False] * 3 and cached_flags(again) == [True] * 3
    monkeypatch.setattr(nli_model, "revision", lambda: "0" * 64)
    (retrained, after), _ = await runs(settings, request, request)
    assert cached_flags(retrained) == [False] * 3 and cached_flags(after) == [True] * 3
    assert verdicts(retrained) == verdicts(first)  # the same files in fact: the same verdicts


async def test_a_checker_replaced_between_the_lookup_and_the_call_gets_every_claim_again(
    database_url, fake_models, monkeypatch
):
    """The checker named one engine revision before the lookup and answered with another (replaced in
    between): the verdicts found under the first are not served, every claim is asked again, and the
    answers are stored under the revision the checker reported with them."""
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url)
    request = cached_request(checker_models=["local/checker"], sources=[SOURCE])
    changed = cached_request(CHANGED, checker_models=["local/checker"], sources=[SOURCE])
    (first,), _ = await runs(settings, request)
    # GetEngineRevision still answers the old revision; every Verify after it reports a new one.
    answers = itertools.chain([nli_model.revision()], itertools.repeat("0" * 64))
    monkeypatch.setattr(nli_model, "revision", lambda: next(answers))
    (replaced, again), _ = await runs(settings, changed, changed)
    assert cached_flags(first) == [False] * 3
    assert cached_flags(replaced) == [False] * 3  # two claims were found, none served
    assert cached_flags(again) == [True] * 3  # stored under the revision Verify reported


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_the_cache_ttl_expires_entries(database_url, fake_models):
    fake_models.reset()
    settings = inprocess_settings(fake_models.base_url, database_url, cache_ttl_s=0.001)
    (first, second), _ = await runs(settings, cached_request(), cached_request())
    assert len(fake_models.requests_for("fake/checker-a")) == 2
    assert payload(second, "complete").usage.cache_hits == 0
