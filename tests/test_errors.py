"""Errors in one place: domain errors become structured statuses in one interceptor.

Regression tests for the issue's examples: undecodable requests (UNAUTHENTICATED first),
messages that echoed the whole input, bad page tokens, NUL bytes in ids on PostgreSQL, a
status message that could not be encoded, unexpected exceptions, model-id validation.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
import unicodedata
from typing import Any, cast

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from hypothesis import given
from hypothesis import strategies as st

from factcheck.kit.errors import (
    DOMAIN,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    Reason,
    ResourceExhausted,
    ServiceError,
    Unavailable,
    error_info_of,
)
from factcheck.kit.rpc import is_model_id
from factcheck.kit.settings import Settings
from factcheck.models.errors import (
    ModelMalformedResponseError,
    ModelNotConfiguredError,
    ModelProviderError,
    ModelRateLimitedError,
    ModelTimeoutError,
)
from factcheck.serving.error_interceptor import from_model_error
from factcheck.serving.server import new_server
from factcheck.text.text_safety import excerpt, has_unsafe_characters
from factcheck.v1 import (
    council_pb2,
    extractor_pb2,
    extractor_pb2_grpc,
    factcheck_pb2,
    factcheck_pb2_grpc,
    knowledge_pb2,
    knowledge_pb2_grpc,
    reporter_pb2,
    reporter_pb2_grpc,
)
from factcheck_gateway.runs.database_calls import call_store
from tests.conftest import content_request
from tests.fake_model_server import FakeModelServer, fail
from tests.inprocess import inprocess_settings, serve_everything

TOKEN = "errors-test-token-0123456789abcdef"
LONG_ID = "m" * 20_000


def details_of(error: grpc.aio.AioRpcError) -> dict[str, Any]:
    """The unpacked google.rpc details of a failed call, by type name."""
    status = rpc_status.from_call(cast(grpc.Call, error))  # (an AioRpcError has what from_call reads)
    assert status is not None, "no google.rpc.Status in the trailers"
    unpacked = {}
    for detail in status.details:
        message = getattr(error_details_pb2, detail.TypeName().rsplit(".", 1)[1])()
        detail.Unpack(message)
        unpacked[detail.TypeName()] = message
    return unpacked


async def failure(call) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        if hasattr(call, "__aiter__"):  # a streamed call: read it to its end
            [_ async for _ in call]
        else:
            await call
    return raised.value


def assert_bounded(error: grpc.aio.AioRpcError, bulk: str = "") -> None:
    details = error.details() or ""
    assert len(details.encode()) < 1024, details
    if bulk:
        assert bulk[:100] not in details


# --- the pieces ---------------------------------------------------------------------------------------


@given(st.text(), st.integers(min_value=1, max_value=300))
def test_an_excerpt_is_one_bounded_printable_line(text, limit):
    quoted = excerpt(text, limit)
    assert len(quoted) <= limit
    assert len(quoted.splitlines()) <= 1 and not has_unsafe_characters(quoted)
    assert not any(unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp") for char in quoted)
    quoted.encode("utf-8")  # no lone surrogate
    if len(text) <= limit and text.isprintable():
        assert quoted == text


def test_an_excerpt_escapes_what_could_forge_a_line_and_cuts_long_input():
    assert excerpt("ext/a\n2026-01-01 FORGED") == "ext/a\\n2026-01-01 FORGED"
    assert excerpt("ok \ud800 \x00 \u2028 \u202e") == "ok \\ud800 \\x00 \\u2028 \\u202e"
    assert excerpt("x" * 20_000, 10) == "x" * 9 + "…"
    assert excerpt("\n" * 50, 10) == "\\n" * 4 + "…"


def test_statuses_carry_error_info_bad_request_retry_info_and_resource_info():
    invalid = InvalidArgument("question is required", field="question").to_status_proto()
    assert invalid.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    info, bad_request = error_details_pb2.ErrorInfo(), error_details_pb2.BadRequest()
    assert invalid.details[0].Unpack(info) and invalid.details[1].Unpack(bad_request)
    assert (info.reason, info.domain) == ("INVALID_REQUEST", DOMAIN)
    assert [(v.field, v.description) for v in bad_request.field_violations] == [("question", "question is required")]

    busy = ResourceExhausted("busy", reason=Reason.RUN_LIMIT_REACHED, retry_after_s=2.5).to_status_proto()
    retry = error_details_pb2.RetryInfo()
    assert busy.details[1].Unpack(retry) and retry.retry_delay.ToMilliseconds() == 2500

    missing = NotFound("no such result", resource_type="factcheck.v1.FactCheckResult", resource_name=LONG_ID)
    resource = error_details_pb2.ResourceInfo()
    assert missing.to_status_proto().details[1].Unpack(resource)
    assert len(resource.resource_name) <= 100

    # Every message is sanitised and bounded, whatever it was built from.
    status = ServiceError("bad \ud83d\n" + "y" * 5000).to_status()
    assert len(status.details) <= 600 and "\n" not in status.details
    status.details.encode("utf-8")


@pytest.mark.parametrize(
    "error, code, reason",
    [
        (ModelTimeoutError("a/b", "timed out"), grpc.StatusCode.DEADLINE_EXCEEDED, "MODEL_TIMEOUT"),
        (
            ModelRateLimitedError("a/b", "429", retry_after_s=3),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "MODEL_RATE_LIMITED",
        ),
        (ModelNotConfiguredError("a/b", "no endpoint"), grpc.StatusCode.FAILED_PRECONDITION, "MODEL_NOT_CONFIGURED"),
        (ModelMalformedResponseError("a/b", "not json"), grpc.StatusCode.UNAVAILABLE, "MODEL_BAD_RESPONSE"),
        (ModelProviderError("a/b", "HTTP 500", status_code=500), grpc.StatusCode.UNAVAILABLE, "MODEL_UNAVAILABLE"),
        (ModelProviderError("a/b", "refused"), grpc.StatusCode.UNAVAILABLE, "MODEL_UNAVAILABLE"),
    ],
)
def test_model_errors_map_to_statuses_in_one_place(error, code, reason):
    mapped = from_model_error(error)
    assert (mapped.code, mapped.reason, mapped.metadata["model"]) == (code, reason, "a/b")
    assert mapped.message.startswith("model a/b: ")
    if isinstance(error, ModelRateLimitedError):
        assert mapped.retry_after_s == 3


@pytest.mark.parametrize(
    "model",
    [
        "ext/a\n2026-01-01 00:00:00,000 ERROR factcheck: FORGED LOG LINE",
        "a/b\x00",
        "a/b\u2028c",
        "a/b\u202e",
        "a/b\ud800",
        "a/b c",
        "a/" + "b" * 300,
        "/b",
        "a/",
        "ab",
    ],
)
def test_model_ids_with_control_characters_or_spaces_are_refused(model):
    assert not is_model_id(model)


def test_model_ids_like_provider_names_are_accepted():
    for model in ("openai/gpt-4o", "local/checker", "ollama/llama3:8b", "anthropic/claude-3.5@2024"):
        assert is_model_id(model)


async def test_only_a_database_outage_is_unavailable(tmp_path):
    from sqlalchemy import create_engine, text

    engine = create_engine(f"sqlite:///{tmp_path / 'missing' / 'db.sqlite'}")

    def query() -> None:
        with engine.connect() as connection:
            connection.execute(text("select 1"))

    with pytest.raises(Unavailable) as outage:
        await call_store("The store is unavailable.", query)
    assert outage.value.reason == "DATABASE_UNAVAILABLE" and outage.value.retry_after_s

    def bug() -> None:
        raise RuntimeError("a bug, not an outage")

    with pytest.raises(RuntimeError):
        await call_store("The store is unavailable.", bug)


class _Rollback(Exception):
    sqlstate = "40P01"  # deadlock detected


async def test_a_lost_race_is_retried_then_aborted_not_unavailable():
    from sqlalchemy.exc import IntegrityError, OperationalError

    from factcheck.kit.errors import Aborted

    attempts = []

    def races_once() -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise IntegrityError("INSERT", {}, Exception("duplicate key value violates unique constraint"))
        return "stored"

    assert await call_store("unavailable", races_once) == "stored"

    def deadlocks() -> None:
        raise OperationalError("DELETE", {}, _Rollback("deadlock detected"))

    with pytest.raises(Aborted) as aborted:
        await call_store("unavailable", deadlocks)
    assert aborted.value.reason == "CONCURRENT_UPDATE" and aborted.value.code == grpc.StatusCode.ABORTED


# --- every service in one process, on each database -------------------------------------------------------


@pytest.fixture(scope="module")
def fake_models():
    with FakeModelServer() as server:
        yield server


@pytest.fixture
async def everything(fake_models, database_url):
    fake_models.reset()
    async with serve_everything(inprocess_settings(fake_models.base_url, database_url)) as running:
        async with grpc.aio.insecure_channel(running.target) as channel:
            yield channel


def raw_unary(channel: grpc.aio.Channel, method: str):
    return channel.unary_unary(method)


async def test_the_issues_undecodable_get_result_is_invalid_argument_without_a_traceback(everything, caplog):
    caplog.set_level(logging.INFO)
    call = raw_unary(everything, "/factcheck.v1.FactCheckService/GetResult")
    error = await failure(call(bytes.fromhex("0a02c328"), timeout=10))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == "The request could not be decoded as factcheck.v1.GetResultRequest"
    assert details_of(error)["google.rpc.ErrorInfo"].reason == "REQUEST_UNDECODABLE"
    assert not any(record.exc_info or "Traceback" in record.getMessage() for record in caplog.records)


async def test_a_long_message_id_is_not_echoed(everything):
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(everything)
    error = await failure(gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=LONG_ID), timeout=10))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_bounded(error, LONG_ID)
    assert details_of(error)["google.rpc.BadRequest"].field_violations[0].field == "message_id"

    missing = "n" * 200
    error = await failure(gateway.GetResult(factcheck_pb2.GetResultRequest(message_id=missing), timeout=10))
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert error.details() == f"No fact-check with message_id '{excerpt(missing)}'"
    assert details_of(error)["google.rpc.ErrorInfo"].reason == "RESULT_NOT_FOUND"


async def test_a_long_document_id_is_not_echoed(everything):
    knowledge = knowledge_pb2_grpc.KnowledgeServiceStub(everything)
    error = await failure(
        knowledge.DeleteDocument(knowledge_pb2.DeleteDocumentRequest(document_id=LONG_ID), timeout=10)
    )
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_bounded(error, LONG_ID)
    error = await failure(knowledge.DeleteDocument(knowledge_pb2.DeleteDocumentRequest(document_id="d" * 250)))
    assert error.code() == grpc.StatusCode.NOT_FOUND
    assert_bounded(error, "d" * 250)
    assert details_of(error)["google.rpc.ErrorInfo"].reason == "DOCUMENT_NOT_FOUND"


async def test_a_long_model_id_is_not_echoed(everything):
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(everything)
    model = "p/" + "q" * 20_000
    error = await failure(gateway.Run(content_request(extractor_model=model), timeout=10))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_bounded(error, model[2:])
    violation = details_of(error)["google.rpc.BadRequest"].field_violations[0]
    assert violation.field == "mode_config.extractor_model"

    extractor = extractor_pb2_grpc.ExtractorServiceStub(everything)
    error = await failure(extractor.Extract(extractor_pb2.ExtractRequest(model=model, content="x"), timeout=10))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert_bounded(error, model[2:])


def _token(payload: bytes) -> str:
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


BAD_PAGE_TOKENS = {
    "far-future": _token(json.dumps(["9999-12-31T23:59:59-23:00", "x"]).encode()),
    "far-past": _token(json.dumps(["0001-01-01T00:00:00+05:00", "x"]).encode()),
    "nested": _token(b"[" * 100_000),
    "nul-id": _token(json.dumps(["2025-01-01T00:00:00+00:00", "a\x00b"]).encode()),
    "naive": _token(json.dumps(["2025-01-01T00:00:00", "x"]).encode()),
    "not-base64": "%%%",
    "huge": "A" * 100_000,
}


@pytest.mark.parametrize("token", BAD_PAGE_TOKENS.values(), ids=BAD_PAGE_TOKENS.keys())
async def test_a_bad_page_token_is_invalid_argument_not_unavailable(everything, token):
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(everything)
    knowledge = knowledge_pb2_grpc.KnowledgeServiceStub(everything)
    for call in (
        gateway.ListResults(factcheck_pb2.ListResultsRequest(page_token=token), timeout=10),
        knowledge.ListDocuments(knowledge_pb2.ListDocumentsRequest(page_token=token), timeout=10),
    ):
        error = await failure(call)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
        assert details_of(error)["google.rpc.ErrorInfo"].reason == "INVALID_PAGE_TOKEN"
        assert_bounded(error, token)


async def test_nul_characters_are_refused_before_the_database_sees_them(everything):
    """On PostgreSQL a NUL in a text value failed the query, which was reported as UNAVAILABLE."""
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(everything)
    knowledge = knowledge_pb2_grpc.KnowledgeServiceStub(everything)
    calls = {
        "message_id": gateway.GetResult(factcheck_pb2.GetResultRequest(message_id="a\x00b"), timeout=10),
        "document_id": knowledge.DeleteDocument(knowledge_pb2.DeleteDocumentRequest(document_id="a\x00b")),
        "question": gateway.Run(content_request(question="q\x00"), timeout=10),
        "conversation_id": gateway.Run(
            factcheck_pb2.RunRequest(
                question="q",
                mode=factcheck_pb2.MODE_FACT_CHECK,
                conversation_id="c\x00",
                mode_config=factcheck_pb2.FactCheckConfig(content_to_check="Water boils at 100 C."),
            ),
            timeout=10,
        ),
        "mode_config.content_to_check": gateway.Run(content_request("Water\x00 boils."), timeout=10),
        "documents[0].text": knowledge.AddDocuments(
            knowledge_pb2.AddDocumentsRequest(documents=[{"id": "d", "text": "Water\x00 boils."}]), timeout=10
        ),
        "documents[0].id": knowledge.AddDocuments(
            knowledge_pb2.AddDocumentsRequest(documents=[{"id": "d\x00", "text": "Water boils."}]), timeout=10
        ),
    }
    for field, call in calls.items():
        error = await failure(call)
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (field, error.details())
        assert details_of(error)["google.rpc.BadRequest"].field_violations[0].field == field


async def test_health_watch_streams_on_a_server_with_every_interceptor(everything):
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    # types-grpcio-health-checking's HealthStub leaves out the methods it sets in __init__.
    stub = health_pb2_grpc.HealthStub(everything)
    call = stub.Watch(health_pb2.HealthCheckRequest(service=""), timeout=10)  # type: ignore[attr-defined]
    first = await call.read()
    assert first.status == health_pb2.HealthCheckResponse.SERVING
    call.cancel()


# --- authentication first, decoding second --------------------------------------------------------------


@pytest.fixture
async def authenticated(fake_models, tmp_path):
    settings = inprocess_settings(fake_models.base_url, f"sqlite:///{tmp_path / 'auth.db'}", auth_tokens=[TOKEN])
    async with serve_everything(settings, authenticate=True) as running:
        async with grpc.aio.insecure_channel(running.target) as channel:
            yield channel


GATEWAY_METHODS = [
    "/factcheck.v1.FactCheckService/Run",
    "/factcheck.v1.FactCheckService/GetResult",
    "/factcheck.v1.FactCheckService/ListResults",
    "/factcheck.v1.KnowledgeService/AddDocuments",
    "/factcheck.v1.KnowledgeService/DeleteDocument",
    "/factcheck.v1.KnowledgeService/ListDocuments",
    "/factcheck.v1.KnowledgeService/Search",
    "/factcheck.v1.ClaimsService/ListClaims",
    "/factcheck.v1.ClaimsService/GetClaim",
    "/factcheck.v1.UsageService/GetUsage",
    "/factcheck.v1.UsageService/PurgeCache",
]
# A field whose bytes end early: undecodable as any message type.
TRUNCATED = b"\x0a\x05ab"


async def _raw_status(channel, method: str, payload: bytes, metadata=()) -> grpc.aio.AioRpcError:
    if method.endswith("/Run"):
        call = channel.unary_stream(method)(payload, metadata=metadata, timeout=10)
        return await failure(call)
    return await failure(channel.unary_unary(method)(payload, metadata=metadata, timeout=10))


@pytest.mark.parametrize("method", GATEWAY_METHODS)
async def test_unauthenticated_callers_get_unauthenticated_before_their_request_is_decoded(authenticated, method):
    for metadata in [(), (("authorization", "Bearer wrong-token"),)]:
        error = await _raw_status(authenticated, method, TRUNCATED, metadata)
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED
        assert details_of(error)["google.rpc.ErrorInfo"].reason == "MISSING_OR_INVALID_TOKEN"
    error = await _raw_status(authenticated, method, TRUNCATED, (("authorization", f"Bearer {TOKEN}"),))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (error.details() or "").startswith("The request could not be decoded as factcheck.v1.")


async def test_undecodable_requests_are_invalid_argument_on_every_method_of_every_service(authenticated, caplog):
    caplog.set_level(logging.INFO)
    from google.protobuf import descriptor_pool

    pool = descriptor_pool.Default()
    auth = (("authorization", f"Bearer {TOKEN}"),)
    tried = 0
    for service_name in (
        "factcheck.v1.FactCheckService",
        "factcheck.v1.KnowledgeService",
        "factcheck.v1.ClaimsService",
        "factcheck.v1.UsageService",
        "factcheck.v1.ExtractorService",
        "factcheck.v1.CheckerService",
        "factcheck.v1.ReporterService",
        "grpc.health.v1.Health",
    ):
        for method in pool.FindServiceByName(service_name).methods:
            path = f"/{service_name}/{method.name}"
            if method.server_streaming:
                call = authenticated.unary_stream(path)(TRUNCATED, metadata=auth, timeout=10)
            else:
                call = authenticated.unary_unary(path)(TRUNCATED, metadata=auth, timeout=10)
            error = await failure(call)
            assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, path
            assert error.details() == f"The request could not be decoded as {method.input_type.full_name}"
            tried += 1
    assert tried >= 13
    assert not any(record.exc_info for record in caplog.records)
    assert not any(record.levelno >= logging.ERROR for record in caplog.records)


async def test_invalid_utf8_in_a_string_field_is_invalid_argument(authenticated):
    valid = extractor_pb2.ExtractRequest(model="fake/extractor", content="abc").SerializeToString()
    broken = valid.replace(b"abc", b"a\xc3\x28")
    auth = (("authorization", f"Bearer {TOKEN}"),)
    error = await _raw_status(authenticated, "/factcheck.v1.ExtractorService/Extract", broken, auth)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.details() == "The request could not be decoded as factcheck.v1.ExtractRequest"


# --- unexpected exceptions and messages that cannot be encoded ------------------------------------------


class _BuggyReporter(reporter_pb2_grpc.ReporterServiceServicer):
    async def Title(self, request, context):
        raise RuntimeError("injected bug")

    async def Report(self, request, context):
        # A status message with a lone surrogate: grpc marks the call aborted, then fails to encode it.
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "model overloaded \ud83d")


@pytest.fixture
async def buggy():
    server = new_server(Settings())
    reporter_pb2_grpc.add_ReporterServiceServicer_to_server(_BuggyReporter(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield reporter_pb2_grpc.ReporterServiceStub(channel)
    await server.stop(None)


async def test_an_unexpected_exception_is_internal_with_an_error_id_in_the_one_log_line(buggy, caplog):
    caplog.set_level(logging.INFO)
    error = await failure(buggy.Title(reporter_pb2.TitleRequest(model="a/b", question="q"), timeout=10))
    assert error.code() == grpc.StatusCode.INTERNAL
    info = details_of(error)["google.rpc.ErrorInfo"]
    error_id = info.metadata["error_id"]
    assert info.reason == "INTERNAL_ERROR" and len(error_id) == 8 and error_id in (error.details() or "")
    assert "injected bug" not in (error.details() or "")
    [logged] = [record for record in caplog.records if error_id in record.getMessage()]
    assert logged.levelno == logging.ERROR and logged.exc_info is not None
    assert not [record for record in caplog.records if "Unexpected" in record.getMessage()]  # grpc's own UNKNOWN


async def test_a_method_the_servicer_does_not_implement_is_unimplemented_not_internal(buggy, caplog):
    """The generated servicer's default raises NotImplementedError: that is UNIMPLEMENTED, with no traceback."""
    caplog.set_level(logging.INFO)
    error = await failure(buggy.Synthesize(council_pb2.SynthesizeRequest(model="a/b", question="q"), timeout=10))
    assert error.code() == grpc.StatusCode.UNIMPLEMENTED
    assert details_of(error)["google.rpc.ErrorInfo"].reason == "METHOD_NOT_IMPLEMENTED"
    assert "ReporterService/Synthesize" in (error.details() or "")
    assert not [record for record in caplog.records if record.levelno >= logging.ERROR or record.exc_info]


