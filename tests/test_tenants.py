"""Tenants: each token's runs and documents are its own, on SQLite and PostgreSQL.

Units cover the token format, the stores' per-tenant methods and the migration that brings
a database of revision 0002 to tenants. End to end, one suite runs as processes with three
tokens (`acme:…`, `globex:…` and a bare one) and a per-tenant run limit of 1; a second
gateway without authentication shares its database and services.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import grpc
import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import text

from factcheck.kit.errors import ResourceExhausted
from factcheck.kit.security.auth import BearerTokenCheck
from factcheck.kit.security.tenants import DEFAULT_TENANT, bare_token_tenant, parse_token_entry, tenant_tokens
from factcheck.kit.settings import Settings
from factcheck.v1 import common_pb2, factcheck_pb2, factcheck_pb2_grpc, knowledge_pb2, knowledge_pb2_grpc
from factcheck_gateway.knowledge.passage_store import KnowledgeStore, SourceDocument
from factcheck_gateway.knowledge.retrieval import Retriever
from factcheck_gateway.mode_dispatch import load_result
from factcheck_gateway.runs.concurrency_limit import RunLimit, busy_message, tenant_busy_message
from factcheck_gateway.store import ANY_TENANT, StageStore, upgrade_database
from factcheck_gateway.store.engine import create_db_engine
from factcheck_gateway.store.migrate import alembic_config
from factcheck_gateway.store.models import JSON_DOCUMENT, UTCDateTime
from tests.conftest import CONTENT, content_request, kinds, payload, suite_environment
from tests.processes import ROOT, start_service, start_suite
from tests.test_limits import RpcContextStub, as_context

ACME_TOKEN, GLOBEX_TOKEN, BARE_TOKEN = "tok-a-3f9d1c", "tok-b-77e0aa", "tok-bare-5c1e92"
AUTH_TOKENS = f"acme:{ACME_TOKEN},globex:{GLOBEX_TOKEN},{BARE_TOKEN}"
BARE_TENANT = "token-" + hashlib.sha256(BARE_TOKEN.encode()).hexdigest()[:12]
TOKENS = {"acme": ACME_TOKEN, "globex": GLOBEX_TOKEN, BARE_TENANT: BARE_TOKEN}


# --- the token format --------------------------------------------------------------------------------------


def test_entries_name_their_tenant_and_a_bare_token_is_a_tenant_named_by_its_hash():
    assert parse_token_entry("acme:tok-a") == ("acme", "tok-a")
    assert parse_token_entry("acme:a:b:c") == ("acme", "a:b:c")  # a token may hold colons after its tenant
    assert parse_token_entry(BARE_TOKEN) == (BARE_TENANT, BARE_TOKEN)
    assert bare_token_tenant(BARE_TOKEN) == BARE_TENANT and BARE_TOKEN not in BARE_TENANT
    assert tenant_tokens(["acme:one", "acme:two", "acme:one"]) == [("acme", "one"), ("acme", "two"), ("acme", "one")]


@pytest.mark.parametrize(
    "entries, message",
    [
        ("acme corp:sekrit-1", "entry 1 is 'tenant:token' with an invalid tenant name"),
        ("ok:x,:sekrit-1", "entry 2 is 'tenant:token' with an invalid tenant name"),
        (f"{'t' * 65}:sekrit-1", "a tenant name is 1 to 64 letters, digits, '.', '_' or '-'"),
        ("acme:", "entry 1 (tenant 'acme') has no token after the ':'"),
        ("acme:sekrit-1,globex:sekrit-1", "gives one token to two tenants ('acme' and 'globex')"),
    ],
)
def test_bad_token_entries_are_clear_settings_errors_without_the_secret(entries, message):
    with pytest.raises(ValueError) as raised:
        Settings(auth_tokens=entries)
    assert message in str(raised.value) and "FACTCHECK_AUTH_TOKENS" in str(raised.value)
    assert "sekrit-1" not in str(raised.value)


def test_the_token_of_a_tenant_entry_is_a_secret_to_mask():
    settings = Settings(auth_tokens=AUTH_TOKENS)
    assert {ACME_TOKEN, GLOBEX_TOKEN, BARE_TOKEN} <= set(settings.secrets())
    assert settings.max_concurrent_runs_per_tenant == 0  # no per-tenant limit unless set


def test_the_interceptor_knows_each_tokens_tenant():
    interceptor = BearerTokenCheck(AUTH_TOKENS.split(","))
    assert [interceptor.tenant_of(token) for token in (ACME_TOKEN, GLOBEX_TOKEN, BARE_TOKEN)] == [
        "acme",
        "globex",
        BARE_TENANT,
    ]
    assert interceptor.tenant_of(f"acme:{ACME_TOKEN}") is None  # callers send the token, not the entry
    assert interceptor.tenant_of("tok-a") is None and interceptor.tenant_of(None) is None


# --- the stores, per tenant ----------------------------------------------------------------------------------


@pytest.fixture
def stores(database_url):
    stage_store = StageStore(database_url)
    yield stage_store, KnowledgeStore(stage_store.engine)
    stage_store.close()


def test_a_run_is_seen_only_by_its_tenant(stores):
    store, _ = stores
    store.create_message("run-a", "c", "q", {}, tenant_id="acme")
    store.create_message("run-g", "c", "q", {}, tenant_id="globex")
    store.save_stage("run-a", "extract", 1, "m", "extractor", "", {"claims": []}, 1)
    assert store.get_message("run-a", tenant_id="acme").tenant_id == "acme"
    assert store.get_message("run-a", tenant_id="globex") is None
    assert store.get_message("run-a", tenant_id=ANY_TENANT).tenant_id == "acme"  # the gateway's own bookkeeping
    assert [r.id for r in store.list_messages(10, None, tenant_id="acme")[0]] == ["run-a"]
    assert [r.id for r in store.list_messages(10, None, tenant_id="globex")[0]] == ["run-g"]
    assert store.list_messages(10, None, tenant_id="initech") == ([], None)
    result = load_result(store, "run-a", "acme")
    assert result is not None and result.message_id == "run-a"
    assert load_result(store, "run-a", "globex") is None


TREATY = SourceDocument(
    id="treaty",
    title="The Zorblax Accord",
    url="",
    text="The Zorblax Accord was ratified in 1847 by eleven lunar colonies under Chancellor Vemra Oduya.",
)


def test_documents_ids_and_content_hashes_are_per_tenant(stores):
    _, knowledge = stores
    first = knowledge.add_documents([TREATY], tenant_id="acme")
    second = knowledge.add_documents([TREATY], tenant_id="globex")  # the same document, another tenant
    assert [(a.document_id, a.created) for a in first + second] == [("treaty", True), ("treaty", True)]
    assert knowledge.add_documents([TREATY], tenant_id="globex")[0].created is False  # dedup within a tenant
    # The same id with another text in one tenant replaces (when asked to) only that tenant's document.
    revised = SourceDocument("treaty", "Revised", "", "The Zorblax Accord was ratified in 1848.")
    knowledge.add_documents([revised], tenant_id="globex", replace=True)
    assert [h.text for h in knowledge.search("Zorblax Accord ratified", 5, tenant_id="acme").hits] == [TREATY.text]
    assert [h.text for h in knowledge.search("Zorblax Accord ratified", 5, tenant_id="globex").hits] == [revised.text]
    assert knowledge.search("Zorblax Accord", 5, tenant_id="initech").hits == []
    assert not knowledge.has_documents(tenant_id="initech") and knowledge.has_documents(tenant_id="acme")
    assert [d.title for d in knowledge.list_documents(10, None, tenant_id="globex")[0]] == ["Revised"]

    with pytest.raises(LookupError):
        knowledge.delete_document("treaty", tenant_id="initech")
    assert knowledge.delete_document("treaty", tenant_id="globex") == 1
    assert knowledge.search("Zorblax Accord", 5, tenant_id="globex").hits == []
    assert [h.document.id for h in knowledge.search("Zorblax Accord", 5, tenant_id="acme").hits] == ["treaty"]


def test_retrieval_searches_only_the_given_tenants_documents(stores):
    _, knowledge = stores
    knowledge.add_documents([TREATY], tenant_id="acme")
    retriever = Retriever(knowledge)
    query = {"q": "When was the Zorblax Accord ratified?"}
    assert retriever.should_run([], True, tenant_id="acme") and not retriever.should_run([], True, tenant_id="globex")
    found = retriever.retrieve(query, (), use_store=True, top_k=3, tenant_id="acme")
    assert [p.source_id for p in found.passages] == ["treaty"]
    assert retriever.retrieve(query, (), use_store=True, top_k=3, tenant_id="globex").passages == []


# --- the per-tenant run limit --------------------------------------------------------------------------------


async def test_the_per_tenant_limit_refuses_only_the_busy_tenant():
    limit = RunLimit(3, per_tenant=2)
    first = await limit.admit(as_context(RpcContextStub()), "acme")
    await limit.admit(as_context(RpcContextStub()), "acme")
    with pytest.raises(ResourceExhausted) as refused:
        await limit.admit(as_context(RpcContextStub()), "acme")
    assert refused.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert str(refused.value) == tenant_busy_message(2, "acme")
    assert refused.value.reason == "TENANT_RUN_LIMIT_REACHED" and refused.value.retry_after_s
    await limit.admit(as_context(RpcContextStub()), "globex")  # another tenant still runs
    with pytest.raises(ResourceExhausted) as full:
        await limit.admit(as_context(RpcContextStub()), "initech")
    assert str(full.value) == busy_message(3)  # the gateway's own limit comes first
    assert full.value.reason == "RUN_LIMIT_REACHED"
    first.release()
    assert limit.in_flight == 2 and limit.in_flight_by_tenant == {"acme": 1, "globex": 1}
    await limit.admit(as_context(RpcContextStub()), "acme")


# --- migration 0003 on a database of revision 0002 --------------------------------------------------------

# Frozen shapes of revision 0002's tables (the models have moved on).
MESSAGES_0002 = sa.table(
    "messages",
    *(sa.column(name) for name in ("id", "conversation_id", "question", "status", "title")),
    sa.column("request_config", JSON_DOCUMENT),
    sa.column("created_at", UTCDateTime),
    sa.column("updated_at", UTCDateTime),
)
STAGES_0002 = sa.table(
    "deliberation_stages",
    *(sa.column(name) for name in ("id", "message_id", "stage_type", "stage_order", "model", "role", "content")),
    sa.column("parsed_data", JSON_DOCUMENT),
    sa.column("response_time_ms"),
    sa.column("created_at", UTCDateTime),
)
DOCUMENTS_0002 = sa.table(
    "kb_documents",
    *(sa.column(name) for name in ("id", "title", "url", "text", "content_sha256", "char_count", "passage_count")),
    sa.column("created_at", UTCDateTime),
)
PASSAGES_0002 = sa.table(
    "kb_passages", *(sa.column(name) for name in ("document_id", "chunk_index", "text", "start_offset", "end_offset"))
)
OLD_CLAIMS = [{"id": "claim_1", "claim": "Water boils at 100 degrees Celsius at sea level.", "type": "TECHNICAL"}]
OLD_VERIFICATIONS = [
    {"claimId": "claim_1", "verdict": "VERIFIED", "evidence": "e", "correction": None, "confidence": "HIGH"}
]
OLD_TEXT = "Water boils at 100 degrees Celsius at sea level. Ice melts at 0 degrees."


def _database_at_0002(url: str) -> None:
    """A database created by revision 0002, holding one finished run with its stages and one document."""
    engine = create_db_engine(url, immediate_transactions=True)
    now = datetime.now(UTC)
    try:
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "0002")
        with engine.begin() as connection:
            connection.execute(
                MESSAGES_0002.insert().values(
                    id="old-run", conversation_id="c", question="q?", status="COMPLETE", title="Old run",
                    request_config={"contentSource": "user_provided", "contentToCheck": "Water boils."},
                    created_at=now, updated_at=now,
                )
            )  # fmt: skip
            for stage_type, order, data in [
                ("extract", 1, {"claims": OLD_CLAIMS, "totalClaims": 1}),
                ("verify_0", 10, {"verifications": OLD_VERIFICATIONS}),
                ("report", 99, {"reliabilityScore": 90, "verified": 1, "disputed": 0, "unverifiable": 0}),
            ]:
                connection.execute(
                    STAGES_0002.insert().values(
                        id=str(uuid.uuid4()), message_id="old-run", stage_type=stage_type, stage_order=order,
                        model="m/x", role="r", content=f"{stage_type} text", parsed_data=data, response_time_ms=5,
                        created_at=now,
                    )
                )  # fmt: skip
            connection.execute(
                DOCUMENTS_0002.insert().values(
                    id="old-doc", title="Water", url="", text=OLD_TEXT,
                    content_sha256=hashlib.sha256(OLD_TEXT.encode()).hexdigest(), char_count=len(OLD_TEXT),
                    passage_count=1, created_at=now,
                )
            )  # fmt: skip
            connection.execute(
                PASSAGES_0002.insert().values(
                    document_id="old-doc", chunk_index=0, text=OLD_TEXT, start_offset=0, end_offset=len(OLD_TEXT)
                )
            )
    finally:
        engine.dispose()


def test_an_upgrade_from_0002_keeps_every_run_and_document_for_the_default_tenant(empty_database_url):
    _database_at_0002(empty_database_url)
    upgrade_database(empty_database_url)
    store = StageStore(empty_database_url)
    knowledge = KnowledgeStore(store.engine)
    try:
        record = store.get_message("old-run", tenant_id=DEFAULT_TENANT)
        assert record is not None
        assert (record.tenant_id, record.status, record.title) == (DEFAULT_TENANT, "COMPLETE", "Old run")
        assert store.get_message("old-run", tenant_id="acme") is None
        assert [s.stage_type for s in store.get_stages("old-run")] == ["extract", "verify_0", "report"]
        result = load_result(store, "old-run", DEFAULT_TENANT)
        assert result is not None
        assert [c.claim for c in result.extraction.claims] == [OLD_CLAIMS[0]["claim"]]
        assert result.report.reliability_score == 90 and len(result.verification.checkers) == 1
        assert [r.id for r in store.list_messages(10, None, tenant_id=DEFAULT_TENANT)[0]] == ["old-run"]

        # The document is the default tenant's and still found: the full-text index came through.
        [hit] = knowledge.search("water boils", 5, tenant_id=DEFAULT_TENANT).hits
        assert (hit.document.id, hit.text) == ("old-doc", OLD_TEXT)
        assert knowledge.search("water boils", 5, tenant_id="acme").hits == []
        # Content hashes are unique per tenant now; the index keeps following inserts and deletes.
        [copy] = knowledge.add_documents([SourceDocument("old-doc", "Water", "", OLD_TEXT)], tenant_id="acme")
        assert copy.created
        assert knowledge.delete_document("old-doc", tenant_id=DEFAULT_TENANT) == 1
        assert knowledge.search("water boils", 5, tenant_id=DEFAULT_TENANT).hits == []
        assert [h.document.id for h in knowledge.search("water boils", 5, tenant_id="acme").hits] == ["old-doc"]
    finally:
        store.close()


def test_a_downgrade_is_refused_while_other_tenants_own_rows(empty_database_url):
    _database_at_0002(empty_database_url)
    upgrade_database(empty_database_url)
    engine = create_db_engine(empty_database_url, immediate_transactions=True)
    try:
        with engine.begin() as connection:  # only the default tenant: back to 0002, rows kept
            command.downgrade(alembic_config(connection), "0002")
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT COUNT(*) FROM deliberation_stages")) == 3
            assert connection.scalar(text("SELECT COUNT(*) FROM kb_passages")) == 1
        upgrade_database(empty_database_url)
        store = StageStore(empty_database_url)
        store.create_message("acme-run", "c", "q", {}, tenant_id="acme")
        store.close()
        with pytest.raises(RuntimeError, match="messages holds rows of tenants other than 'default'"):
            with engine.begin() as connection:
                command.downgrade(alembic_config(connection), "0002")
    finally:
        engine.dispose()
    upgrade_database(empty_database_url)  # still at the newest revision, nothing lost
    store = StageStore(empty_database_url)
    try:
        assert store.get_message("acme-run", tenant_id="acme") is not None
        assert len(store.get_stages("old-run")) == 3
    finally:
        store.close()


# --- end to end: the suite with three tokens -----------------------------------------------------------------


@pytest.fixture(scope="module")
def tenant_suite(fake_models, suite_database):
    gateway = {"FACTCHECK_AUTH_TOKENS": AUTH_TOKENS, "FACTCHECK_MAX_CONCURRENT_RUNS_PER_TENANT": "1"}
    running = start_suite(suite_environment(fake_models, suite_database), per_service={"gateway": gateway})
    yield running
    running.stop()


@pytest.fixture(scope="module")
def open_gateway(tenant_suite, fake_models, suite_database):
    """A second gateway without authentication on the same database and services: everything is "default"."""
    env = {
        **suite_environment(fake_models, suite_database),
        "FACTCHECK_EXTRACTOR_TARGET": tenant_suite.services["extractor"].target,
        "FACTCHECK_CHECKER_TARGET": tenant_suite.services["checker"].target,
        "FACTCHECK_REPORTER_TARGET": tenant_suite.services["reporter"].target,
    }
    gateway = start_service("gateway", env)
    yield gateway
    gateway.stop()


def as_tenant(tenant: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {TOKENS[tenant]}"),)


@pytest.fixture
async def channel(tenant_suite, fake_models):
    fake_models.reset()
    async with grpc.aio.insecure_channel(tenant_suite.gateway_target) as opened:
        yield opened


@pytest.fixture
def stage_store(suite_database):
    store = StageStore(suite_database)
    yield store
    store.close()


async def run_as(gateway, tenant: str, request) -> list[factcheck_pb2.FactCheckEvent]:
    return [response.event async for response in gateway.Run(request, timeout=60, metadata=as_tenant(tenant))]


async def not_found(call) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    return raised.value.details() or ""


@pytest.mark.e2e
async def test_each_tenant_sees_only_its_own_runs(channel, stage_store, tenant_suite):
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
    ids = {}
    for tenant in TOKENS:
        events = await run_as(gateway, tenant, content_request())
        assert kinds(events)[-1] == "complete", tenant_suite.logs()
        ids[tenant] = events[0].message_id

    for tenant in TOKENS:
        listing = await gateway.ListResults(factcheck_pb2.ListResultsRequest(page_size=100), metadata=as_tenant(tenant))
        listed = [summary.message_id for summary in listing.results]
        assert ids[tenant] in listed
        assert all(stage_store.get_message(i, tenant_id=tenant) is not None for i in listed)  # only its own
        own = await gateway.GetResult(
            factcheck_pb2.GetResultRequest(message_id=ids[tenant]), metadata=as_tenant(tenant)
        )
        assert own.result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
        unknown_id = str(uuid.uuid4())
        unknown = await not_found(
            gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=unknown_id), metadata=as_tenant(tenant))
        )
        for other, other_id in ids.items():
            if other != tenant:
                assert other_id not in listed
                details = await not_found(
                    gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=other_id), metadata=as_tenant(tenant))
                )
                assert details == unknown.replace(unknown_id, other_id)  # not a hint that the id exists

    # Rows carry the tenant, and a bare token's tenant is a hash, never the secret itself.
    for tenant, message_id in ids.items():
        assert stage_store.get_message(message_id, tenant_id=ANY_TENANT).tenant_id == tenant
    with stage_store.engine.connect() as connection:
        stored = set(connection.scalars(text("SELECT DISTINCT tenant_id FROM messages")))
    assert not stored & {ACME_TOKEN, GLOBEX_TOKEN, BARE_TOKEN}
    assert not any(token in tenant_suite.logs() for token in (ACME_TOKEN, GLOBEX_TOKEN, BARE_TOKEN))


@pytest.mark.e2e
async def test_watch_cancel_and_request_ids_are_per_tenant(channel, fake_models):
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
    request_id = str(uuid.uuid4())
    request = content_request()
    request.request_id = request_id
    acme = await run_as(gateway, "acme", request)
    # The same key from another tenant is that tenant's own run, not an attachment to acme's.
    globex = await run_as(gateway, "globex", request)
    assert kinds(acme)[-1] == kinds(globex)[-1] == "complete"
    assert acme[0].message_id != globex[0].message_id

    watched = [
        response.event
        async for response in gateway.Watch(
            factcheck_pb2.WatchRequest(message_id=acme[0].message_id), metadata=as_tenant("acme")
        )
    ]
    assert watched == acme
    unknown_id = str(uuid.uuid4())
    for call in (
        lambda message_id: gateway.Watch(
            factcheck_pb2.WatchRequest(message_id=message_id), metadata=as_tenant("globex")
        ).read(),
        lambda message_id: gateway.Cancel(
            factcheck_pb2.CancelRequest(message_id=message_id), metadata=as_tenant("globex")
        ),
    ):
        unknown = await not_found(call(unknown_id))
        assert await not_found(call(acme[0].message_id)) == unknown.replace(unknown_id, acme[0].message_id)


def _source(document_id: str, body: str) -> common_pb2.Source:
    return common_pb2.Source(id=document_id, title=document_id.title(), text=body)


@pytest.mark.e2e
async def test_each_tenant_sees_only_its_own_documents(channel, stage_store):
    knowledge = knowledge_pb2_grpc.KnowledgeServiceStub(channel)
    marker = uuid.uuid4().hex[:8]
    secret = _source(f"acme-plan-{marker}", f"Project Quillfeather {marker} launches on 3 March with nine engineers.")
    added = await knowledge.AddDocuments(
        knowledge_pb2.AddDocumentsRequest(documents=[secret]), metadata=as_tenant("acme")
    )
    assert added.documents[0].created

    search = knowledge_pb2.SearchRequest(query=f"Project Quillfeather {marker} launch", top_k=5)
    found = await knowledge.Search(search, metadata=as_tenant("acme"))
    assert [p.source_id for p in found.passages] == [secret.id]
    for other in ("globex", BARE_TENANT):
        assert list((await knowledge.Search(search, metadata=as_tenant(other))).passages) == []
        listing = await knowledge.ListDocuments(
            knowledge_pb2.ListDocumentsRequest(page_size=100), metadata=as_tenant(other)
        )
        assert secret.id not in [d.id for d in listing.documents]
        unknown = await not_found(
            knowledge.DeleteDocument(
                knowledge_pb2.DeleteDocumentRequest(document_id="no-such"), metadata=as_tenant(other)
            )
        )
        details = await not_found(
            knowledge.DeleteDocument(
                knowledge_pb2.DeleteDocumentRequest(document_id=secret.id), metadata=as_tenant(other)
            )
        )
        assert details == unknown.replace("no-such", secret.id)
    assert [p.source_id for p in (await knowledge.Search(search, metadata=as_tenant("acme"))).passages] == [secret.id]

    # The same document added by two tenants is stored twice, once for each.
    shared = _source(f"shared-{marker}", f"The shared handbook {marker} says tea breaks are at ten.")
    for tenant in ("acme", "globex"):
        again = await knowledge.AddDocuments(
            knowledge_pb2.AddDocumentsRequest(documents=[shared]), metadata=as_tenant(tenant)
        )
        assert [(d.document_id, d.created) for d in again.documents] == [(shared.id, True)]
    digest = hashlib.sha256(shared.text.encode()).hexdigest()
    with stage_store.engine.connect() as connection:
        owners = connection.execute(
            text("SELECT tenant_id FROM kb_documents WHERE content_sha256 = :digest ORDER BY tenant_id"),
            {"digest": digest},
        ).scalars()
        assert list(owners) == ["acme", "globex"]
    deleted = await knowledge.DeleteDocument(
        knowledge_pb2.DeleteDocumentRequest(document_id=shared.id), metadata=as_tenant("globex")
    )
    assert deleted.passages_deleted == 1
    listing = await knowledge.ListDocuments(
        knowledge_pb2.ListDocumentsRequest(page_size=100), metadata=as_tenant("acme")
    )
    assert shared.id in [d.id for d in listing.documents]  # acme's copy is untouched


ACCORD = "The Zorblax Accord was ratified in 1847 by eleven lunar colonies under Chancellor Vemra Oduya."
ACCORD_CONTENT = "The Zorblax Accord was ratified in 1847. Water boils at lower temperatures at high altitude."
ACCORD_ONLY = "Vemra Oduya"  # in the document, never in the content or the question


@pytest.mark.e2e
async def test_retrieval_during_a_run_never_returns_another_tenants_passages(channel, fake_models, tenant_suite):
    knowledge = knowledge_pb2_grpc.KnowledgeServiceStub(channel)
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
    document = _source("zorblax-accord", ACCORD)
    await knowledge.AddDocuments(knowledge_pb2.AddDocumentsRequest(documents=[document]), metadata=as_tenant("acme"))
    # globex has documents of its own, so retrieval does run for it, over its own store only.
    await knowledge.AddDocuments(
        knowledge_pb2.AddDocumentsRequest(
            documents=[_source("globex-accord", "The Globex Accord covers lunar mining.")]
        ),
        metadata=as_tenant("globex"),
    )

    events = await run_as(gateway, "globex", content_request(ACCORD_CONTENT, use_knowledge_store=True))
    assert kinds(events)[-1] == "complete", tenant_suite.logs()
    evidence = payload(events, "evidence_retrieved")
    assert "zorblax-accord" not in {p.source_id for p in evidence.passages}
    generated = await run_as(
        gateway,
        "globex",
        factcheck_pb2.RunRequest(
            question="When was the Zorblax Accord ratified, and under whom?",
            mode=factcheck_pb2.MODE_FACT_CHECK,
            mode_config=factcheck_pb2.FactCheckConfig(generator_model="fake/generator"),
        ),
    )
    assert kinds(generated)[-1] == "complete"
    prompts = [request.prompt for request in fake_models.requests]
    assert {"generate", "verify"} <= {request.kind for request in fake_models.requests}
    assert not any(ACCORD_ONLY in prompt for prompt in prompts)
    stored = await gateway.GetResult(
        factcheck_pb2.GetResultRequest(message_id=events[0].message_id), metadata=as_tenant("globex")
    )
    assert "zorblax-accord" not in {p.source_id for p in stored.result.evidence.passages}

    # The same run as acme does find it: the check above would see a leak.
    fake_models.reset()
    own = await run_as(gateway, "acme", content_request(ACCORD_CONTENT, use_knowledge_store=True))
    assert "zorblax-accord" in {p.source_id for p in payload(own, "evidence_retrieved").passages}
    assert any(ACCORD_ONLY in request.prompt for request in fake_models.requests if request.kind == "verify")


async def _first_event(call) -> factcheck_pb2.FactCheckEvent:
    async for response in call:
        return response.event
    raise AssertionError("no event")


@pytest.mark.e2e
async def test_a_busy_tenant_is_refused_while_another_tenant_still_runs(channel, fake_models, tenant_suite):
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(channel)
    fake_models.set_latency("report", 2.0)
    first = gateway.Run(content_request(), timeout=60, metadata=as_tenant("acme"))
    started = await _first_event(first)
    first.cancel()  # the caller goes away; the run goes on and keeps acme's slot

    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await _first_event(gateway.Run(content_request(), timeout=10, metadata=as_tenant("acme")))
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refused.value.details() == tenant_busy_message(1, "acme")
    assert "FACTCHECK_MAX_CONCURRENT_RUNS_PER_TENANT" in (refused.value.details() or "")

    other = await run_as(gateway, "globex", content_request())  # while acme's run is still going
    assert kinds(other)[-1] == "complete", tenant_suite.logs()
    fake_models.set_latency("report", 0)

    deadline = time.monotonic() + 30
    while True:  # acme's first run is stored as COMPLETE, then its slot is free again
        result = await gateway.GetResult(
            factcheck_pb2.GetResultRequest(message_id=started.message_id), metadata=as_tenant("acme")
        )
        if result.result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert result.result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
    await asyncio.sleep(0.2)
    assert kinds(await run_as(gateway, "acme", content_request()))[-1] == "complete"


@pytest.mark.e2e
async def test_without_authentication_everything_is_the_default_tenant(open_gateway, fake_models, stage_store):
    fake_models.reset()
    async with grpc.aio.insecure_channel(open_gateway.target) as opened:
        gateway = factcheck_pb2_grpc.FactCheckServiceStub(opened)
        knowledge = knowledge_pb2_grpc.KnowledgeServiceStub(opened)
        events = [response.event async for response in gateway.Run(content_request(CONTENT), timeout=60)]
        assert kinds(events)[-1] == "complete", "\n".join(open_gateway.output)
        message_id = events[0].message_id
        assert stage_store.get_message(message_id, tenant_id=DEFAULT_TENANT) is not None
        result = await gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=message_id))
        assert result.result.status == factcheck_pb2.MESSAGE_STATUS_COMPLETE
        listed = [
            s.message_id for s in (await gateway.ListResults(factcheck_pb2.ListResultsRequest(page_size=100))).results
        ]
        assert message_id in listed
        assert all(stage_store.get_message(i, tenant_id=DEFAULT_TENANT) is not None for i in listed)  # no acme runs

        marker = uuid.uuid4().hex[:8]
        document = _source(f"open-{marker}", f"The open handbook {marker} lists fourteen fire exits.")
        await knowledge.AddDocuments(knowledge_pb2.AddDocumentsRequest(documents=[document]))
        found = await knowledge.Search(knowledge_pb2.SearchRequest(query=f"open handbook {marker} fire exits"))
        assert [p.source_id for p in found.passages] == [document.id]
        accord = await knowledge.Search(knowledge_pb2.SearchRequest(query="Zorblax Accord Vemra Oduya"))
        assert "zorblax-accord" not in {p.source_id for p in accord.passages}  # acme's, if that test ran first


# --- end to end: the command line, per tenant ------------------------------------------------------------------

FACTCHECK = Path(sys.executable).parent / "factcheck"


def factcheck_as(tenant_suite, tenant: str | None, *args: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith("FACTCHECK_")}
    # This checkout's code, also where the console script's package is installed from another one.
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update({"FACTCHECK_GATEWAY_TARGET": tenant_suite.gateway_target, "COLUMNS": "250"})
    if tenant is not None:
        env["FACTCHECK_GATEWAY_TOKEN"] = TOKENS[tenant]
    return subprocess.run([str(FACTCHECK), *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.e2e
def test_the_command_line_works_per_tenant(tenant_suite, fake_models, tmp_path):
    fake_models.reset()
    checked = factcheck_as(tenant_suite, "acme", "check", "--json", CONTENT)
    assert checked.returncode == 0, checked.stderr
    message_id = json.loads(checked.stdout.splitlines()[0])["messageId"]

    assert message_id in factcheck_as(tenant_suite, "acme", "list", "--page-size", "100", "--wide").stdout
    assert message_id not in factcheck_as(tenant_suite, "globex", "list", "--page-size", "100", "--wide").stdout
    assert factcheck_as(tenant_suite, "acme", "show", message_id).returncode == 0
    hidden = factcheck_as(tenant_suite, "globex", "show", message_id)
    assert hidden.returncode == 5
    assert hidden.stderr.strip() == f"factcheck: not found: No fact-check with message_id {message_id!r}"

    note = tmp_path / f"note-{uuid.uuid4().hex[:8]}.txt"
    note.write_text("The Brackenridge depot stores exactly 412 snow ploughs.")
    assert "1 added" in factcheck_as(tenant_suite, BARE_TENANT, "kb", "add", str(note)).stdout
    assert str(note.name) in factcheck_as(tenant_suite, BARE_TENANT, "kb", "list", "--page-size", "100").stdout
    assert str(note.name) not in factcheck_as(tenant_suite, "acme", "kb", "list", "--page-size", "100").stdout
    assert "412 snow ploughs" in factcheck_as(tenant_suite, BARE_TENANT, "kb", "search", "Brackenridge depot").stdout
    assert "412 snow ploughs" not in factcheck_as(tenant_suite, "acme", "kb", "search", "Brackenridge depot").stdout
    refused = factcheck_as(tenant_suite, "acme", "kb", "delete", note.name)
    assert refused.returncode == 5 and "not found" in refused.stderr
    assert factcheck_as(tenant_suite, BARE_TENANT, "kb", "delete", note.name).returncode == 0

    anonymous = factcheck_as(tenant_suite, None, "list")
    assert anonymous.returncode == 3 and "FACTCHECK_GATEWAY_TOKEN" in anonymous.stderr
