"""The stage store, its migrations and loadFactCheckResult, on SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.exc import IntegrityError

from factcheck.core.domain import ClaimVerification, ExtractedClaim, VerdictSummary
from factcheck.kit.security.tenants import DEFAULT_TENANT
from factcheck.v1 import common_pb2, factcheck_pb2
from factcheck_gateway.consensus import calculate_consensus
from factcheck_gateway.mode_dispatch import load_result, message_summary
from factcheck_gateway.modes.fact_check.stages import (
    ROLE_CHECKER,
    ROLE_EXTRACTOR,
    ROLE_GENERATOR,
    ROLE_REPORTER,
    STAGE_EXTRACT,
    STAGE_GENERATE,
    STAGE_REPORT,
    verify_stage,
)
from factcheck_gateway.schema import Base, include_in_schema_comparison
from factcheck_gateway.store import StageStore, upgrade_database
from factcheck_gateway.store import stage_store as store_module
from factcheck_gateway.store.migrate import alembic_config

TENANT = DEFAULT_TENANT

SPEC_COLUMNS = {
    "id", "message_id", "stage_type", "stage_order", "model", "role",
    "content", "parsed_data", "response_time_ms", "created_at",
}  # fmt: skip


@pytest.fixture
def store(database_url):
    s = StageStore(database_url)
    yield s
    s.close()


def postgres_only(fixture: str = "database_url"):
    return pytest.mark.parametrize(fixture, ["postgresql"], indirect=True)


# --- sample runs (the row contract the gateway writes) ------------------------------------------------

CLAIMS = [
    ExtractedClaim("claim_1", "ARPANET was funded by the DoD in 1969", "ctx 1", "DATE", 0, 36),
    ExtractedClaim("claim_2", "The first message was 'LO'", "ctx 2", "ATTRIBUTION"),
    ExtractedClaim("claim_3", "Berners-Lee invented the WWW in 1989", "ctx 3", "DATE"),
]
CHECKERS = ["google/gemini-2.5-pro", "openai/o3", "anthropic/claude-opus-4-6"]
FIX = "Proposed in 1989; first website 1991."
# Checker -> verdicts for claim_1..claim_3; the last checker skipped claim_3.
VERDICTS: list[list[tuple[str, str, str | None]]] = [
    [("VERIFIED", "HIGH", None), ("VERIFIED", "HIGH", None), ("DISPUTED", "MEDIUM", FIX)],
    [("VERIFIED", "HIGH", None), ("DISPUTED", "LOW", "It was 'LOGIN'"), ("DISPUTED", "HIGH", FIX)],
    [("VERIFIED", "MEDIUM", None), ("VERIFIED", "MEDIUM", None)],
]


def checker_verifications(index: int) -> list[ClaimVerification]:
    return [
        ClaimVerification(f"claim_{n}", verdict, f"evidence {n}", correction, confidence, CHECKERS[index])
        for n, (verdict, confidence, correction) in enumerate(VERDICTS[index], start=1)
    ]


def request_config(source: str, content: str | None = None) -> dict:
    config = {
        "contentSource": source,
        "extractorModel": "anthropic/claude-opus-4-6",
        "checkerModels": CHECKERS,
        "reporterModel": "anthropic/claude-opus-4-6",
        "maxContentLength": 20000,
        "timeoutMs": 120000,
    }
    if source == "generated":
        config["generatorModel"] = "openai/o3"
    else:
        config["contentToCheck"] = content
    return config


def write_generate(store, message_id, text="Generated text about ARPANET."):
    store.save_stage(
        message_id, *STAGE_GENERATE, "openai/o3", ROLE_GENERATOR, text,
        {"contentSource": "generated", "inputQuestion": "q?", "contentLength": len(text),
         "wordCount": len(text.split()), "fallbackToQuestion": False},
        7200,
    )  # fmt: skip


def write_extract(store, message_id, claims=CLAIMS):
    store.save_stage(
        message_id, *STAGE_EXTRACT, "anthropic/claude-opus-4-6", ROLE_EXTRACTOR, "CLAIM 1: ...",
        {"claims": [c.to_json() for c in claims], "totalClaims": len(claims),
         "typeBreakdown": {"DATE": 2, "ATTRIBUTION": 1} if claims else {},
         "contentTruncated": False, "analyzedContent": "text"},
        9400,
    )  # fmt: skip


def write_verify(store, message_id, index):
    verifications = checker_verifications(index)
    summary = VerdictSummary.count(v.verdict for v in verifications)
    store.save_stage(
        message_id, *verify_stage(index), CHECKERS[index], ROLE_CHECKER, f"VERIFICATION ... {index}",
        {"verifications": [v.to_json() for v in verifications], "summary": summary.to_json()},
        11000 + index,
    )  # fmt: skip


def write_report(store, message_id, fallback=False, score=78):
    store.save_stage(
        message_id, *STAGE_REPORT, "anthropic/claude-opus-4-6", ROLE_REPORTER, "# Fact-Check Report",
        {"reliabilityScore": score, "verified": 1, "disputed": 2, "unverifiable": 0, "totalClaims": 3,
         "checkerCount": 3, "averageAgreementRate": 77.8, "fallback": fallback},
        14100,
    )  # fmt: skip


def write_full_run(store, message_id, source="generated"):
    store.create_message(
        message_id, "conv-1", "What about the Internet?", request_config(source, "User text."), tenant_id=TENANT
    )
    if source == "generated":
        write_generate(store, message_id)
    write_extract(store, message_id)
    for index in range(len(CHECKERS)):
        write_verify(store, message_id, index)
    write_report(store, message_id)


# --- migrations ---------------------------------------------------------------------------------------


def test_migrations_apply_and_reapply(empty_database_url):
    upgrade_database(empty_database_url)
    upgrade_database(empty_database_url)  # every gateway start runs it again
    engine = create_engine(empty_database_url)
    try:
        schema = inspect(engine)
        assert {"messages", "deliberation_stages", "kb_documents", "kb_passages", "alembic_version"} <= set(
            schema.get_table_names()
        )
        assert {c["name"] for c in schema.get_columns("deliberation_stages")} == SPEC_COLUMNS
        indexes = {i["name"]: i["column_names"] for i in schema.get_indexes("deliberation_stages")}
        assert indexes["idx_deliberation_stages_message"] == ["message_id", "stage_order"]
        uniques = [u["column_names"] for u in schema.get_unique_constraints("deliberation_stages")]
        assert ["message_id", "stage_type"] in uniques
        message_indexes = {i["name"]: i["column_names"] for i in schema.get_indexes("messages")}
        assert message_indexes["idx_messages_tenant_created_id"] == ["tenant_id", "created_at", "id"]
        with engine.connect() as connection:
            assert connection.scalar(text("SELECT version_num FROM alembic_version")) == HEAD_REVISION
    finally:
        engine.dispose()


HEAD_REVISION = ScriptDirectory.from_config(alembic_config()).get_current_head()

UPGRADE_AFTER_GO = """
import sys
from factcheck_gateway.store import upgrade_database
print("ready", flush=True)
sys.stdin.readline()
upgrade_database(sys.argv[1])
"""


def test_concurrent_upgrades_do_not_collide(empty_database_url):
    """Several gateways starting at once (separate processes, as in production) all succeed."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", UPGRADE_AFTER_GO, empty_database_url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for _ in range(4)
    ]
    try:
        for p in procs:  # wait until all have paid their import time, then start them together
            assert p.stdout is not None and p.stdout.readline() == "ready\n"
        for p in procs:
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        errors = [p.communicate(timeout=60)[1] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [err for p, err in zip(procs, errors) if p.returncode != 0] == []


def test_models_match_migrations(database_url):
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"include_name": include_in_schema_comparison})
            diff = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert diff == []