async def test_a_status_message_that_cannot_be_encoded_never_hangs_the_call(buggy):
    started = time.monotonic()
    error = await failure(buggy.Report(reporter_pb2.ReportRequest(model="a/b"), timeout=20))
    assert time.monotonic() - started < 10
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert error.details() == "model overloaded \\ud83d"


async def test_a_provider_error_with_a_lone_surrogate_ends_the_call_with_a_status(everything, fake_models):
    """The issue's hang: HTTP 422 {"error":{"message":"model overloaded \\ud83d"}}."""
    fake_models.script("fake/overloaded", fail(422, body={"error": {"message": "model overloaded \ud83d"}}))
    extractor = extractor_pb2_grpc.ExtractorServiceStub(everything)
    started = time.monotonic()
    error = await failure(
        extractor.Extract(extractor_pb2.ExtractRequest(model="fake/overloaded", content="x"), timeout=20)
    )
    assert time.monotonic() - started < 10
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert "fake/overloaded" in (error.details() or "")
    (error.details() or "").encode("utf-8")
    info = details_of(error)["google.rpc.ErrorInfo"]
    assert (info.reason, info.metadata["http_status"]) == ("MODEL_UNAVAILABLE", "422")
    assert error_info_of(error) == info  # what the gateway reads from a failed downstream call


async def test_streams_keep_their_shape_under_the_interceptors(everything):
    """Run is an async generator behind four interceptors: its events still stream in order."""
    gateway = factcheck_pb2_grpc.FactCheckServiceStub(everything)
    events = [response.event async for response in gateway.Run(content_request(), timeout=60)]
    assert events[0].WhichOneof("event") == "factcheck_start"
    assert events[-1].WhichOneof("event") == "complete"
    await asyncio.sleep(0)


def test_failed_precondition_and_unavailable_default_reasons():
    assert FailedPrecondition("x").reason == "MODEL_NOT_CONFIGURED"
    assert Unavailable("x").reason == "DATABASE_UNAVAILABLE"
