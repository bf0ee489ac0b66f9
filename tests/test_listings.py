"""Listings. Page tokens (services/gateway/factcheck_gateway/store/paging.py): opaque and authenticated,
bound to the tenant, the RPC and the filters, expiring, and still accepted under the previous key while the
key rotates; every listing RPC (ListResults, ListDocuments, ListClaims, ListReviews, ListEvaluations)
refuses a forged, altered, expired or foreign token with INVALID_ARGUMENT. ListResults' status and mode
filters. On SQLite and PostgreSQL.
"""

from __future__ import annotations

import asyncio
import base64
import string
import uuid
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
from pydantic import ValidationError
from sqlalchemy import delete
from sqlalchemy.orm import Session

from factcheck.kit.settings import Settings
from factcheck.v1 import (
    citations_pb2,
    citations_pb2_grpc,
    common_pb2,
    evaluation_pb2,
    evaluation_pb2_grpc,
    factcheck_pb2,
    factcheck_pb2_grpc,
    investigation_pb2,
    investigation_pb2_grpc,
    knowledge_pb2,
    knowledge_pb2_grpc,
)
from factcheck_gateway.claims.tables import ClaimRow
from factcheck_gateway.evaluations.store import EvaluationStore, ItemResult
from factcheck_gateway.mode_dispatch import stored_mode_names
from factcheck_gateway.reviews.review_store import PendingReview, ReviewStore
from factcheck_gateway.store.engine import create_db_engine
from factcheck_gateway.store.models import ServerKey
from factcheck_gateway.store.paging import (
    ExpiredPageToken,
    InvalidPageToken,
    Listing,
    PageTokenKeys,
    configure_page_tokens,
    page_token_keys,
    stored_page_token_key,
)
from factcheck_gateway.store.stage_store import StageStore
from tests.inprocess import inprocess_settings, serve_everything
from tests.processes import start_service

KEY, PREVIOUS = b"k" * 32, b"p" * 32
LISTING = Listing("ListResults", "acme", {"status": "COMPLETE", "modes": None})
MOMENT = datetime(2026, 12, 5, 1, 14, 28, 123_456, tzinfo=UTC)
ROW = "401f8d96-3b7e-4c55-9d2a-7d0f1c2e3a4b"
# The forgery the issue reported: a position made by hand, accepted by every listing before.
FORGED = base64.b64encode(b'["2099-01-01T00:00:00+00:00","zzzz"]').decode().rstrip("=")


# --- the token ---------------------------------------------------------------------------------------------


def test_a_token_opens_to_the_position_it_was_sealed_at():
    keys = PageTokenKeys((KEY,))
    token = keys.seal(LISTING, MOMENT, ROW)
    assert keys.open(LISTING, token) == (MOMENT, ROW)
    assert set(token) <= set(string.ascii_letters + string.digits + "-_")  # url-safe, no padding
    assert "2026" not in base64.urlsafe_b64decode(token + "==").decode("latin-1")  # no readable time in it


@pytest.mark.parametrize("token", [FORGED, "not-a-token", "", "=" * 8, "A" * 2000, "ñ" * 10])
def test_a_token_the_server_did_not_make_is_refused(token):
    with pytest.raises(InvalidPageToken, match="page_token is not valid for this listing"):
        PageTokenKeys((KEY,)).open(LISTING, token or "x")


def test_every_altered_character_is_refused():
    keys = PageTokenKeys((KEY,))
    token = keys.seal(LISTING, MOMENT, ROW)
    for index, character in enumerate(token):
        for other in ("A", "z"):
            if other != character:
                with pytest.raises(InvalidPageToken):
                    keys.open(LISTING, token[:index] + other + token[index + 1 :])
    with pytest.raises(InvalidPageToken):
        keys.open(LISTING, token[:-1])
    with pytest.raises(InvalidPageToken):
        keys.open(LISTING, token + "A")


