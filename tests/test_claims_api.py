"""ClaimsService: filters, AIP-158 paging and tenant scoping, on SQLite and PostgreSQL.

Runs are made offline (local/ engines) by two tenants; every listing and lookup is checked against
what each tenant's runs stored.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from factcheck.v1 import citations_pb2, citations_pb2_grpc, common_pb2, factcheck_pb2, factcheck_pb2_grpc
from tests.processes import start_suite
from tests.test_citations_offline import request

ACME, GLOBEX = "tok-acme-91c2", "tok-globex-3d7e"


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def list_all(claims, token: str, **filters) -> list[citations_pb2.ClaimRecord]:
    """Every page of a listing with page_size 2, following next_page_token."""
    found, page_token = [], ""
    while True:
        page = await claims.ListClaims(
            citations_pb2.ListClaimsRequest(page_size=2, page_token=page_token, **filters), metadata=auth(token)
        )
        assert len(page.claims) <= 2
        found += page.claims
        if not page.next_page_token:
            return found
        page_token = page.next_page_token


@pytest.fixture
def offline_suite(database_url):
    """The four services as processes on local/ engines (no network), the gateway with two tenants' tokens."""
    env = {
        "FACTCHECK_MODEL_BASE_URL": "http://127.0.0.1:9",  # nothing listens: every model here must be local/
        "FACTCHECK_DATABASE_URL": database_url,
        "FACTCHECK_DEFAULT_GENERATOR_MODEL": "local/generator",
        "FACTCHECK_DEFAULT_EXTRACTOR_MODEL": "local/extractor",
        "FACTCHECK_DEFAULT_CHECKER_MODELS": "local/checker",
        "FACTCHECK_DEFAULT_REPORTER_MODEL": "local/reporter",
    }
    running = start_suite(env, per_service={"gateway": {"FACTCHECK_AUTH_TOKENS": f"acme:{ACME},globex:{GLOBEX}"}})
    yield running
    running.stop()


async def test_filters_paging_and_tenants(offline_suite):
    async with grpc.aio.insecure_channel(offline_suite.gateway_target) as channel:
        runs = factcheck_pb2_grpc.FactCheckServiceStub(channel)
        claims = citations_pb2_grpc.ClaimsServiceStub(channel)
        first = [r.event async for r in runs.Run(request(True), metadata=auth(ACME), timeout=60)]
        second = [r.event async for r in runs.Run(request(True), metadata=auth(ACME), timeout=60)]
        other = [r.event async for r in runs.Run(request(True), metadata=auth(GLOBEX), timeout=60)]
        [r.event async for r in runs.Run(request(False), metadata=auth(ACME), timeout=60)]  # no claims stored

        everything = await list_all(claims, ACME)
        assert len(everything) == 8 and len({c.id for c in everything}) == 8  # two runs of four claims, no repeats
        assert {c.message_id for c in everything} == {first[0].message_id, second[0].message_id}
        stamps = [(c.created_at.ToDatetime(), c.id) for c in everything]
        assert stamps == sorted(stamps, reverse=True)  # newest first
        assert len(await list_all(claims, GLOBEX)) == 4

        one_run = await list_all(claims, ACME, message_id=first[0].message_id)
        assert sorted(c.claim_key for c in one_run) == ["claim_1", "claim_2", "claim_3", "claim_4"]
        assert await list_all(claims, GLOBEX, message_id=first[0].message_id) == []  # another tenant's run

        numeric = await list_all(claims, ACME, numeric=True)
        assert numeric and all(c.HasField("numeric_detail") for c in numeric)
        general = await list_all(claims, ACME, numeric=False)
        assert len(numeric) + len(general) == 8 and not any(c.HasField("numeric_detail") for c in general)
        typed = await list_all(claims, ACME, claim_type=citations_pb2.CITATION_CLAIM_TYPE_NUMERIC)
        assert {c.id for c in typed} == {c.id for c in numeric}

        supported = await list_all(claims, ACME, support=citations_pb2.SUPPORT_TIER_SUPPORTED)
        assert supported and all(c.support == citations_pb2.SUPPORT_TIER_SUPPORTED for c in supported)
        disputed = await list_all(claims, ACME, spec_verdict=common_pb2.VERDICT_DISPUTED)
        assert disputed and all(c.spec_verdict == common_pb2.VERDICT_DISPUTED for c in disputed)
        by_source = await list_all(claims, ACME, source_id="visitors")
        assert by_source and all("visitors" in c.claim_text for c in by_source)
        assert await list_all(claims, ACME, source_id="no-such-source") == []

        result = (
            await runs.GetResult(factcheck_pb2.GetResultRequest(message_id=first[0].message_id), metadata=auth(ACME))
        ).result
        warned = await list_all(claims, ACME, warning=result.citations.summary.warning)
        assert len(warned) == 8  # both runs checked the same content: the same warning
        assert await list_all(claims, ACME, warning=not result.citations.summary.warning) == []

        later = Timestamp()
        later.FromDatetime(datetime.now(UTC) + timedelta(hours=1))
        assert await list_all(claims, ACME, created_after=later) == []
        assert len(await list_all(claims, ACME, created_before=later)) == 8

        # AIP-158: a token is bound to its filters; a foreign or forged token is INVALID_ARGUMENT.
        page = await claims.ListClaims(citations_pb2.ListClaimsRequest(page_size=2), metadata=auth(ACME))
        for bad in (
            citations_pb2.ListClaimsRequest(page_size=2, page_token=page.next_page_token, numeric=True),
            citations_pb2.ListClaimsRequest(page_token="not-a-token"),
        ):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await claims.ListClaims(bad, metadata=auth(ACME))
            assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await claims.ListClaims(citations_pb2.ListClaimsRequest(page_size=-1), metadata=auth(ACME))
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT

        # GetClaim: the owner sees spans, citations and numeric detail; another tenant gets NOT_FOUND.
        mine = numeric[0]
        detail = (await claims.GetClaim(citations_pb2.GetClaimRequest(claim_id=mine.id), metadata=auth(ACME))).claim
        assert detail.id == mine.id and detail.numeric_detail.number.raw_value
        foreign = (await list_all(claims, GLOBEX))[0]
        for claim_id in (foreign.id, "no-such-claim"):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await claims.GetClaim(citations_pb2.GetClaimRequest(claim_id=claim_id), metadata=auth(ACME))
            assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        assert other[0].message_id not in {c.message_id for c in everything}
