"""Migration 0017: a run's request stored once, in request_config, on SQLite and PostgreSQL.

Runs stored by 0016's schema (request_config and the request's bytes) are resumed after the upgrade with the
plan and budget their bytes gave; a downgrade writes the bytes again, and runs stored before runs were durable
stay unresumable both ways.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy import create_engine, inspect
from sqlalchemy.dialects import postgresql

from factcheck.kit.settings import Settings
from factcheck.v1 import common_pb2, council_pb2, entailment_pb2, factcheck_pb2, usage_pb2
from factcheck_gateway.ledger.budget import run_budget
from factcheck_gateway.mode_dispatch import resume_request, stored_config, validate_run_request
from factcheck_gateway.store import StageStore, upgrade_database
from factcheck_gateway.store.migrate import alembic_config
from tests.conftest import CHECKERS, content_request, suite_environment
from tests.processes import start_suite

SETTINGS = Settings(
    # An endpoint for every provider (planning only asks that one is configured; nothing calls it).
    model_base_url="http://127.0.0.1:9/v1",
    default_generator_model="local/generator",
    default_extractor_model="local/extractor",
    default_checker_models=["local/checker"],
    default_reporter_model="local/reporter",
    stage_timeout_ms=120_000,
)
TENANT = "acme"
JSON_DOCUMENT = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

# Requests with every default already resolved: what 0016's gateways stored as request_proto.
REQUESTS = {
    "fact-check": factcheck_pb2.RunRequest(
        question="Does water boil at 100 C?",
        mode=factcheck_pb2.MODE_FACT_CHECK,
        conversation_id="conv-1",
        request_id="req-1",
        budget=usage_pb2.RunBudget(max_cost_usd=0.25, max_tokens=5000),
        mode_config=factcheck_pb2.FactCheckConfig(
            content_to_check="Water boils at 100 C at sea level.",
            extractor_model="local/extractor",
            checker_models=["local/checker", "openai/o3"],
            reporter_model="local/reporter",
            max_content_length=20_000,
            timeout_ms=120_000,
            evidence_top_k=3,
            use_knowledge_store=True,
            use_cache=False,
            sources=[
                common_pb2.Source(id="s1", title="Physics", text="Water boils at 100 C.", published_at="2020-01-01")
            ],
        ),
    ),
    "council": factcheck_pb2.RunRequest(
        question="Which answer holds?",
        mode=factcheck_pb2.MODE_COUNCIL,
        conversation_id="conv-2",
        council_config=council_pb2.CouncilConfig(
            responses=[
                council_pb2.NamedResponse(name="alpha", text="The sky is blue."),
                council_pb2.NamedResponse(name="beta", text="The sky is green."),
            ],
            fact_checker_models=["local/checker"],
            reporter_model="local/reporter",
            timeout_ms=120_000,
            exclude_self_ratings=False,
            use_knowledge_store=False,
        ),
    ),
    "entailment": factcheck_pb2.RunRequest(
        question="Entailment",
        mode=factcheck_pb2.MODE_ENTAILMENT,
        conversation_id="conv-3",
        budget=usage_pb2.RunBudget(max_tokens=100),
        entailment_config=entailment_pb2.EntailmentConfig(
            items=[entailment_pb2.EntailmentItem(claim="It rains.", source_excerpt="Rain fell.", source_type="news")],
            extractor_model="local/extractor",
            reliability_model="local/extractor",
            judge_model="local/checker",
            auditor_model="local/checker",
            timeout_ms=120_000,
        ),
    ),
}
# What 0017 adds to each run's request_config: what only the bytes held, and the RESUMABLE key.
ADDED = {
    "fact-check": {"budget": {"maxCostUsd": 0.25, "maxTokens": "5000"}, "useCache": False, "resumable": True},
    "council": {
        "responses": [{"name": "alpha", "text": "The sky is blue."}, {"name": "beta", "text": "The sky is green."}],
        "resumable": True,
    },
    "entailment": {"budget": {"maxTokens": "100"}, "resumable": True},
}
# A run stored before runs were durable: no request bytes.
OLD_CONFIG = {"contentSource": "user_provided", "contentToCheck": "Old text."}

MESSAGES_0016 = sa.table(
    "messages",
    sa.column("id", sa.String),
    sa.column("tenant_id", sa.String),
    sa.column("conversation_id", sa.String),
    sa.column("question", sa.Text),
    sa.column("request_config", JSON_DOCUMENT),
    sa.column("status", sa.String),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("updated_at", sa.DateTime(timezone=True)),
    sa.column("request_id", sa.String),
    sa.column("request_proto", sa.LargeBinary),
)


def plan_of(request: factcheck_pb2.RunRequest):
    return validate_run_request(request, SETTINGS, tenant_id=TENANT)


def _store_0016_runs(connection: sa.Connection) -> None:
    now = datetime.now(UTC)
    rows = [
        {
            "id": name,
            "tenant_id": TENANT,
            "conversation_id": request.conversation_id,
            "question": request.question,
            "request_config": plan_of(request).request_config(),
            "status": "RUNNING",  # no lease: abandoned
            "created_at": now,
            "updated_at": now,
            "request_id": request.request_id if request.HasField("request_id") else None,
            "request_proto": request.SerializeToString(deterministic=True),
        }
        for name, request in REQUESTS.items()
    ]
    rows.append({**rows[0], "id": "old", "request_config": OLD_CONFIG, "request_id": None, "request_proto": None})
    connection.execute(sa.insert(MESSAGES_0016), rows)


def _migrate(url: str, revision: str, *, down: bool = False) -> None:
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            (command.downgrade if down else command.upgrade)(alembic_config(connection), revision)
    finally:
        engine.dispose()


def _assert_upgraded(url: str, *, claim: bool) -> None:
    engine = create_engine(url)
    try:
        assert "request_proto" not in {column["name"] for column in inspect(engine).get_columns("messages")}
    finally:
        engine.dispose()
    store = StageStore(url)
    try:
        for name, request in REQUESTS.items():
            record = store.get_message(name, tenant_id=TENANT)
            assert record is not None
            plan = plan_of(request)
            assert record.request_config == {**plan.request_config(), **ADDED[name]}
            # The one spelling: what a new run of the same request stores.
            assert record.request_config == stored_config(request, plan)
        old = store.get_message("old", tenant_id=TENANT)
        assert old is not None and old.request_config == OLD_CONFIG and resume_request(old) is None

        # Resumed: the abandoned runs are claimed (once: the lease holds), and each plans as its stored bytes
        # did, with their budget.
        if claim:
            claimed = {record.id: record for record in store.claim_abandoned("gw-new", 30, 10)}
            assert set(claimed) == {*REQUESTS, "old"}
        else:
            stored = {name: store.get_message(name, tenant_id=TENANT) for name in (*REQUESTS, "old")}
            claimed = {name: record for name, record in stored.items() if record is not None}
        assert not claimed["old"].resumable
        for name, request in REQUESTS.items():
            resumed = resume_request(claimed[name])
            assert resumed is not None
            assert plan_of(resumed) == plan_of(request)
            assert run_budget(resumed, SETTINGS, TENANT) == run_budget(request, SETTINGS, TENANT)
            assert resumed.request_id == request.request_id
    finally:
        store.close()


@pytest.mark.parametrize("empty_database_url", ["sqlite", "postgresql"], indirect=True)
def test_runs_stored_with_their_request_bytes_resume_after_the_upgrade_and_downgrade_back(empty_database_url):
    url = empty_database_url
    _migrate(url, "0016")
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            _store_0016_runs(connection)
    finally:
        engine.dispose()

    upgrade_database(url)
    _assert_upgraded(url, claim=True)

    _migrate(url, "0016", down=True)
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            rows = {
                row.id: row
                for row in connection.execute(
                    sa.select(MESSAGES_0016.c.id, MESSAGES_0016.c.request_config, MESSAGES_0016.c.request_proto)
                )
            }
    finally:
        engine.dispose()
    assert rows["old"].request_config == OLD_CONFIG and rows["old"].request_proto is None
    for name, request in REQUESTS.items():
        assert rows[name].request_config == plan_of(request).request_config()
        written = factcheck_pb2.RunRequest.FromString(rows[name].request_proto)
        assert plan_of(written) == plan_of(request)
        assert written.budget == request.budget
    fact_check = factcheck_pb2.RunRequest.FromString(rows["fact-check"].request_proto)
    assert fact_check.mode_config.HasField("use_cache") and not fact_check.mode_config.use_cache

    # And up again: the same config as the first upgrade.
    upgrade_database(url)
    _assert_upgraded(url, claim=False)


def test_a_request_without_the_callers_fields_stores_the_plans_config_and_the_resumable_key():
    request = factcheck_pb2.RunRequest(question="q", mode=factcheck_pb2.MODE_FACT_CHECK)
    plan = plan_of(request)
    assert stored_config(request, plan) == {**plan.request_config(), "resumable": True}


@pytest.mark.e2e
@pytest.mark.parametrize("empty_database_url", ["sqlite", "postgresql"], indirect=True)
def test_a_run_left_running_by_the_old_schema_is_resumed_to_its_end_by_an_upgraded_gateway(
    empty_database_url, fake_models
):
    """A gateway of 0016 stored the run (its request's bytes) and died: the next gateway upgrades and finishes it."""
    url = empty_database_url
    _migrate(url, "0016")
    env = suite_environment(fake_models, url)
    settings = Settings(
        model_base_url=fake_models.base_url,
        default_generator_model=env["FACTCHECK_DEFAULT_GENERATOR_MODEL"],
        default_extractor_model=env["FACTCHECK_DEFAULT_EXTRACTOR_MODEL"],
        default_checker_models=CHECKERS,
        default_reporter_model=env["FACTCHECK_DEFAULT_REPORTER_MODEL"],
    )
    request = content_request(
        checker_models=CHECKERS,
        extractor_model="fake/extractor",
        reporter_model="fake/reporter",
        max_content_length=20_000,
        timeout_ms=settings.stage_timeout_ms,
        evidence_top_k=settings.evidence_top_k,
        use_knowledge_store=True,
    )
    request.budget.max_tokens = 1_000_000
    plan = validate_run_request(request, settings, tenant_id="default")
    now = datetime.now(UTC)
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(
                sa.insert(MESSAGES_0016).values(
                    id="left-running",
                    tenant_id="default",
                    conversation_id="conv",
                    question=request.question,
                    request_config=plan.request_config(),
                    status="RUNNING",
                    created_at=now,
                    updated_at=now,
                    request_proto=request.SerializeToString(deterministic=True),
                )
            )
    finally:
        engine.dispose()

    suite = start_suite({**env, "FACTCHECK_RECOVERY_INTERVAL_S": "0.3"})
    store = StageStore(url)
    try:
        give_up = time.monotonic() + 60
        while (record := store.get_message("left-running", tenant_id="default")) is None or record.status == "RUNNING":
            assert time.monotonic() < give_up, suite.logs()
            time.sleep(0.2)
        assert (record.status, record.resume_count) == ("COMPLETE", 1), suite.logs()
        assert record.request_config == {**plan.request_config(), "budget": {"maxTokens": "1000000"}, "resumable": True}
        assert [stage.model for stage in store.get_stages("left-running") if stage.stage_type.startswith("verify")] == [
            *CHECKERS
        ]
    finally:
        store.close()
        suite.stop()