@pytest.mark.parametrize(
    "other",
    [
        Listing("ListResults", "globex", LISTING.filters),  # another tenant's
        Listing("ListEvaluations", "acme", LISTING.filters),  # another RPC's
        Listing("ListResults", "acme", {"status": "FAILED"}),  # other filters
        Listing("ListResults", "acme", {}),
    ],
)
def test_a_token_is_bound_to_the_tenant_the_method_and_the_filters(other):
    keys = PageTokenKeys((KEY,))
    with pytest.raises(InvalidPageToken) as raised:
        keys.open(other, keys.seal(LISTING, MOMENT, ROW))
    assert not isinstance(raised.value, ExpiredPageToken)


def test_a_filter_left_unset_is_the_same_listing():
    """A filter added to an RPC later leaves the tokens of listings that do not use it valid."""
    keys = PageTokenKeys((KEY,))
    token = keys.seal(Listing("ListDocuments", "acme"), MOMENT, ROW)
    assert keys.open(Listing("ListDocuments", "acme", {"added_later": None}), token) == (MOMENT, ROW)


def test_a_token_expires():
    keys = PageTokenKeys((KEY,), ttl_s=3600)
    token = keys.seal(LISTING, MOMENT, ROW, now=1_000_000)
    assert keys.open(LISTING, token, now=1_000_000 + 3600) == (MOMENT, ROW)
    with pytest.raises(ExpiredPageToken, match=r"page_token has expired \(a page token lasts 1 hour\)"):
        keys.open(LISTING, token, now=1_000_000 + 3601)


def test_a_rotation_keeps_the_tokens_in_flight():
    before = PageTokenKeys((PREVIOUS,))
    during = PageTokenKeys((KEY, PREVIOUS))
    after = PageTokenKeys((KEY,))
    in_flight = before.seal(LISTING, MOMENT, ROW)
    assert during.open(LISTING, in_flight) == (MOMENT, ROW)
    fresh = during.seal(LISTING, MOMENT, ROW)
    assert after.open(LISTING, fresh) == (MOMENT, ROW)  # signed with the new key
    with pytest.raises(InvalidPageToken):
        after.open(LISTING, in_flight)  # the previous key, once dropped, is refused


# --- the setting -------------------------------------------------------------------------------------------


def test_the_keys_setting_takes_the_current_key_and_one_previous_key(monkeypatch):
    current, previous = "c" * 40, "q" * 32
    monkeypatch.setenv("FACTCHECK_PAGE_TOKEN_KEYS", f"{current}, {previous}")
    settings = Settings()
    assert [key.get_secret_value() for key in settings.page_token_keys] == [current, previous]
    assert current in settings.secrets() and previous in settings.secrets()  # masked in the logs
    for value, rule in [
        (f"{current},{previous},{'r' * 32}", "at most one previous key"),
        ("too-short-a-key", "at least 32 characters"),
    ]:
        monkeypatch.setenv("FACTCHECK_PAGE_TOKEN_KEYS", value)
        with pytest.raises(ValidationError, match=rule) as raised:
            Settings()
        assert "too-short-a-key" not in str(raised.value) and current not in str(raised.value)


@pytest.fixture
def configured_keys():
    yield
    configure_page_tokens([])  # back to the database's key


def test_configured_keys_win_over_the_stored_one(database_url, configured_keys):
    engine = create_db_engine(database_url)
    try:
        stored = page_token_keys(engine)
        assert stored.keys == (stored_page_token_key(engine),)
        configure_page_tokens(["n" * 32, "o" * 32], ttl_s=60)
        assert page_token_keys(engine) == PageTokenKeys((b"n" * 32, b"o" * 32), 60)
    finally:
        engine.dispose()


# --- the stored key ----------------------------------------------------------------------------------------


def test_replicas_on_one_database_share_the_stored_key(database_url):
    """Migration 0012 stores one random key; two gateways on the database (two engines) sign alike, and a
    key deleted by hand is made again once, whoever asks first."""
    first, second = create_db_engine(database_url), create_db_engine(database_url)
    try:
        key = stored_page_token_key(first)
        assert len(key) == 32 and stored_page_token_key(second) == key
        token = PageTokenKeys((key,)).seal(LISTING, MOMENT, ROW)
        assert PageTokenKeys((stored_page_token_key(second),)).open(LISTING, token) == (MOMENT, ROW)
        with first.begin() as connection:
            connection.execute(delete(ServerKey))
        remade = stored_page_token_key(second)
        assert remade != key and stored_page_token_key(first) == remade
    finally:
        first.dispose()
        second.dispose()