@postgres_only()
def test_postgres_column_types(database_url, store):
    query = text(
        "SELECT table_name || '.' || column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = current_schema()"
    )
    with store.engine.connect() as connection:
        types = dict(connection.execute(query).all())
    assert types["deliberation_stages.parsed_data"] == "jsonb"
    assert types["messages.request_config"] == "jsonb"
    assert types["deliberation_stages.created_at"] == "timestamp with time zone"
    assert types["messages.updated_at"] == "timestamp with time zone"


def test_default_relative_sqlite_url(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    upgrade_database("sqlite:///factcheck.db")
    store = StageStore("sqlite:///factcheck.db")
    try:
        store.create_message("m", "c", "q", {}, tenant_id=TENANT)
        assert store.get_message("m", tenant_id=TENANT) is not None
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000
    finally:
        store.close()
    assert (tmp_path / "factcheck.db").exists()


# --- stage names --------------------------------------------------------------------------------------


def test_stage_names_and_orders():
    assert (STAGE_GENERATE, STAGE_EXTRACT, STAGE_REPORT) == (("generate", 0), ("extract", 1), ("report", 99))
    assert [verify_stage(i) for i in range(4)] == [
        ("verify_0", 10),
        ("verify_1", 11),
        ("verify_2", 12),
        ("verify_3", 13),
    ]
    with pytest.raises(ValueError):
        verify_stage(-1)


# --- rows ---------------------------------------------------------------------------------------------


def test_rows_have_the_spec_columns_and_orders(store):
    write_full_run(store, "msg-1")
    with store.engine.connect() as connection:
        result = connection.execute(text("SELECT * FROM deliberation_stages ORDER BY stage_order"))
        assert set(result.keys()) == SPEC_COLUMNS
        rows = [row._mapping for row in result]
    assert [(r["stage_type"], r["stage_order"], r["role"], r["model"]) for r in rows] == [
        ("generate", 0, "generator", "openai/o3"),
        ("extract", 1, "extractor", "anthropic/claude-opus-4-6"),
        ("verify_0", 10, "checker", CHECKERS[0]),
        ("verify_1", 11, "checker", CHECKERS[1]),
        ("verify_2", 12, "checker", CHECKERS[2]),
        ("report", 99, "reporter", "anthropic/claude-opus-4-6"),
    ]
    assert all(r["message_id"] == "msg-1" and len(r["id"]) == 36 for r in rows)
    stages = store.get_stages("msg-1")
    assert stages[1].parsed_data["claims"][0] == CLAIMS[0].to_json()
    assert stages[5].response_time_ms == 14100
    assert all(s.created_at.tzinfo is UTC for s in stages)


def test_save_stage_is_idempotent(store):
    store.create_message("m", "c", "q", {}, tenant_id=TENANT)
    first = store.save_stage("m", *STAGE_EXTRACT, "x", ROLE_EXTRACTOR, "one", {"n": 1}, 5)
    second = store.save_stage("m", *STAGE_EXTRACT, "x", ROLE_EXTRACTOR, "two", {"n": 2}, 6)
    assert first == second
    (stage,) = store.get_stages("m")
    assert (stage.id, stage.content, stage.parsed_data) == (first, "one", {"n": 1})


def test_save_stage_survives_losing_an_insert_race(store, monkeypatch):
    store.create_message("m", "c", "q", {}, tenant_id=TENANT)
    winner = store.save_stage("m", *STAGE_REPORT, "x", ROLE_REPORTER, "report", {}, 5)
    real_lookup = store._stage_id
    calls = []

    def lookup_misses_once(*args):  # the row appears between our check and our insert
        calls.append(args)
        return None if len(calls) == 1 else real_lookup(*args)

    monkeypatch.setattr(store, "_stage_id", lookup_misses_once)
    assert store.save_stage("m", *STAGE_REPORT, "x", ROLE_REPORTER, "again", {}, 6) == winner
    assert len(calls) == 2
    assert len(store.get_stages("m")) == 1


def test_save_stage_for_an_unknown_message_fails(store):
    with pytest.raises(IntegrityError):
        store.save_stage("nope", *STAGE_EXTRACT, "x", ROLE_EXTRACTOR, "", {}, 0)


def test_get_stages_orders_by_stage_order(store):
    store.create_message("m", "c", "q", request_config("generated"), tenant_id=TENANT)
    write_report(store, "m")
    write_verify(store, "m", 1)
    write_extract(store, "m")
    write_verify(store, "m", 0)
    write_generate(store, "m")
    assert [s.stage_type for s in store.get_stages("m")] == ["generate", "extract", "verify_0", "verify_1", "report"]
    assert store.get_stages("other") == []


# --- messages -----------------------------------------------------------------------------------------


def test_create_and_get_message(store):
    before = datetime.now(UTC)
    store.create_message("m", "c", "Why?", {"checkerModels": ["a", "b"]}, tenant_id=TENANT)
    record = store.get_message("m", tenant_id=TENANT)
    assert (record.id, record.conversation_id, record.question, record.status, record.title) == (
        "m", "c", "Why?", "RUNNING", None
    )  # fmt: skip
    assert record.request_config == {"checkerModels": ["a", "b"]}
    assert record.created_at.tzinfo is UTC and before <= record.created_at <= datetime.now(UTC)
    assert store.get_message("missing", tenant_id=TENANT) is None
    with pytest.raises(ValueError, match="already exists"):
        store.create_message("m", "c", "Why?", {}, tenant_id=TENANT)


def test_status_and_title_updates(store):
    store.create_message("m", "c", "q", {}, tenant_id=TENANT)
    created = store.get_message("m", tenant_id=TENANT)
    store.set_status("m", "COMPLETE")
    store.set_title("m", "Internet history")
    record = store.get_message("m", tenant_id=TENANT)
    assert (record.status, record.title) == ("COMPLETE", "Internet history")
    assert record.created_at == created.created_at and record.updated_at > created.updated_at
    with pytest.raises(ValueError, match="unknown status"):
        store.set_status("m", "DONE")
    with pytest.raises(LookupError):
        store.set_title("missing", "x")


def test_list_messages_pages_newest_first(store, monkeypatch):
    start = datetime(2026, 2, 9, 12, 0, tzinfo=UTC)
    # Three messages share one timestamp, so paging must also order by id.
    times = [start, start + timedelta(seconds=1), start + timedelta(seconds=1), start + timedelta(seconds=1),
             start + timedelta(seconds=2), start + timedelta(microseconds=3_000_001), start + timedelta(days=1)]  # fmt: skip
    for n, moment in enumerate(times):
        monkeypatch.setattr(store_module, "utc_now", lambda moment=moment: moment)
        store.create_message(f"m{n}", "c", f"q{n}", {}, tenant_id=TENANT)
    expected = sorted((f"m{n}" for n in range(len(times))), key=lambda m: (times[int(m[1:])], m), reverse=True)

    seen, token, pages = [], None, 0
    while True:
        records, token = store.list_messages(3, token, tenant_id=TENANT)
        seen += [r.id for r in records]
        pages += 1
        if token is None:
            break
        assert token.replace("-", "").replace("_", "").isalnum()  # url-safe
    assert seen == expected
    assert pages == 3
    assert store.list_messages(100, None, tenant_id=TENANT) == (
        store.list_messages(100, None, tenant_id=TENANT)[0],
        None,
    )


def test_list_messages_on_an_exact_page_boundary(store):
    for n in range(2):
        store.create_message(f"m{n}", "c", "q", {}, tenant_id=TENANT)
    records, token = store.list_messages(2, None, tenant_id=TENANT)
    assert len(records) == 2 and token is None
    assert store.list_messages(5, None, tenant_id=TENANT)[0][0].id == "m1"


@pytest.mark.parametrize(
    "token",
    [
        "not a token!",
        base64.urlsafe_b64encode(b"not json").decode(),
        base64.urlsafe_b64encode(b'{"a": 1}').decode(),
        base64.urlsafe_b64encode(b'["2026-02-09T12:00:00", "m"]').decode(),  # naive time
        base64.urlsafe_b64encode(b'["yesterday", "m"]').decode(),
        base64.urlsafe_b64encode(b'["2026-02-09T12:00:00+00:00", 5]').decode(),
    ],
)
def test_list_messages_rejects_a_bad_token(store, token):
    with pytest.raises(ValueError, match="page_token is not valid for this listing"):
        store.list_messages(10, token, tenant_id=TENANT)


def test_list_messages_rejects_a_bad_page_size(store):
    with pytest.raises(ValueError, match="page_size"):
        store.list_messages(0, None, tenant_id=TENANT)


# --- loadFactCheckResult ------------------------------------------------------------------------------


def test_load_generated_run(store):
    write_full_run(store, "msg-1", source="generated")
    store.set_title("msg-1", "Internet history")
    store.set_status("msg-1", "COMPLETE")
    result = load_result(store, "msg-1", TENANT)
    assert result is not None
    record = store.get_message("msg-1", tenant_id=TENANT)

    assert (result.message_id, result.conversation_id, result.question) == (
        "msg-1",
        "conv-1",
        "What about the Internet?",
    )
    assert (result.status, result.title) == (factcheck_pb2.MESSAGE_STATUS_COMPLETE, "Internet history")
    assert result.created_at.ToDatetime(tzinfo=UTC) == record.created_at
    assert result.updated_at.ToDatetime(tzinfo=UTC) == record.updated_at

    content = result.content
    assert (content.source, content.model, content.text, content.response_time_ms) == (
        factcheck_pb2.CONTENT_SOURCE_GENERATED, "openai/o3", "Generated text about ARPANET.", 7200
    )  # fmt: skip

    assert [ExtractedClaim.from_proto(c) for c in result.extraction.claims] == CLAIMS
    assert dict(result.extraction.type_breakdown) == {"DATE": 2, "ATTRIBUTION": 1}
    assert (result.extraction.model, result.extraction.response_time_ms) == ("anthropic/claude-opus-4-6", 9400)

    checkers = result.verification.checkers
    assert [c.model for c in checkers] == CHECKERS
    assert [c.response_time_ms for c in checkers] == [11000, 11001, 11002]
    assert [ClaimVerification.from_proto(v) for v in checkers[1].verifications] == checker_verifications(1)
    assert VerdictSummary.from_proto(checkers[1].summary) == VerdictSummary(verified=1, disputed=2)

    report = result.report
    assert (report.model, report.reliability_score, report.report_text, report.response_time_ms) == (
        "anthropic/claude-opus-4-6", 78, "# Fact-Check Report", 14100
    )  # fmt: skip
    assert VerdictSummary.from_proto(report.summary) == VerdictSummary(1, 2, 0)
    assert report.fallback is False


def test_load_recomputes_consensus(store):
    write_full_run(store, "msg-1")
    result = load_result(store, "msg-1", TENANT)
    assert result is not None
    consensus = result.verification.consensus
    expected = calculate_consensus(CLAIMS, [checker_verifications(i) for i in range(3)])
    assert list(consensus) == [c.to_proto() for c in expected]
    assert [(c.consensus_verdict, round(c.agreement_rate, 2)) for c in expected] == [
        ("VERIFIED", 100.0),
        ("VERIFIED", 66.67),
        ("DISPUTED", 66.67),
    ]
    assert expected[2].correction == FIX
    assert expected[2].verdicts[2].evidence == "Checker did not address this claim"


def test_load_user_provided_run(store):
    write_full_run(store, "msg-2", source="user_provided")
    result = load_result(store, "msg-2", TENANT)
    assert result is not None
    assert result.content.source == factcheck_pb2.CONTENT_SOURCE_USER_PROVIDED
    assert result.content.text == "User text."
    assert not result.content.HasField("model") and not result.content.HasField("response_time_ms")
    assert len(result.verification.consensus) == 3


def test_load_with_missing_stages(store):
    store.create_message("m", "c", "q", request_config("generated"), tenant_id=TENANT)
    result = load_result(store, "m", TENANT)
    assert result is not None
    assert result.status == factcheck_pb2.MESSAGE_STATUS_RUNNING
    assert not result.HasField("title")
    assert (result.content.source, result.content.text) == (factcheck_pb2.CONTENT_SOURCE_GENERATED, "")
    assert not result.content.HasField("model")
    assert (result.extraction.model, result.extraction.response_time_ms, len(result.extraction.claims)) == (
        "unknown", 0, 0
    )  # fmt: skip
    assert list(result.verification.checkers) == [] and list(result.verification.consensus) == []
    assert (result.report.model, result.report.report_text, result.report.response_time_ms) == ("unknown", "", 0)
    assert not result.report.HasField("reliability_score")
    assert load_result(store, "missing", TENANT) is None


def test_load_failed_run_without_checkers(store):
    """All checkers failed: claims are stored, consensus falls back to UNVERIFIABLE per claim."""
    store.create_message("m", "c", "q", request_config("user_provided", "Text."), tenant_id=TENANT)
    write_extract(store, "m")
    store.set_status("m", "FAILED")
    result = load_result(store, "m", TENANT)
    assert result is not None
    assert result.status == factcheck_pb2.MESSAGE_STATUS_FAILED
    assert [c.consensus_verdict for c in result.verification.consensus] == [common_pb2.VERDICT_UNVERIFIABLE] * 3


def test_load_no_claims_and_fallback_report(store):
    store.create_message("m", "c", "q", request_config("user_provided", "Just opinions."), tenant_id=TENANT)
    write_extract(store, "m", claims=[])
    write_report(store, "m", fallback=True, score=None)
    result = load_result(store, "m", TENANT)
    assert result is not None
    assert len(result.extraction.claims) == 0 and len(result.verification.consensus) == 0
    assert not result.report.HasField("reliability_score")
    assert result.report.fallback is True


def test_message_summary(store):
    store.create_message("m", "c", "q", {}, tenant_id=TENANT)
    store.set_title("m", "T")
    record = store.get_message("m", tenant_id=TENANT)
    summary = message_summary(record)
    assert (summary.message_id, summary.conversation_id, summary.question, summary.title) == ("m", "c", "q", "T")
    assert summary.status == factcheck_pb2.MESSAGE_STATUS_RUNNING
    assert summary.created_at.ToDatetime(tzinfo=UTC) == record.created_at
    store.create_message("n", "c", "q", {}, tenant_id=TENANT)
    assert not message_summary(store.get_message("n", tenant_id=TENANT)).HasField("title")


def test_nul_characters_in_content_and_parsed_data_are_stored(store):
    store.create_message("m-nul", "c", "question\x00", {"contentToCheck": "a\x00b"}, tenant_id=TENANT)
    store.save_stage("m-nul", "extract", 1, "fake/x", "extractor", "raw\x00text", {"claims": [{"claim": "x\x00"}]}, 5)
    [row] = store.get_stages("m-nul")
    assert row.content == "raw\ufffdtext" and row.parsed_data == {"claims": [{"claim": "x\ufffd"}]}
    assert store.get_message("m-nul", tenant_id=TENANT).request_config == {"contentToCheck": "a\ufffdb"}