# --- every listing RPC -------------------------------------------------------------------------------------

ACME, GLOBEX = "tok-acme-5b1f0e", "tok-globex-c39d7a"


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def stored_rows(database_url: str, tenant: str) -> None:
    """Two of everything each listing lists, for `tenant`: runs, documents, claims, reviews, evaluations."""
    store = StageStore(database_url)
    try:
        runs = [f"{tenant}-run-{n}-{uuid.uuid4().hex[:6]}" for n in range(2)]
        for run in runs:
            store.create_message(run, "c", "q", {"mode": "fact_check"}, tenant_id=tenant)
        with Session(store.engine) as session, session.begin():
            for n in range(2):
                session.add(
                    ClaimRow(
                        id=str(uuid.uuid4()),
                        message_id=runs[0],
                        tenant_id=tenant,
                        claim_key=f"claim_{n}",
                        claim_text=f"Claim {n}.",
                        claim_type="general",
                        spec_type="STATISTIC",
                    )
                )
        review = PendingReview(f"claim_{0}", "Claim.", (), "REFUTED", 0.8, "r")
        ReviewStore(store.engine).add_pending(runs[0], tenant, [review])
        ReviewStore(store.engine).add_pending(runs[1], tenant, [review])
        for n in range(2):
            config = {"checkerModels": ["local/checker"], "sets": []}
            evaluations = EvaluationStore(store.engine)
            evaluation_id = f"{tenant}-eval-{n}-{uuid.uuid4().hex[:6]}" if n else f"{tenant}-eval-answered"
            evaluations.create(evaluation_id, tenant, "test", config, {}, 0)
        for item in ("i1", "i2"):  # two answers in the first evaluation: ListEvaluationItems has two pages of one
            answer = ItemResult("local/checker", "s", item, "VERIFIED", verdict="VERIFIED")
            evaluations.save_item(f"{tenant}-eval-answered", "test", answer, [], [])
    finally:
        store.close()


# Each listing RPC: its service's stub and its request.
LISTINGS: dict[str, tuple[Callable[[grpc.aio.Channel], Any], type]] = {
    "ListResults": (factcheck_pb2_grpc.FactCheckServiceStub, factcheck_pb2.ListResultsRequest),
    "ListDocuments": (knowledge_pb2_grpc.KnowledgeServiceStub, knowledge_pb2.ListDocumentsRequest),
    "ListClaims": (citations_pb2_grpc.ClaimsServiceStub, citations_pb2.ListClaimsRequest),
    "ListReviews": (investigation_pb2_grpc.ReviewServiceStub, investigation_pb2.ListReviewsRequest),
    "ListEvaluations": (evaluation_pb2_grpc.EvaluationServiceStub, evaluation_pb2.ListEvaluationsRequest),
}


async def next_page(channel: grpc.aio.Channel, listing: str, token: str, size: int, page_token: str) -> str:
    """A page of `listing` as the caller with `token`: its next_page_token."""
    stub, request = LISTINGS[listing]
    call = getattr(stub(channel), listing)
    return (await call(request(page_size=size, page_token=page_token), metadata=auth(token))).next_page_token


@pytest.fixture
async def two_tenants(database_url):
    settings = inprocess_settings("http://127.0.0.1:9", database_url, auth_tokens=f"acme:{ACME},globex:{GLOBEX}")
    async with serve_everything(settings, authenticate=True) as served:
        async with grpc.aio.insecure_channel(served.target) as channel:
            for token in (ACME, GLOBEX):
                documents = [common_pb2.Source(id=f"d{n}", text=f"Document {n} about tides.") for n in range(2)]
                await knowledge_pb2_grpc.KnowledgeServiceStub(channel).AddDocuments(
                    knowledge_pb2.AddDocumentsRequest(documents=documents), metadata=auth(token)
                )
            stored_rows(database_url, "acme")
            stored_rows(database_url, "globex")
            yield channel


async def refused(call: Awaitable[str]) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    return raised.value.details() or ""


async def test_every_listing_refuses_forged_altered_and_foreign_tokens(two_tenants):
    channel = two_tenants
    tokens = {name: await next_page(channel, name, ACME, 1, "") for name in LISTINGS}
    for name in LISTINGS:
        token = tokens[name]
        assert token and await next_page(channel, name, ACME, 1, token) == ""  # the second (last) page
        details = await refused(next_page(channel, name, ACME, 1, FORGED))
        assert details.startswith("page_token is not valid for this listing"), (name, details)
        altered = token[:10] + ("B" if token[10] != "B" else "C") + token[11:]
        await refused(next_page(channel, name, ACME, 1, altered))
        await refused(next_page(channel, name, GLOBEX, 1, token))  # another tenant's token
        for other in LISTINGS:  # another RPC's token
            if other != name:
                await refused(next_page(channel, other, ACME, 1, token))


async def test_evaluation_items_refuse_forged_altered_and_foreign_tokens(two_tenants):
    """ListEvaluationItems (an evaluation's answers) pages with the same sealed tokens: bound to the tenant, the
    method and the evaluation with its filters."""
    stub = evaluation_pb2_grpc.EvaluationServiceStub(two_tenants)

    async def page(caller: str, page_token: str, evaluation_id: str = "acme-eval-answered", **filters) -> str:
        request = evaluation_pb2.ListEvaluationItemsRequest(
            evaluation_id=evaluation_id, page_size=1, page_token=page_token, **filters
        )
        return (await stub.ListEvaluationItems(request, metadata=auth(caller))).next_page_token

    token = await page(ACME, "")
    assert token and await page(ACME, token) == ""  # the second (last) page
    details = await refused(page(ACME, FORGED))
    assert details.startswith("page_token is not valid for this listing"), details
    await refused(page(ACME, token[:10] + ("B" if token[10] != "B" else "C") + token[11:]))
    await refused(page(GLOBEX, token, "globex-eval-answered"))  # another tenant's token, on its own evaluation
    await refused(page(ACME, token, wrong_only=True))  # other filters
    listed = await next_page(two_tenants, "ListEvaluations", ACME, 1, "")
    await refused(page(ACME, listed))  # another RPC's token
    await refused(next_page(two_tenants, "ListEvaluations", ACME, 1, token))


async def test_a_token_is_bound_to_the_filters_it_was_made_with(two_tenants):
    stub = investigation_pb2_grpc.ReviewServiceStub(two_tenants)
    page = await stub.ListReviews(investigation_pb2.ListReviewsRequest(page_size=1), metadata=auth(ACME))
    assert page.next_page_token
    other_filters = investigation_pb2.ListReviewsRequest(
        page_size=1, page_token=page.next_page_token, include_decided=True
    )
    assert "with the same filters" in await refused(stub.ListReviews(other_filters, metadata=auth(ACME)))
    # The page size may change between pages (AIP-158).
    same = investigation_pb2.ListReviewsRequest(page_size=5, page_token=page.next_page_token)
    assert len((await stub.ListReviews(same, metadata=auth(ACME))).reviews) == 1


async def test_an_expired_token_is_invalid_argument(two_tenants, configured_keys):
    configure_page_tokens(["e" * 32], ttl_s=0.001)
    token = await next_page(two_tenants, "ListResults", ACME, 1, "")
    await asyncio.sleep(1.1)  # a token's expiry is in whole seconds
    details = await refused(next_page(two_tenants, "ListResults", ACME, 1, token))
    assert details.startswith("page_token has expired") and "start again from the first page" in details


# --- ListResults' filters ----------------------------------------------------------------------------------


def test_list_results_filters_by_status_and_mode(database_url):
    store = StageStore(database_url)
    try:
        for run, config, status in [
            ("legacy", {}, "COMPLETE"),  # stored before modes existed: a fact-check
            ("fact", {"mode": "fact_check"}, "FAILED"),
            ("council", {"mode": "council"}, "COMPLETE"),
            ("entail", {"mode": "entailment"}, "RUNNING"),
        ]:
            store.create_message(run, "c", "q", config, tenant_id="acme")
            if status != "RUNNING":
                store.set_status(run, status)

        def listed(**filters) -> list[str]:
            return sorted(r.id for r in store.list_messages(10, None, tenant_id="acme", **filters)[0])

        assert listed(status="COMPLETE") == ["council", "legacy"]
        assert listed(modes=stored_mode_names(factcheck_pb2.MODE_FACT_CHECK)) == ["fact", "legacy"]
        assert listed(modes=stored_mode_names(factcheck_pb2.MODE_COUNCIL)) == ["council"]
        assert listed(status="COMPLETE", modes=("fact_check", None)) == ["legacy"]
        assert listed(status="CANCELLED") == []
        first, token = store.list_messages(1, None, tenant_id="acme", status="COMPLETE")
        assert token is not None
        second, last = store.list_messages(1, token, tenant_id="acme", status="COMPLETE")
        assert {first[0].id, second[0].id} == {"council", "legacy"} and last is None
        with pytest.raises(InvalidPageToken):
            store.list_messages(1, token, tenant_id="acme", status="FAILED")  # a token of other filters
    finally:
        store.close()


async def test_list_results_takes_status_and_mode(two_tenants):
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(two_tenants)
    complete = factcheck_pb2.ListResultsRequest(status=factcheck_pb2.MESSAGE_STATUS_COMPLETE)
    assert (await gateway.ListResults(complete, metadata=auth(ACME))).results == []  # every stored run is RUNNING
    running = factcheck_pb2.ListResultsRequest(
        status=factcheck_pb2.MESSAGE_STATUS_RUNNING, mode=factcheck_pb2.MODE_FACT_CHECK
    )
    page = await gateway.ListResults(running, metadata=auth(ACME))
    assert len(page.results) == 2 and {r.mode for r in page.results} == {factcheck_pb2.MODE_FACT_CHECK}
    council = factcheck_pb2.ListResultsRequest(mode=factcheck_pb2.MODE_COUNCIL)
    assert (await gateway.ListResults(council, metadata=auth(ACME))).results == []
    for bad, field in [
        (factcheck_pb2.ListResultsRequest(status=99), "status must be one of MESSAGE_STATUS_RUNNING"),  # type: ignore[arg-type]
        (factcheck_pb2.ListResultsRequest(mode=42), "mode must be one of MODE_FACT_CHECK"),  # type: ignore[arg-type]
    ]:
        assert field in await refused(gateway.ListResults(bad, metadata=auth(ACME)))


# --- gateway replicas --------------------------------------------------------------------------------------


@pytest.mark.e2e
async def test_replicas_accept_each_others_tokens_and_a_rotation_breaks_none(database_url):
    """Gateway processes on one database: two on the stored key take each other's tokens; one rotating to a
    new key (FACTCHECK_PAGE_TOKEN_KEYS=new,old) takes the tokens of one still on the old key, and the old one
    refuses what the new key signed."""
    old, new = "o" * 32, "n" * 32
    env = {"FACTCHECK_DATABASE_URL": database_url}
    gateways = [
        start_service("gateway", {**env, **keys})
        for keys in ({}, {}, {"FACTCHECK_PAGE_TOKEN_KEYS": old}, {"FACTCHECK_PAGE_TOKEN_KEYS": f"{new},{old}"})
    ]
    try:
        channels = [grpc.aio.insecure_channel(gateway.target) for gateway in gateways]
        first, second, on_old, rotating = (knowledge_pb2_grpc.KnowledgeServiceStub(channel) for channel in channels)
        documents = [common_pb2.Source(id=f"d{n}", text=f"Document {n} about tides.") for n in range(3)]
        await first.AddDocuments(knowledge_pb2.AddDocumentsRequest(documents=documents))

        async def next_token(stub, token: str = "") -> str:
            request = knowledge_pb2.ListDocumentsRequest(page_size=1, page_token=token)
            return (await stub.ListDocuments(request)).next_page_token

        assert await next_token(second, await next_token(first))  # the stored key, shared
        assert await next_token(rotating, await next_token(on_old))  # a token in flight survives the rotation
        signed_new = await next_token(rotating)
        assert await next_token(rotating, signed_new)
        await refused(next_token(on_old, signed_new))
        await refused(next_token(first, await next_token(on_old)))  # configured keys replace the stored one
        for channel in channels:
            await channel.close()
    finally:
        for gateway in gateways:
            gateway.stop()
